package backoffice

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// DisputeQuery selects a page of MED disputes for the panel.
type DisputeQuery struct {
	// ClientID is the one client whose disputes are listed; "" only with
	// AllClients.
	ClientID string
	// AllClients lists every client's disputes: an operator's page only.
	AllClients bool
	Status     pix.DisputeStatus // or "" for any
	Cursor     string            // from a previous page's next cursor, or ""
	Limit      int
}

// DisputePage returns up to q.Limit disputes, newest first (by when they
// opened), of one client or of every client as q says, of status q.Status
// ("" for any), from q.Cursor on, and the next page's cursor ("" on the
// last page). Errors: EInvalid (a cursor this operation did not return, or
// a query naming no client and not every client).
func (s *Service) DisputePage(ctx context.Context, q DisputeQuery) ([]pix.Dispute, string, error) {
	if q.AllClients == (q.ClientID != "") {
		return nil, "", pix.Errorf(pix.EInvalid, "name one client or every client")
	}
	rows, next, err := s.db.DisputeHistory(ctx, store.DisputeFilter{ClientID: q.ClientID, AllClients: q.AllClients,
		Status: q.Status, Cursor: q.Cursor, Limit: q.Limit})
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", pix.Errorf(pix.EInvalid, "bad cursor")
	}
	if err != nil {
		return nil, "", fmt.Errorf("dispute page: %w", err)
	}
	return rows, next, nil
}
