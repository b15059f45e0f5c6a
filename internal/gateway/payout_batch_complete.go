package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/outbox"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// BatchStatusCompleted is the statusTransaction of pix.batch.completed.
const BatchStatusCompleted = "COMPLETED"

// BatchEventBody is the body of pix.batch.completed (docs/webhooks.md).
type BatchEventBody struct {
	ID                string               `json:"id"`
	Event             string               `json:"event"`
	StatusTransaction string               `json:"statusTransaction"`
	BatchID           string               `json:"batch_id"`
	ExternalID        string               `json:"external_id"`
	Total             int                  `json:"total"`
	Accepted          int                  `json:"accepted"`
	Rejected          int                  `json:"rejected"`
	Counts            map[pix.TxStatus]int `json:"counts"`
	OccurredAt        string               `json:"occurred_at"`
}

// CompleteBatches writes pix.batch.completed, once, for up to limit
// accepted batches whose every accepted item is final, and returns how
// many it completed. A job task runs it every job interval; each batch is
// completed by a guarded update in the transaction of its event, so two
// nodes never send it twice.
func (p *Payouts) CompleteBatches(ctx context.Context, limit int) (int, error) {
	due, err := p.s.db.CompletableBatches(ctx, limit)
	if err != nil && len(due) == 0 {
		return 0, fmt.Errorf("complete batches: %w", err)
	}
	n := 0
	var errs []error
	for _, b := range due {
		ok, err := p.complete(p.s.clocks.For(ctx, b.ClientID), b)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// complete marks batch b completed with its event, and reports whether it
// did (false: another node did first).
func (p *Payouts) complete(ctx context.Context, b pix.Batch) (bool, error) {
	at := p.s.clocks.At(ctx)
	done := false
	err := p.s.w.Write(ctx, func(tx *store.Tx, o *outbox.Events) error {
		ok, err := tx.CompleteBatch(ctx, b.ID, p.s.now())
		if err != nil || !ok {
			return err
		}
		items, err := tx.BatchItems(ctx, b.ID)
		if err != nil {
			return err
		}
		body := BatchEventBody{ID: p.s.w.EventID(), Event: pix.EventBatchCompleted, StatusTransaction: BatchStatusCompleted,
			BatchID: b.ID, ExternalID: b.ExternalID, Total: b.Total, Accepted: b.Accepted, Rejected: b.Rejected,
			Counts: BatchCounts(items), OccurredAt: pix.FormatTime(at)}
		payload, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("batch event payload: %w", err)
		}
		done = true
		return o.Insert(ctx, tx, pix.Event{ID: body.ID, ClientID: b.ClientID, TransactionID: b.ID, Type: pix.EventBatchCompleted,
			URL: b.CallbackURL, Payload: string(payload), CreatedAt: at})
	})
	if err != nil {
		return false, fmt.Errorf("complete batch %s: %w", b.ID, err)
	}
	return done, nil
}
