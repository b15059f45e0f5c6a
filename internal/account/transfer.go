package account

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// TransferStatus is the one status of a transfer: it completes in the
// transaction that makes it.
const TransferStatus = "COMPLETED"

// TransferRequest is the body of POST /api/v1/wallet/transfers.
type TransferRequest struct {
	ToAccountID string          `json:"to_account_id"`
	Amount      json.RawMessage `json:"amount"`
	Description string          `json:"description"`
	ExternalID  *string         `json:"external_id"`
}

// TransferView is the data of a transfer's answer (and of its replays).
type TransferView struct {
	TransferID    string     `json:"transfer_id"`
	FromAccountID string     `json:"from_account_id"`
	ToAccountID   string     `json:"to_account_id"`
	Amount        pix.Amount `json:"amount"`
	Status        string     `json:"status"`
	CreatedAt     string     `json:"created_at"`
}

// walletInvalid is the 400 of a bad transfer: the wallet body has no
// details, so the message names every bad field and what it must be.
func walletInvalid(is issues) error {
	parts := make([]string, len(is))
	for i, fi := range is {
		parts[i] = "'" + fi.Field + "' " + fi.Issue
	}
	return &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters: " + strings.Join(parts, "; ") + ".", Details: is}
}

// Transfer moves amount from c's available balance to the account named
// by to_account_id, which must be c's own sub-account or c's parent. In
// one database transaction it writes one transfer transaction on each side
// (the sender's id is the transfer_id; each names the other side's
// account_id) and the two postings, TransferOut and TransferIn, so each
// client's accounts balance and the family's sum is unchanged; no money
// crosses the PIX network, and no webhook is sent. It is idempotent on
// external_id and on the Idempotency-Key header as payouts are (docs/api.md#idempotency).
// Errors: EInvalid, ENotFound (anyone else), EInsufficientBalance,
// EIdempotencyMismatch, EConflict.
func (s *Service) Transfer(ctx context.Context, c pix.Client, in pix.Idempotent[TransferRequest]) (TransferView, bool, error) {
	r, key := in.Req, in.Key
	var is issues
	if r.ToAccountID == "" {
		is.add("to_account_id", "is required")
	}
	var amount pix.Amount
	if len(r.Amount) == 0 || string(r.Amount) == "null" {
		is.add("amount", "is required")
	} else if a, err := pix.ParseAmount(r.Amount); err != nil {
		is.add("amount", "must be a number in reais, greater than 0, at most 1000000.00, with at most two decimals")
	} else {
		amount = a
	}
	is.text("description", r.Description, maxDescriptionLength, false)
	ext := is.externalID(r.ExternalID)
	if key != "" && !pix.ValidIdempotencyKey(key) {
		is.add("Idempotency-Key", issueIdempotencyKey)
	}
	if len(is) > 0 {
		return TransferView{}, false, walletInvalid(is)
	}
	if in.Hash == "" {
		return TransferView{}, false, pix.InvalidBody()
	}
	to, err := s.counterparty(ctx, c, r.ToAccountID)
	if err != nil {
		return TransferView{}, false, err
	}
	d, err := details(r.Description)
	if err != nil {
		return TransferView{}, false, err
	}
	now := s.now(ctx)
	out := pix.Transaction{ID: s.w.NewID(), ClientID: c.ID, Type: pix.TypeTransfer, ExternalID: ext, IdempotencyKey: key,
		RequestHash: in.Hash, Status: pix.StatusPaid, Amount: amount, CreatedAt: now, ConfirmedAt: now, Details: d,
		CounterpartyAccountID: to.AccountID}
	// The receiving side names the transfer it comes from; it has no key
	// of its own, so it never clashes with the receiver's own requests.
	inbound := pix.Transaction{ID: s.w.NewID(), ClientID: to.ID, Type: pix.TypeTransfer, RequestHash: in.Hash,
		Status: pix.StatusPaid, Amount: amount, CreatedAt: now, ConfirmedAt: now, Details: d,
		SourcePaymentID: out.ID, CounterpartyAccountID: c.AccountID}
	err = s.db.Write(ctx, func(tx *store.Tx) error {
		if err := tx.CreateTransaction(ctx, out); err != nil {
			return err
		}
		if err := tx.CreateTransaction(ctx, inbound); err != nil {
			return err
		}
		for _, id := range []string{c.ID, to.ID} {
			if err := tx.OpenTransferAccounts(ctx, id); err != nil {
				return err
			}
		}
		return tx.PostAll(ctx, []store.PostingWrite{
			{ID: s.w.OrderedID(), ClientID: c.ID, TransactionID: out.ID, Posting: ledger.TransferOut(amount)},
			{ID: s.w.OrderedID(), ClientID: to.ID, TransactionID: inbound.ID, Posting: ledger.TransferIn(amount)},
		}, now)
	})
	switch {
	case errors.Is(err, store.ErrConflict):
		return s.replay(ctx, c, ext, key, in.Hash)
	case errors.Is(err, store.ErrInsufficientFunds):
		return TransferView{}, false, s.insufficient(ctx, c, amount)
	case err != nil:
		return TransferView{}, false, fmt.Errorf("transfer: %w", err)
	}
	s.log.InfoContext(ctx, "transfer completed", "transfer_id", out.ID, "to_client_id", to.ID)
	return transferView(out, c.AccountID), false, nil
}

// counterparty is the client the account_id names when it is c's own
// sub-account or c's parent; anyone else, or nobody, is ENotFound.
func (s *Service) counterparty(ctx context.Context, c pix.Client, accountID string) (pix.Client, error) {
	notFound := pix.Errorf(pix.ENotFound, MsgAccountNotFound)
	if !pix.CanonicalID(accountID) || accountID == c.AccountID {
		return pix.Client{}, notFound
	}
	to, err := s.db.ClientByAccountID(ctx, accountID)
	if errors.Is(err, store.ErrNotFound) {
		return pix.Client{}, notFound
	}
	if err != nil {
		return pix.Client{}, fmt.Errorf("transfer: counterparty: %w", err)
	}
	if to.ParentID != c.ID && (c.ParentID == "" || to.ID != c.ParentID) {
		return pix.Client{}, notFound
	}
	return to, nil
}

// replay answers a duplicate transfer: the earlier one's answer if the
// bodies agree, else the 422 naming the key that matched it.
func (s *Service) replay(ctx context.Context, c pix.Client, ext, key, hash string) (TransferView, bool, error) {
	var prev pix.Transaction
	var err error
	found := false
	if ext != "" {
		prev, err = s.db.TransactionByExternalID(ctx, c.ID, ext)
		found = err == nil
	}
	if !found && key != "" {
		prev, err = s.db.TransactionByIdempotencyKey(ctx, c.ID, key)
		found = err == nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return TransferView{}, false, fmt.Errorf("transfer: replay: %w", err)
	}
	byExt := pix.ByExternalID(prev.ExternalID, ext)
	if !found {
		// The insert waits for the other request's transaction, so this
		// should not happen; if it does, that request is still in flight.
		return TransferView{}, false, pix.InProgress(ext != "")
	}
	if prev.Type != pix.TypeTransfer || prev.RequestHash != hash {
		return TransferView{}, false, pix.Mismatch(byExt)
	}
	return transferView(prev, c.AccountID), true, nil
}

// insufficient is the 422 of a transfer of amount that c's available
// balance does not cover, its detail stating both.
func (s *Service) insufficient(ctx context.Context, c pix.Client, amount pix.Amount) error {
	e := &pix.Error{Code: pix.EInsufficientBalance, Message: "Insufficient balance"}
	b, err := s.db.Balances(ctx, c.ID)
	if err != nil {
		// The refusal stands; only its explanation is lost.
		s.log.ErrorContext(ctx, "insufficient balance: read balance", "error", err.Error())
		e.Details = []pix.FieldIssue{{Field: "amount", Issue: fmt.Sprintf("amount R$ %s exceeds the available balance", amount)}}
		return e
	}
	e.Details = []pix.FieldIssue{{Field: "amount", Issue: fmt.Sprintf("available R$ %s is less than amount R$ %s", b[ledger.Available], amount)}}
	return e
}

// transferView is the answer about the sender's side t of a transfer.
func transferView(t pix.Transaction, from string) TransferView {
	return TransferView{TransferID: t.ID, FromAccountID: from, ToAccountID: t.CounterpartyAccountID, Amount: t.Amount,
		Status: TransferStatus, CreatedAt: pix.FormatTime(t.CreatedAt)}
}
