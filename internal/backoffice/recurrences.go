package backoffice

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// RecurrencePage returns up to limit recurrences of client clientID (""
// for every client, which only an operator's page asks for), newest
// first, of status status ("" for any), from cursor on, and the next
// page's cursor ("" on the last page). Errors: EInvalid (a cursor this
// operation did not return).
func (s *Service) RecurrencePage(ctx context.Context, clientID string, status pix.RecurrenceStatus, cursor string, limit int) ([]pix.Recurrence, string, error) {
	rows, next, err := s.db.RecurrenceHistory(ctx, store.RecurrenceFilter{ClientID: clientID, Status: status, Cursor: cursor, Limit: limit})
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", pix.Errorf(pix.EInvalid, "bad cursor")
	}
	if err != nil {
		return nil, "", fmt.Errorf("recurrence page: %w", err)
	}
	return rows, next, nil
}

// RecurrenceDetail is a recurrence with its cycles' charges, in calendar
// order.
type RecurrenceDetail struct {
	Recurrence pix.Recurrence
	Cycles     []pix.CycleCharge
}

// RecurrenceDetail reads client clientID's recurrence id with its cycles.
// Errors: ENotFound (also for another client's recurrence).
func (s *Service) RecurrenceDetail(ctx context.Context, clientID, id string) (RecurrenceDetail, error) {
	var d RecurrenceDetail
	r, err := s.db.Recurrence(ctx, clientID, id)
	if errors.Is(err, store.ErrNotFound) {
		return d, pix.Errorf(pix.ENotFound, "recurrence not found")
	}
	if err != nil {
		return d, fmt.Errorf("recurrence detail: %w", err)
	}
	d.Recurrence = r
	if d.Cycles, err = s.db.CycleCharges(ctx, r.ID); err != nil {
		return d, fmt.Errorf("recurrence detail: %w", err)
	}
	return d, nil
}
