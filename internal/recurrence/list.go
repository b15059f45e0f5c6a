package recurrence

import (
	"context"
	"errors"
	"fmt"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// MsgListed is the message of GET /api/v1/gateway/recurrences.
const MsgListed = "Recurrences listed successfully."

// issueRecurrenceStatus names the statuses the list filters on.
const issueRecurrenceStatus = "must be one of CREATED, APPROVED, REJECTED, EXPIRED, CANCELLED, FINISHED"

// ListQuery is the raw query of GET /api/v1/gateway/recurrences.
type ListQuery struct {
	Limit, Cursor, Status string
}

// List returns a page of client c's recurrences, newest first, and
// the next cursor ("" on the last page), paged as History is: limit 1–100
// (default 50), a cursor only as this list returned it. Errors: EInvalid
// with details naming each bad parameter.
func (s *Service) List(ctx context.Context, c pix.Client, q ListQuery) ([]Summary, string, error) {
	limit, is := pix.PageParams(q.Limit, q.Cursor)
	f := store.RecurrenceFilter{ClientID: c.ID, Limit: limit, Cursor: q.Cursor, Status: pix.RecurrenceStatus(q.Status)}
	if q.Status != "" && !f.Status.Valid() {
		is = append(is, pix.FieldIssue{Field: "status", Issue: issueRecurrenceStatus})
	}
	if len(is) > 0 {
		return nil, "", pix.ListError(is)
	}
	// The client is always set: the list never shows another client's.
	if f.ClientID == "" {
		return nil, "", errors.New("recurrences: no client")
	}
	rows, next, err := s.db.RecurrenceHistory(ctx, f)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", pix.ListError([]pix.FieldIssue{{Field: "cursor", Issue: pix.IssuePageCursor}})
	}
	if err != nil {
		return nil, "", fmt.Errorf("recurrences: %w", err)
	}
	out := make([]Summary, len(rows))
	for i, r := range rows {
		out[i] = SummaryOf(r)
	}
	return out, next, nil
}
