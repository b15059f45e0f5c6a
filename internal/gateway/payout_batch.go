package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Limits of a batch of payouts (docs/payouts.md).
const (
	MaxBatchItems = 1000
	// batchLease is how long a batch being accepted belongs to the request
	// accepting it: a retry after a crash takes it over after that.
	batchLease = time.Minute
	// batchChunk is how many items are reserved per database transaction.
	batchChunk = 200
)

// Payouts is what payouts do beyond the single request (docs/payouts.md):
// cancel a scheduled payout, and batches of payouts.
type Payouts struct{ s *Service }

// Payouts returns the payouts' use cases beyond the single request.
func (s *Service) Payouts() *Payouts { return &Payouts{s} }

// Cancel cancels client c's scheduled payout id before its day: the payout
// as lookup now shows it (CANCELLED). Errors: ENotFound, EUnprocessable
// (never scheduled, or its day has begun).
func (p *Payouts) Cancel(ctx context.Context, c pix.Client, id string) (pix.Transaction, error) {
	return p.s.transfers.CancelScheduled(ctx, c.ID, id)
}

// RunSchedule starts client c's scheduled payout id now, as if its day had
// begun (the sandbox's run-schedule; nil Sandbox: ENotFound). Errors:
// ENotFound, EUnprocessable (never scheduled, or no longer waiting).
func (x *Sandbox) RunSchedule(ctx context.Context, c pix.Client, id string) (pix.Transaction, error) {
	if x == nil {
		return pix.Transaction{}, pix.Errorf(pix.ENotFound, "Payout not found")
	}
	return x.s.transfers.StartScheduled(ctx, c.ID, id)
}

// BatchRequest is the body of POST /api/v1/gateway/pix-payments/batch; the
// API decodes each item on its own (BatchItemInput), so that one bad item
// rejects only itself.
type BatchRequest struct {
	ExternalID  string `json:"external_id"`
	CallbackURL string `json:"callbackUrl"`
	// Items is filled by the API from the body's items.
	Items []BatchItemInput `json:"-"`
}

// BatchItemInput is one item of a batch as the API read it: a payout
// request with its digest (Idempotent), or the error that decoding it met.
type BatchItemInput struct {
	In  Idempotent[PayoutRequest]
	Err error
}

// BatchView is a batch as its creation and GET answer it.
type BatchView struct {
	BatchID    string `json:"batch_id"`
	ExternalID string `json:"external_id"`
	Total      int    `json:"total"`
	Accepted   int    `json:"accepted"`
	Rejected   int    `json:"rejected"`
	// Counts is set by GET: how many items read each status.
	Counts *map[pix.TxStatus]int `json:"counts,omitempty"`
	Items  []BatchItemView       `json:"items"`
}

// BatchItemView is one item of a batch: its payout, or the error of the
// single request it would have been (rendered by the API).
type BatchItemView struct {
	Index         int          `json:"index"`
	ExternalID    *string      `json:"external_id"`
	TransactionID *string      `json:"transaction_id"`
	Status        pix.TxStatus `json:"status"`
	Err           *pix.Error   `json:"-"`
}

// CreateBatch accepts a batch of payouts for client c: every item in order
// is an ordinary payout, validated, reserved and idempotent on its own (a
// rejected one carries the error its single request would get); the batch
// is idempotent by its external_id, in a namespace of batches. Errors:
// EInvalid (the batch itself), EIdempotencyMismatch, EConflict.
func (p *Payouts) CreateBatch(ctx context.Context, c pix.Client, in Idempotent[BatchRequest]) (BatchView, bool, error) {
	s, r := p.s, in.Req
	if err := s.transfers.Available(pix.TransferPayout); err != nil {
		return BatchView{}, false, err
	}
	var is issues
	is.check("external_id", r.ExternalID, pix.ValidExternalID, "must be 1 to 64 characters of A-Z a-z 0-9 . _ : -")
	is.webhookURL(s, "callbackUrl", r.CallbackURL)
	if len(r.Items) == 0 || len(r.Items) > MaxBatchItems {
		is.add("items", fmt.Sprintf("must hold 1 to %d payouts", MaxBatchItems))
	}
	if err := is.err(); err != nil {
		return BatchView{}, false, err
	}
	if in.Hash == "" {
		return BatchView{}, false, pix.InvalidBody()
	}
	now := s.clocks.At(ctx)
	b := pix.Batch{ID: s.newUUID(), ClientID: c.ID, ExternalID: r.ExternalID, RequestHash: in.Hash, CallbackURL: r.CallbackURL,
		State: pix.BatchAccepting, Total: len(r.Items), LeaseUntil: s.now().Add(batchLease), CreatedAt: now}
	inserted, err := s.db.InsertBatch(ctx, b)
	if err != nil {
		return BatchView{}, false, fmt.Errorf("create batch: %w", err)
	}
	if !inserted {
		prev, err := s.db.BatchByExternalID(ctx, c.ID, r.ExternalID)
		if err != nil {
			return BatchView{}, false, fmt.Errorf("create batch: %w", err)
		}
		if prev.RequestHash != in.Hash {
			return BatchView{}, false, pix.Mismatch(true)
		}
		if prev.State != pix.BatchAccepting {
			v, err := p.view(ctx, prev, false)
			return v, true, err
		}
		// A request that died accepting it: its items are replayed by
		// their external_ids, so taking it over creates nothing twice.
		if !s.now().After(prev.LeaseUntil) {
			return BatchView{}, false, pix.InProgress(true)
		}
		if ok, err := s.db.TakeBatch(ctx, prev.ID, prev.LeaseUntil, s.now().Add(batchLease)); err != nil || !ok {
			return BatchView{}, false, errors.Join(err, pix.InProgress(true))
		}
		b = prev
	}
	items := p.acceptItems(ctx, c, r)
	v := batchView(b, items)
	b.Accepted, b.Rejected = v.Accepted, v.Rejected
	if err := s.db.AcceptBatch(ctx, b, items); err != nil {
		return BatchView{}, false, fmt.Errorf("create batch: %w", err)
	}
	s.transfers.Kick()
	return v, false, nil
}

// Batch returns client c's batch id with its items as they now read.
// Errors: ENotFound.
func (p *Payouts) Batch(ctx context.Context, c pix.Client, id string) (BatchView, error) {
	b, err := p.s.db.Batch(ctx, c.ID, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && b.State == pix.BatchAccepting) {
		return BatchView{}, pix.Errorf(pix.ENotFound, "Batch not found")
	}
	if err != nil {
		return BatchView{}, fmt.Errorf("batch: %w", err)
	}
	return p.view(ctx, b, true)
}

// view is batch b with its items: as accepted (its creation's answer), or
// with current is set as each payout now reads, with the counts.
func (p *Payouts) view(ctx context.Context, b pix.Batch, current bool) (BatchView, error) {
	items, err := p.s.db.BatchItems(ctx, b.ID)
	if err != nil {
		return BatchView{}, fmt.Errorf("batch %s: %w", b.ID, err)
	}
	v := batchView(b, items)
	if current {
		counts := BatchCounts(items)
		v.Counts = &counts
		for i, it := range items {
			v.Items[i].Status = ItemStatus(it)
		}
	}
	return v, nil
}

// batchView is the answer of batch b whose items are items, as accepted.
func batchView(b pix.Batch, items []pix.BatchItem) BatchView {
	v := BatchView{BatchID: b.ID, ExternalID: b.ExternalID, Total: b.Total, Items: make([]BatchItemView, len(items))}
	for i, it := range items {
		iv := BatchItemView{Index: it.Index, ExternalID: pix.OrNull(it.ExternalID), TransactionID: pix.OrNull(it.TransactionID), Status: it.Accepted}
		if it.Accepted == pix.StatusRejected {
			iv.Err = &pix.Error{Code: it.ErrorCode, Message: it.ErrorMessage}
			v.Rejected++
		} else {
			v.Accepted++
		}
		v.Items[i] = iv
	}
	return v
}

// ItemStatus is how batch item it reads now: REJECTED, SCHEDULED while its
// payout waits for its day, else its payout's lookup status.
func ItemStatus(it pix.BatchItem) pix.TxStatus {
	switch {
	case it.TransactionID == "":
		return pix.StatusRejected
	case it.Payout.Scheduled():
		return pix.StatusScheduled
	case it.Payout.ID == "":
		return it.Accepted
	}
	return it.Payout.Status
}

// BatchCounts counts items by ItemStatus, every status of a batch present.
func BatchCounts(items []pix.BatchItem) map[pix.TxStatus]int {
	counts := map[pix.TxStatus]int{pix.StatusPending: 0, pix.StatusScheduled: 0, pix.StatusPaid: 0, pix.StatusCancelled: 0,
		pix.StatusReversed: 0, pix.StatusRejected: 0}
	for _, it := range items {
		counts[ItemStatus(it)]++
	}
	return counts
}

// balanceOf is client c's available balance now.
func (s *Service) balanceOf(ctx context.Context, c pix.Client) (pix.Amount, error) {
	b, err := s.db.Balances(ctx, c.ID)
	if err != nil {
		return 0, fmt.Errorf("balance: %w", err)
	}
	return b[ledger.Available], nil
}
