package backoffice

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// BatchPage returns up to limit batches of payouts of client clientID (""
// for every client, an operator's page), newest first, in state state (""
// for any), from cursor on, and the next page's cursor ("" on the last
// page). Errors: EInvalid (a cursor this operation did not return).
func (s *Service) BatchPage(ctx context.Context, clientID, state, cursor string, limit int) ([]pix.Batch, string, error) {
	rows, next, err := s.db.BatchHistory(ctx, store.BatchFilter{ClientID: clientID, State: state, Cursor: cursor, Limit: limit})
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", pix.Errorf(pix.EInvalid, "bad cursor")
	}
	if err != nil {
		return nil, "", fmt.Errorf("batch page: %w", err)
	}
	return rows, next, nil
}

// BatchDetail is a batch with its items, each with its payout as it now is.
type BatchDetail struct {
	Batch pix.Batch
	Items []pix.BatchItem
}

// BatchDetail reads client clientID's batch id with its items. Errors:
// ENotFound (also for another client's batch).
func (s *Service) BatchDetail(ctx context.Context, clientID, id string) (BatchDetail, error) {
	var d BatchDetail
	b, err := s.db.Batch(ctx, clientID, id)
	if errors.Is(err, store.ErrNotFound) {
		return d, pix.Errorf(pix.ENotFound, "batch not found")
	}
	if err != nil {
		return d, fmt.Errorf("batch detail: %w", err)
	}
	d.Batch = b
	if d.Items, err = s.db.BatchItems(ctx, b.ID); err != nil {
		return d, fmt.Errorf("batch detail: %w", err)
	}
	return d, nil
}

// ScheduledPayout is a scheduled payout as the panel lists it: its
// schedule and its payout as it now is.
type ScheduledPayout struct {
	store.ScheduledRow
	Payout pix.Transaction
}

// ScheduledStates are the states a scheduled payout's schedule goes
// through: waiting ("scheduled"), started, cancelled, failed.
func ScheduledStates() []string { return store.ScheduledStates() }

// ScheduledPage returns up to limit scheduled payouts of client clientID
// ("" for every client), latest day first, in state state ("" for any),
// from cursor on, and the next page's cursor. Errors: EInvalid (a cursor
// this operation did not return).
func (s *Service) ScheduledPage(ctx context.Context, clientID, state, cursor string, limit int) ([]ScheduledPayout, string, error) {
	rows, next, err := s.db.ScheduledHistory(ctx, store.ScheduledFilter{ClientID: clientID, State: state, Cursor: cursor, Limit: limit})
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", pix.Errorf(pix.EInvalid, "bad cursor")
	}
	if err != nil {
		return nil, "", fmt.Errorf("scheduled page: %w", err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.TransactionID
	}
	ts, err := s.db.TransactionsByIDs(ctx, ids)
	if err != nil {
		return nil, "", fmt.Errorf("scheduled page: %w", err)
	}
	out := make([]ScheduledPayout, len(rows))
	for i, r := range rows {
		out[i] = ScheduledPayout{ScheduledRow: r, Payout: ts[r.TransactionID]}
	}
	return out, next, nil
}
