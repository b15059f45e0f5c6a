package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Wallet messages (spec §7, to the letter).
const (
	MsgLookupNeedsID    = "Informe 'payment_id', 'external_id' ou ambos para buscar a transação."
	MsgLookupMismatch   = "O 'payment_id' e o 'external_id' informados não correspondem à mesma transação."
	MsgLookupNotFound   = "Transação não encontrada."
	MsgBalanceOK        = "Saldo consultado com sucesso."
	MsgLookupOK         = "Transação encontrada."
	MsgHistoryOK        = "Transações listadas com sucesso."
	balanceTimeFormat   = "2006-01-02T15:04:05.000-07:00"
	defaultHistoryLimit = 50
)

// Balance is a client's wallet balance in centavos.
type Balance struct {
	Available pix.Amount
	Pending   pix.Amount
}

// Balance returns client c's available and pending balances.
func (s *Service) Balance(ctx context.Context, c store.Client) (Balance, error) {
	b, err := s.DB.Balances(ctx, c.ID)
	if err != nil {
		return Balance{}, fmt.Errorf("balance: %w", err)
	}
	return Balance{Available: b[ledger.Available], Pending: b[ledger.Pending]}, nil
}

// BalanceTimestamp formats now in America/Sao_Paulo with its numeric offset.
func BalanceTimestamp(now time.Time, loc *time.Location) string {
	return now.In(loc).Format(balanceTimeFormat)
}

// TransactionView is a transaction as lookup and history show it.
type TransactionView struct {
	PaymentID      string     `json:"payment_id"`
	ExternalID     *string    `json:"external_id"`
	Status         string     `json:"status"`
	Amount         pix.Amount `json:"amount"`
	CreatedAt      string     `json:"created_at"`
	ConfirmedDate  *string    `json:"confirmed_date"`
	Type           string     `json:"type"`
	Tax            pix.Amount `json:"tax"`
	RefundedAmount pix.Amount `json:"refunded_amount"`
}

// View returns the API view of t.
func View(t store.Transaction) TransactionView {
	v := TransactionView{PaymentID: t.ID, Status: t.Status, Amount: t.Amount, CreatedAt: FormatTime(t.CreatedAt),
		Type: t.Type, Tax: t.Tax, RefundedAmount: t.RefundedAmount}
	if t.ExternalID != "" {
		ext := t.ExternalID
		v.ExternalID = &ext
	}
	if !t.ConfirmedAt.IsZero() {
		c := FormatTime(t.ConfirmedAt)
		v.ConfirmedDate = &c
	}
	return v
}

// Lookup finds client c's transaction by payment_id, external_id or both
// (spec §4.4): neither given → EInvalid; both given and not the same
// transaction → EInvalid; nothing found → ENotFound. An empty string counts
// as not given.
func (s *Service) Lookup(ctx context.Context, c store.Client, paymentID, externalID string) (store.Transaction, error) {
	if paymentID == "" && externalID == "" {
		return store.Transaction{}, pix.Errorf(pix.EInvalid, MsgLookupNeedsID)
	}
	find := func(get func() (store.Transaction, error)) (*store.Transaction, error) {
		t, err := get()
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("lookup: %w", err)
		}
		return &t, nil
	}
	var byID, byExt *store.Transaction
	var err error
	if paymentID != "" {
		if byID, err = find(func() (store.Transaction, error) { return s.DB.Transaction(ctx, c.ID, paymentID) }); err != nil {
			return store.Transaction{}, err
		}
	}
	if externalID != "" {
		if byExt, err = find(func() (store.Transaction, error) { return s.DB.TransactionByExternalID(ctx, c.ID, externalID) }); err != nil {
			return store.Transaction{}, err
		}
	}
	switch {
	case paymentID != "" && externalID != "":
		if byID == nil && byExt == nil {
			return store.Transaction{}, pix.Errorf(pix.ENotFound, MsgLookupNotFound)
		}
		if byID == nil || byExt == nil || byID.ID != byExt.ID {
			return store.Transaction{}, pix.Errorf(pix.EInvalid, MsgLookupMismatch)
		}
		return *byID, nil
	case byID != nil:
		return *byID, nil
	case byExt != nil:
		return *byExt, nil
	}
	return store.Transaction{}, pix.Errorf(pix.ENotFound, MsgLookupNotFound)
}

// HistoryQuery is the raw query of GET /api/v1/wallet/transactions.
type HistoryQuery struct {
	Limit, Cursor, Status, Type, From, To string
}

// History returns a page of client c's transactions, newest first, and the
// next cursor ("" on the last page). Errors: EInvalid for a bad parameter.
func (s *Service) History(ctx context.Context, c store.Client, q HistoryQuery) ([]store.Transaction, string, error) {
	f := store.HistoryFilter{Limit: defaultHistoryLimit, Cursor: q.Cursor, Status: q.Status, Type: q.Type}
	var is issues
	if q.Limit != "" {
		n, err := strconv.Atoi(q.Limit)
		if err != nil || n < 1 || n > 100 {
			is.add("limit", "must be an integer from 1 to 100")
		}
		f.Limit = n
	}
	if q.Status != "" && !slices.Contains(LookupStatuses, q.Status) {
		is.add("status", "must be one of PENDING, PAID, CANCELLED, REFUNDED, REVERSED")
	}
	if q.Type != "" && q.Type != store.TypeCashin && q.Type != store.TypeCashout {
		is.add("type", "must be cashin or cashout")
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
			is.add(p.name, "must be an RFC 3339 date-time")
			continue
		}
		*p.dst = t
	}
	if len(q.Cursor) > 200 {
		is.add("cursor", "is not a cursor this service issued")
	}
	if len(is) > 0 {
		return nil, "", &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters", Details: is}
	}
	rows, next, err := s.DB.History(ctx, c.ID, f)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters", Details: []pix.FieldIssue{{Field: "cursor", Issue: "is not a cursor this service issued"}}}
	}
	if err != nil {
		return nil, "", fmt.Errorf("history: %w", err)
	}
	return rows, next, nil
}
