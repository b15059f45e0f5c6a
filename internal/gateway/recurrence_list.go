package gateway

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// MsgRecurrencesOK is the message of GET /api/v1/gateway/recurrences.
const MsgRecurrencesOK = "Recurrences listed successfully."

// issueRecurrenceStatus names the statuses the list filters on.
const issueRecurrenceStatus = "must be one of CREATED, APPROVED, REJECTED, EXPIRED, CANCELLED, FINISHED"

// RecurrenceListQuery is the raw query of GET /api/v1/gateway/recurrences.
type RecurrenceListQuery struct {
	Limit, Cursor, Status string
}

// Recurrences returns a page of client c's recurrences, newest first, and
// the next cursor ("" on the last page), paged as History is: limit 1–100
// (default 50), a cursor only as this list returned it. Errors: EInvalid
// with details naming each bad parameter.
func (s *Service) Recurrences(ctx context.Context, c pix.Client, q RecurrenceListQuery) ([]RecurrenceSummary, string, error) {
	f := store.RecurrenceFilter{ClientID: c.ID, Limit: defaultHistoryLimit, Cursor: q.Cursor, Status: pix.RecurrenceStatus(q.Status)}
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
	if q.Status != "" && !f.Status.Valid() {
		is.add("status", issueRecurrenceStatus)
	}
	if len(is) > 0 {
		return nil, "", historyError(is)
	}
	// The client is always set: the list never shows another client's.
	if f.ClientID == "" {
		return nil, "", errors.New("recurrences: no client")
	}
	rows, next, err := s.db.RecurrenceHistory(ctx, f)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", historyError(issues{{Field: "cursor", Issue: issueHistoryCursor}})
	}
	if err != nil {
		return nil, "", fmt.Errorf("recurrences: %w", err)
	}
	out := make([]RecurrenceSummary, len(rows))
	for i, r := range rows {
		out[i] = RecurrenceSummaryOf(r)
	}
	return out, next, nil
}
