package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// PayoutRequest is the body of POST /api/v1/gateway/pix-payment.
type PayoutRequest struct {
	Amount      json.RawMessage  `json:"amount"`
	Description string           `json:"description"`
	CreditParty *pix.CreditParty `json:"creditParty"`
	CallbackURL string           `json:"callbackUrl"`
	ExternalID  *string          `json:"external_id"`
	// ScheduledDate, when set, is the São Paulo date (YYYY-MM-DD) the
	// payout is reserved and sent on (docs/payouts.md).
	ScheduledDate string `json:"scheduled_date"`
}

// PayoutResponse is the 200 body of a created payout (and of its replays).
type PayoutResponse struct {
	StatusCode    int          `json:"statusCode"`
	TransactionID string       `json:"transaction_id"`
	ExternalID    *string      `json:"external_id"`
	Amount        pix.Amount   `json:"amount"`
	Tax           pix.Amount   `json:"tax"`
	Status        pix.TxStatus `json:"status"`
	// ScheduledDate is a scheduled payout's date (status SCHEDULED); left
	// out for one sent at once.
	ScheduledDate string `json:"scheduled_date,omitempty"`
}

func (s *Service) validatePayout(r *PayoutRequest, idemKey string) (pix.Amount, error) {
	var is issues
	amount := is.amount("amount", r.Amount)
	is.text("description", r.Description, 140)
	is.webhookURL(s, "callbackUrl", r.CallbackURL)
	if r.ExternalID != nil && *r.ExternalID == "" {
		r.ExternalID = nil // optional: an empty string counts as not sent
	}
	if r.ExternalID != nil {
		is.check("external_id", *r.ExternalID, pix.ValidExternalID, "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -")
	}
	if idemKey != "" && !pix.ValidIdempotencyKey(idemKey) {
		is.add("Idempotency-Key", "must be 1 to 255 visible ASCII characters")
	}
	if r.CreditParty == nil {
		is.add("creditParty", "is required")
	} else if utf8.RuneCountInString(r.CreditParty.Name) > 200 {
		is.add("creditParty.name", "must be at most 200 characters")
	} else {
		is.plain("creditParty.name", r.CreditParty.Name)
	}
	if err := is.err(); err != nil {
		return 0, err
	}
	cp := r.CreditParty
	if !pix.ValidKeyType(cp.KeyType) {
		return 0, &pix.Error{Code: pix.EInvalidKey, Message: "Invalid key format",
			Details: []pix.FieldIssue{{Field: "creditParty.keyType", Issue: "must be one of CPF, CNPJ, EMAIL, PHONE, EVP"}}}
	}
	if !pix.ValidPixKey(pix.KeyType(cp.KeyType), cp.Key) {
		// The message stays the spec's; the issue says which form the key
		// type takes (a PHONE key needs the +55 prefix, a common miss).
		return 0, &pix.Error{Code: pix.EInvalidKey, Message: "Invalid key format",
			Details: []pix.FieldIssue{{Field: "creditParty.key", Issue: pix.KeyFormatIssue(pix.KeyType(cp.KeyType))}}}
	}
	return amount, nil
}

// CreatePayout validates a payout for client c, computes its tax and, in one
// transaction, stores it PENDING and moves amount+tax from available to
// pending. It is idempotent on external_id and on idemKey (the
// Idempotency-Key header). Errors: EInvalid, EInvalidKey,
// EInsufficientBalance, EIdempotencyMismatch.
func (s *Service) CreatePayout(ctx context.Context, c pix.Client, in Idempotent[PayoutRequest]) (PayoutResponse, bool, error) {
	r, idemKey := in.Req, in.Key
	if err := s.transfers.Available(pix.TransferPayout); err != nil {
		return PayoutResponse{}, false, err
	}
	amount, err := s.validatePayout(r, idemKey)
	if err != nil {
		return PayoutResponse{}, false, err
	}
	day, err := s.scheduledDay(ctx, r.ScheduledDate)
	if err != nil {
		return PayoutResponse{}, false, err
	}
	hash := in.Hash
	if hash == "" {
		return PayoutResponse{}, false, pix.InvalidBody()
	}
	ext := ""
	if r.ExternalID != nil {
		ext = *r.ExternalID
	}
	// As for charges, a duplicate is found by the insert, not by a read first.
	find := func(q finder) (pix.Transaction, bool, error) {
		return findPrevious(ctx, q, c.ID, ext, idemKey)
	}

	t, d, err := s.newPayout(ctx, c, r, amount, ext, idemKey, hash, day)
	if err != nil {
		return PayoutResponse{}, false, err
	}
	if !day.IsZero() {
		err = s.db.CreateScheduledPayout(ctx, store.ScheduledPayout{Transaction: t, Date: day.String(), DueAt: day.Start(s.loc)})
		if errors.Is(err, store.ErrConflict) {
			return replayFound(find(s.db))(ext, hash)
		}
		if err != nil {
			return PayoutResponse{}, false, fmt.Errorf("create payout: %w", err)
		}
		return payoutResponse(t), false, nil
	}
	s.transfers.Accept(ctx, &t, d)
	// One transaction, shared with the payouts created at the same moment
	// (store.DB.CreatePayout). A duplicate fails the insert with
	// ErrConflict (after waiting for the other request's transaction, whose
	// row is then readable); only then is the earlier payout read.
	err = s.db.CreatePayout(ctx, store.NewPayout{Transaction: t,
		Posting: store.PostingWrite{ID: s.w.OrderedID(), ClientID: c.ID, TransactionID: t.ID, Posting: ledger.PayoutReserved(amount, t.Tax)}})
	if errors.Is(err, store.ErrConflict) {
		prev, ok, err := find(s.db)
		if err != nil {
			return PayoutResponse{}, false, fmt.Errorf("create payout: %w", err)
		}
		if !ok {
			// The insert waits for the other request's transaction, so this
			// should not happen; if it does, that request is still in flight.
			return PayoutResponse{}, false, pix.InProgress(ext != "")
		}
		return replayPayout(prev, ext, hash)
	}
	if errors.Is(err, store.ErrInsufficientFunds) {
		return PayoutResponse{}, false, s.insufficientBalance(ctx, c, amount+t.Tax)
	}
	if err != nil {
		return PayoutResponse{}, false, fmt.Errorf("create payout: %w", err)
	}
	s.transfers.Kick()
	return payoutResponse(t), false, nil
}

// newPayout is the row of payout request r of client c (amount already
// validated), scheduled for day unless it is zero: a scheduled payout is
// stored with nothing to send until its day (send state SendScheduled).
func (s *Service) newPayout(ctx context.Context, c pix.Client, r *PayoutRequest, amount pix.Amount, ext, idemKey, hash string,
	day pix.Date) (pix.Transaction, pix.PayoutDetails, error) {
	now := s.clocks.At(ctx)
	d := pix.PayoutDetails{Description: r.Description, CreditParty: *r.CreditParty}
	if !day.IsZero() {
		d.ScheduledDate = day.String()
	}
	details, err := json.Marshal(d)
	if err != nil {
		return pix.Transaction{}, d, fmt.Errorf("create payout: %w", err)
	}
	t := pix.Transaction{
		ID: s.newUUID(), ClientID: c.ID, Type: pix.TypeCashout, ExternalID: ext, IdempotencyKey: idemKey,
		RequestHash: hash, Status: pix.StatusPending, Amount: amount, Tax: c.PayoutFee.Fee(amount), CreatedAt: now,
		SettleAt: now, CallbackURL: r.CallbackURL, Details: string(details), SendState: pix.SendToSend,
	}
	if !day.IsZero() {
		t.SettleAt, t.SendState = time.Time{}, pix.SendScheduled
	}
	return t, d, nil
}

// replayFound answers a duplicate found by find (see replayPayout); none
// found means the other request is still in flight.
func replayFound(prev pix.Transaction, ok bool, err error) func(ext, hash string) (PayoutResponse, bool, error) {
	return func(ext, hash string) (PayoutResponse, bool, error) {
		if err != nil {
			return PayoutResponse{}, false, fmt.Errorf("create payout: %w", err)
		}
		if !ok {
			return PayoutResponse{}, false, pix.InProgress(ext != "")
		}
		return replayPayout(prev, ext, hash)
	}
}

// replayPayout answers a duplicate of prev, the earlier request found for
// a payout that sent externalID: its response if the bodies agree, else the
// 422 naming the key that matched prev.
func replayPayout(prev pix.Transaction, externalID, hash string) (PayoutResponse, bool, error) {
	if prev.RequestHash != hash || prev.Type != pix.TypeCashout {
		return PayoutResponse{}, false, pix.Mismatch(foundBy(prev, externalID))
	}
	return payoutResponse(prev), true, nil
}

// payoutResponse is the creation response, which never changes.
func payoutResponse(t pix.Transaction) PayoutResponse {
	resp := PayoutResponse{StatusCode: 200, TransactionID: t.ID, Amount: t.Amount, Tax: t.Tax, Status: pix.StatusPending}
	if day := t.ScheduledDate(); day != "" {
		resp.Status, resp.ScheduledDate = pix.StatusScheduled, day
	}
	if t.ExternalID != "" {
		ext := t.ExternalID
		resp.ExternalID = &ext
	}
	return resp
}
