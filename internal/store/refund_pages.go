package store

import (
	"context"
	"errors"
	"fmt"
	"time"

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
	if f.ClientID == "" {
		return nil, "", errors.New("no client: a list never shows every client's rows")
	}
	rows, next, err := keyPage(ctx, q, keyset[pix.Refund]{table: "refunds", columns: refundColumns, scan: scanRefund,
		key: func(r pix.Refund) (time.Time, string) { return r.CreatedAt, r.ID }},
		[]filter{{"client_id", f.ClientID}, {"transaction_id", f.PaymentID}, {"status", string(f.Status)}}, f.Cursor, f.Limit)
	if err != nil {
		return nil, "", fmt.Errorf("refund history: %w", err)
	}
	return rows, next, nil
}
