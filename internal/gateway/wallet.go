package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Wallet messages. The lookup's errors are the API specification's texts,
// kept to the letter (clients may match them); the others are English, as
// is every message the specification does not fix (docs/api.md).
const (
	MsgLookupNeedsID    = "Informe 'payment_id', 'external_id' ou ambos para buscar a transação."
	MsgLookupMismatch   = "O 'payment_id' e o 'external_id' informados não correspondem à mesma transação."
	MsgLookupNotFound   = "Transação não encontrada."
	MsgBalanceOK        = "Balance retrieved successfully."
	MsgLookupOK         = "Transaction found."
	MsgHistoryOK        = "Transactions listed successfully."
	balanceTimeFormat   = "2006-01-02T15:04:05.000-07:00"
	defaultHistoryLimit = 50
)

// Balance is a client's wallet balance in centavos: Blocked is held by
// open MED disputes, Debt is what MED returns left it owing.
type Balance struct {
	Available pix.Amount
	Pending   pix.Amount
	Blocked   pix.Amount
	Debt      pix.Amount
}

// Balance returns client c's available and pending balances.
func (s *Service) Balance(ctx context.Context, c pix.Client) (Balance, error) {
	b, err := s.db.Balances(ctx, c.ID)
	if err != nil {
		return Balance{}, fmt.Errorf("balance: %w", err)
	}
	return Balance{Available: b[ledger.Available], Pending: b[ledger.Pending], Blocked: b[ledger.Blocked], Debt: -b[ledger.Debt]}, nil
}

// insufficientBalance is the 422 for an operation that needs need
// centavos (amount + tax) from client c's available balance, with a detail
// stating both amounts (docs/api.md, Errors). The balance is read after the
// database refused the reservation, so a credit that arrived in between can
// make it enough; the detail then says so rather than claim a shortfall.
func (s *Service) insufficientBalance(ctx context.Context, c pix.Client, need pix.Amount) error {
	e := &pix.Error{Code: pix.EInsufficientBalance, Message: "Insufficient balance"}
	b, err := s.db.Balances(ctx, c.ID)
	if err != nil {
		// The refusal stands; only its explanation is lost.
		s.Log.ErrorContext(ctx, "insufficient balance: read balance", "error", err.Error())
		e.Details = []pix.FieldIssue{{Field: "amount", Issue: fmt.Sprintf("amount + tax R$ %s exceeds the available balance", need)}}
		return e
	}
	avail := b[ledger.Available]
	issue := fmt.Sprintf("available R$ %s is less than amount + tax R$ %s", avail, need)
	if avail >= need {
		issue = fmt.Sprintf("amount + tax R$ %s exceeded the available balance when checked; available is now R$ %s", need, avail)
	}
	e.Details = []pix.FieldIssue{{Field: "amount", Issue: issue}}
	return e
}

// BalanceTimestamp formats now in America/Sao_Paulo with its numeric offset.
func BalanceTimestamp(now time.Time, loc *time.Location) string {
	return now.In(loc).Format(balanceTimeFormat)
}

// TransactionView is a transaction as lookup and history show it.
type TransactionView struct {
	PaymentID      string       `json:"payment_id"`
	ExternalID     *string      `json:"external_id"`
	Status         pix.TxStatus `json:"status"`
	Amount         pix.Amount   `json:"amount"`
	CreatedAt      string       `json:"created_at"`
	ConfirmedDate  *string      `json:"confirmed_date"`
	Type           pix.TxType   `json:"type"`
	Tax            pix.Amount   `json:"tax"`
	RefundedAmount pix.Amount   `json:"refunded_amount"`
	// PaidAmount is what the payer paid: null until a charge is paid (and
	// for payouts). It may differ from Amount when the PSP confirmed
	// another amount; AmountMismatch (charges only) then says so.
	PaidAmount     *pix.Amount `json:"paid_amount"`
	AmountMismatch *bool       `json:"amount_mismatch,omitempty"`
	// Due echoes the terms of a charge with a due date, and AmountDueToday
	// is what it costs when paid today (null once it can no longer be
	// paid); both are left out for immediate charges and payouts.
	Due            *pix.Due  `json:"due,omitempty"`
	AmountDueToday *DueToday `json:"amount_due_today,omitempty"`
	// RecurrenceID names the recurrence of a cycle's charge or of a
	// journey-3 first payment; left out for every other transaction.
	RecurrenceID string `json:"recurrence_id,omitempty"`
	// Disputes lists a charge's MED disputes in its lookup (empty when it
	// has none); left out elsewhere.
	Disputes *[]pix.DisputeSummary `json:"disputes,omitempty"`
	// EndToEndID and TxID identify the Pix that paid a charge, for
	// reconciliation with the bank statement; PayerName and PayerDocument
	// (masked) are who paid it, when the PSP reported them. All null until
	// a charge is paid, and for payouts.
	EndToEndID    *string `json:"end_to_end_id"`
	TxID          *string `json:"txid"`
	PayerName     *string `json:"payer_name"`
	PayerDocument *string `json:"payer_document"`
	// TransferID, Direction ("in" or "out") and CounterpartyAccountID
	// describe one side of a transfer between accounts of a family; left
	// out for every other transaction.
	TransferID            string `json:"transfer_id,omitempty"`
	Direction             string `json:"direction,omitempty"`
	CounterpartyAccountID string `json:"counterparty_account_id,omitempty"`
	// ScheduledDate is a scheduled payout's date (docs/payouts.md); left
	// out for every other transaction.
	ScheduledDate string `json:"scheduled_date,omitempty"`
	// Splits lists a split charge's receivers and what each was credited
	// (null until paid) in its lookup; left out elsewhere. SourcePaymentID
	// is, on a receiver's split transaction, the charge it came from.
	Splits          *[]pix.SplitCredit `json:"splits,omitempty"`
	SourcePaymentID string             `json:"source_payment_id,omitempty"`
}

// View returns the API view of t on day today (São Paulo date, see
// Service.Today), which prices a charge with a due date.
func View(t pix.Transaction, today pix.Date) TransactionView {
	v := TransactionView{PaymentID: t.ID, Status: t.Status, Amount: t.Amount, CreatedAt: pix.FormatTime(t.CreatedAt),
		Type: t.Type, Tax: t.Tax, RefundedAmount: t.RefundedAmount + t.MEDReturned, RecurrenceID: t.RecurrenceID}
	if t.ExternalID != "" {
		ext := t.ExternalID
		v.ExternalID = &ext
	}
	if !t.ConfirmedAt.IsZero() {
		c := pix.FormatTime(t.ConfirmedAt)
		v.ConfirmedDate = &c
	}
	if t.Type == pix.TypeCashin {
		mismatch := t.AmountMismatch()
		v.AmountMismatch = &mismatch
		if t.PaidAmount > 0 {
			paid := t.PaidAmount
			v.PaidAmount = &paid
		}
		v.Due, v.AmountDueToday, v.Disputes, v.Splits = t.Due, dueToday(t, today), t.Disputes, t.Splits
		if !t.ConfirmedAt.IsZero() {
			v.EndToEndID, v.TxID = pix.OrNull(t.EndToEndID), pix.OrNull(t.TxID)
			v.PayerName, v.PayerDocument = pix.OrNull(t.PayerName), pix.OrNull(t.PayerDocument)
		}
	}
	if t.Type == pix.TypeSplit {
		v.SourcePaymentID, v.CounterpartyAccountID = t.SourcePaymentID, t.CounterpartyAccountID
	}
	if t.Type == pix.TypeTransfer {
		// The receiving side names the sender's side, whose id is the
		// transfer's.
		v.TransferID, v.Direction, v.CounterpartyAccountID = t.ID, "out", t.CounterpartyAccountID
		if t.SourcePaymentID != "" {
			v.TransferID, v.Direction = t.SourcePaymentID, "in"
		}
	}
	v.ScheduledDate = t.ScheduledDate()
	return v
}

// Lookup finds client c's transaction by payment_id, external_id or both
// (POST /api/v1/wallet/transaction): neither given → EInvalid; both given and not the same
// transaction → EInvalid; nothing found → ENotFound. An empty string counts
// as not given.
func (s *Service) Lookup(ctx context.Context, c pix.Client, paymentID, externalID string) (pix.Transaction, error) {
	if paymentID == "" && externalID == "" {
		return pix.Transaction{}, pix.Errorf(pix.EInvalid, MsgLookupNeedsID)
	}
	find := func(get func() (pix.Transaction, error)) (*pix.Transaction, error) {
		t, err := get()
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("lookup: %w", err)
		}
		return &t, nil
	}
	var byID, byExt *pix.Transaction
	var err error
	if paymentID != "" {
		if byID, err = find(func() (pix.Transaction, error) { return s.db.Transaction(ctx, c.ID, paymentID) }); err != nil {
			return pix.Transaction{}, err
		}
	}
	if externalID != "" {
		if byExt, err = find(func() (pix.Transaction, error) { return s.db.TransactionByExternalID(ctx, c.ID, externalID) }); err != nil {
			return pix.Transaction{}, err
		}
	}
	switch {
	case paymentID != "" && externalID != "":
		if byID == nil && byExt == nil {
			return pix.Transaction{}, pix.Errorf(pix.ENotFound, MsgLookupNotFound)
		}
		if byID == nil || byExt == nil || byID.ID != byExt.ID {
			return pix.Transaction{}, pix.Errorf(pix.EInvalid, MsgLookupMismatch)
		}
		return s.withDisputes(ctx, *byID)
	case byID != nil:
		return s.withDisputes(ctx, *byID)
	case byExt != nil:
		return s.withDisputes(ctx, *byExt)
	}
	return pix.Transaction{}, pix.Errorf(pix.ENotFound, MsgLookupNotFound)
}

// withDisputes is t with its disputes read, when t is a charge.
func (s *Service) withDisputes(ctx context.Context, t pix.Transaction) (pix.Transaction, error) {
	if t.Type != pix.TypeCashin {
		return t, nil
	}
	ds, err := s.cashin.ChargeDisputes(ctx, t)
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("lookup: %w", err)
	}
	sum := make([]pix.DisputeSummary, len(ds))
	for i, d := range ds {
		sum[i] = pix.DisputeSummary{DisputeID: d.ID, Status: d.Status, Amount: d.Amount}
	}
	t.Disputes = &sum
	splits, err := s.db.Splits(ctx, t.ID)
	if err != nil {
		return pix.Transaction{}, fmt.Errorf("lookup: %w", err)
	}
	if len(splits) > 0 {
		credits := make([]pix.SplitCredit, len(splits))
		for i, sp := range splits {
			credits[i] = pix.SplitCredit{AccountID: sp.AccountID, Amount: sp.Credited}
		}
		t.Splits = &credits
	}
	return t, nil
}

// HistoryQuery is the raw query of GET /api/v1/wallet/transactions.
type HistoryQuery struct {
	Limit, Cursor, Status, Type, From, To string
}

// History query issues: each names the allowed values, because the wallet
// error body has no details and its message is all a client sees.
const (
	issueHistoryLimit  = "must be an integer from 1 to 100 (default 50)"
	issueHistoryCursor = "must be a next_cursor returned by this endpoint"
	issueHistoryStatus = "must be one of PENDING, PAID, CANCELLED, REFUNDED, REVERSED"
	issueHistoryType   = "must be one of cashin, cashout, split, transfer"
	issueHistoryTime   = "must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z"
)

// History returns a page of client c's transactions, newest first, and the
// next cursor ("" on the last page). Errors: EInvalid for a bad parameter,
// its message naming each bad parameter and what it accepts.
func (s *Service) History(ctx context.Context, c pix.Client, q HistoryQuery) ([]pix.Transaction, string, error) {
	f := store.HistoryFilter{Limit: defaultHistoryLimit, Cursor: q.Cursor, Status: pix.TxStatus(q.Status), Type: pix.TxType(q.Type)}
	var is issues
	if q.Limit != "" {
		n, err := strconv.Atoi(q.Limit)
		if err != nil || n < 1 || n > 100 {
			is.add("limit", issueHistoryLimit)
		}
		f.Limit = n
	}
	if len(q.Cursor) > 200 || !pix.ValidText(q.Cursor) {
		is.add("cursor", issueHistoryCursor)
	}
	if q.Status != "" && !slices.Contains(pix.TxStatuses(), pix.TxStatus(q.Status)) {
		is.add("status", issueHistoryStatus)
	}
	if q.Type != "" && !slices.Contains(pix.TxTypes(), pix.TxType(q.Type)) {
		is.add("type", issueHistoryType)
	}
	for _, p := range []struct {
		name, v string
		dst     *time.Time
	}{{"from", q.From, &f.From}, {"to", q.To, &f.To}} {
		if p.v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, p.v)
		if err != nil {
			is.add(p.name, timeIssue(issueHistoryTime, p.v))
			continue
		}
		*p.dst = t
	}
	if len(is) > 0 {
		return nil, "", historyError(is)
	}
	rows, next, err := s.db.History(ctx, c.ID, f)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", historyError(issues{{Field: "cursor", Issue: issueHistoryCursor}})
	}
	if err != nil {
		return nil, "", fmt.Errorf("history: %w", err)
	}
	return rows, next, nil
}

// issuePlusAsSpace ends a date-time issue when the value parses once a
// space is read back as '+': an offset such as +03:00 sent unescaped in a
// URL query arrives as a space.
const issuePlusAsSpace = " (a '+' in a URL query must be sent as %2B)"

// timeIssue returns issue for the date-time v that did not parse, with the
// hint about '+' when that is what went wrong.
func timeIssue(issue, v string) string {
	if i := strings.LastIndexByte(v, ' '); i >= 0 {
		if _, err := time.Parse(time.RFC3339Nano, v[:i]+"+"+v[i+1:]); err == nil {
			return issue + issuePlusAsSpace
		}
	}
	return issue
}

// historyError is the 400 of a bad history query. The wallet body is only
// {statusCode, message}, so the message itself names every bad parameter
// and what it accepts: "Invalid request parameters: 'limit' must be …".
func historyError(is issues) error {
	parts := make([]string, len(is))
	for i, fi := range is {
		parts[i] = "'" + fi.Field + "' " + fi.Issue
	}
	return &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters: " + strings.Join(parts, "; ") + ".", Details: is}
}
