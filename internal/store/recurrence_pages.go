package store

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

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
	rows, next, err := keyPage(ctx, q, keyset[pix.Recurrence]{table: "recurrences", columns: recurrenceColumns, scan: scanRecurrence,
		key: func(r pix.Recurrence) (time.Time, string) { return r.CreatedAt, r.ID }},
		[]filter{{"client_id", f.ClientID}, {"status", string(f.Status)}}, f.Cursor, f.Limit)
	if err != nil {
		return nil, "", fmt.Errorf("recurrence history: %w", err)
	}
	return rows, next, nil
}

// keyset is one table's newest-first paging by key (at, id): a page never
// repeats or skips a row while new ones arrive.
type keyset[T any] struct {
	table, columns string
	// at is the time column paged by (created_at when ""), id the
	// column that breaks its ties (id when "").
	at, id string
	scan   func(scanner) (T, error)
	key    func(T) (time.Time, string)
}

// filter is one equality a list filters on; an empty value filters nothing.
type filter struct{ column, value string }

// keyPage returns a page of k's table, newest first, the rows matching
// every filter, from cursor (as a previous page returned it, or ""), and
// the next page's cursor ("" at the end); ErrBadCursor for a cursor it did
// not issue. The row value comparison lets PostgreSQL read the (at, id)
// index as a range.
func keyPage[T any](ctx context.Context, q *Q, k keyset[T], filters []filter, cursor string, limit int) ([]T, string, error) {
	at, idCol := cmp.Or(k.at, "created_at"), cmp.Or(k.id, "id")
	var where strings.Builder
	var args []any
	where.WriteString("1 = 1")
	for _, f := range filters {
		if f.value != "" {
			args = append(args, f.value)
			fmt.Fprintf(&where, " AND %s = $%d", f.column, len(args))
		}
	}
	if cursor != "" {
		cat, id, err := decodeCursor(cursor)
		if err != nil {
			return nil, "", err
		}
		args = append(args, cat, id)
		fmt.Fprintf(&where, " AND (%s, %s) < ($%d, $%d)", at, idCol, len(args)-1, len(args))
	}
	args = append(args, limit+1)
	rows, err := selectAll(ctx, q, k.scan, `SELECT `+k.columns+` FROM `+k.table+` WHERE `+where.String()+
		fmt.Sprintf(` ORDER BY %s DESC, %s DESC LIMIT $%d`, at, idCol, len(args)), args...)
	if err != nil {
		return nil, "", err
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		t, id := k.key(rows[len(rows)-1])
		next = encodeCursor(ms(t), id)
	}
	return rows, next, nil
}

// encodeCursor is the cursor decodeCursor reads.
func encodeCursor(at int64, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at, 10) + "|" + id))
}
