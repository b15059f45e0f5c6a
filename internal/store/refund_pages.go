package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/pixgate/pixgate/internal/pix"
)

// RefundFilter selects a page of one client's refunds.
type RefundFilter struct {
	ClientID  string
	PaymentID string           // the refunds of one charge, or "" for all
	Status    pix.RefundStatus // or "" for any
	Cursor    string           // from a previous page's next cursor, or ""
	Limit     int
}

// RefundHistory returns a page of a client's refunds, newest first, and
// the cursor of the next page ("" at the end), or ErrBadCursor for a
// cursor it did not issue. Paging is by key (created_at, id), as History's,
// so a page never repeats or skips a row while new ones arrive; the index
// refunds_client_created (version 20) serves it.
func (q *Q) RefundHistory(ctx context.Context, f RefundFilter) ([]pix.Refund, string, error) {
	var where strings.Builder
	args := []any{f.ClientID}
	where.WriteString("client_id = $1")
	add := func(cond string, v any) {
		args = append(args, v)
		fmt.Fprintf(&where, " AND "+cond, len(args))
	}
	if f.PaymentID != "" {
		add("transaction_id = $%d", f.PaymentID)
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
		// A row value, as History's, so that PostgreSQL reads the index as
		// a range.
		fmt.Fprintf(&where, " AND (created_at, id) < ($%d, $%d)", len(args)-1, len(args))
	}
	args = append(args, f.Limit+1)
	rows, err := selectAll(ctx, q, scanRefund, `SELECT `+refundColumns+` FROM refunds WHERE `+where.String()+
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, "", fmt.Errorf("refund history: %w", err)
	}
	next := ""
	if len(rows) > f.Limit {
		rows = rows[:f.Limit]
		last := rows[len(rows)-1]
		next = encodeCursor(ms(last.CreatedAt), last.ID)
	}
	return rows, next, nil
}
