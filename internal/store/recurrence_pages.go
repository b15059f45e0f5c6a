package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/pixgate/pixgate/internal/pix"
)

// RecurrenceFilter selects a page of recurrences, as the panel lists them.
type RecurrenceFilter struct {
	ClientID string               // one client's, or "" for every client's
	Status   pix.RecurrenceStatus // or "" for any
	Cursor   string               // from a previous page's next cursor, or ""
	Limit    int
}

// RecurrenceHistory returns a page of recurrences, newest first, and the
// cursor of the next page ("" at the end), or ErrBadCursor for a cursor it
// did not issue. Paging is by key (created_at, id), as History's, so a
// page never repeats or skips a row while new ones arrive.
func (q *Q) RecurrenceHistory(ctx context.Context, f RecurrenceFilter) ([]pix.Recurrence, string, error) {
	var where strings.Builder
	var args []any
	where.WriteString("1 = 1")
	add := func(cond string, v any) {
		args = append(args, v)
		fmt.Fprintf(&where, " AND "+cond, len(args))
	}
	if f.ClientID != "" {
		add("client_id = $%d", f.ClientID)
	}
	if f.Status != "" {
		add("status = $%d", f.Status)
	}
	if f.Cursor != "" {
		at, id, err := decodeCursor(f.Cursor)
		if err != nil {
			return nil, "", err
		}
		args = append(args, at, id)
		// A row value, as History's, so that PostgreSQL reads the
		// (created_at, id) index as a range.
		fmt.Fprintf(&where, " AND (created_at, id) < ($%d, $%d)", len(args)-1, len(args))
	}
	args = append(args, f.Limit+1)
	rows, err := selectAll(ctx, q, scanRecurrence, `SELECT `+recurrenceColumns+` FROM recurrences WHERE `+where.String()+
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, "", fmt.Errorf("recurrence history: %w", err)
	}
	next := ""
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		last := rows[len(rows)-1]
		next = encodeCursor(ms(last.CreatedAt), last.ID)
	}
	return rows, next, nil
}

// encodeCursor is the cursor decodeCursor reads.
func encodeCursor(at int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at, 10) + "|" + id))
}
