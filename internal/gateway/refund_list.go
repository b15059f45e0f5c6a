package gateway

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// RefundsQuery is the raw query of GET /api/v1/gateway/refunds.
type RefundsQuery struct {
	PaymentID, Status, Limit, Cursor string
}

// Issues of a refund list's query.
const (
	issueRefundsPaymentID = "must be the payment_id of a charge (a lower-case UUID v4)"
	issueRefundsStatus    = "must be one of PENDING, COMPLETED, FAILED"
)

// Refunds returns a page of client c's refunds, newest first, as GET
// /api/v1/gateway/refunds/{refund_id} shows each, and the cursor of the
// next page ("" on the last): those of one charge with PaymentID, of one
// status with Status. Limit is 1–100 (default 50); paging is as History's.
// A payment_id of no charge of c's lists nothing. Errors: EInvalid (with
// details naming the parameter).
func (s *Service) Refunds(ctx context.Context, c pix.Client, q RefundsQuery) ([]RefundView, string, error) {
	f := store.RefundFilter{ClientID: c.ID, PaymentID: q.PaymentID, Status: pix.RefundStatus(q.Status), Cursor: q.Cursor, Limit: defaultHistoryLimit}
	var is issues
	if q.PaymentID != "" && !(pix.CanonicalID(q.PaymentID) && q.PaymentID[14] == '4' && strings.IndexByte("89ab", q.PaymentID[19]) >= 0) {
		is.add("payment_id", issueRefundsPaymentID)
	}
	switch pix.RefundStatus(q.Status) {
	case "", pix.RefundPending, pix.RefundCompleted, pix.RefundFailed:
	default:
		is.add("status", issueRefundsStatus)
	}
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
	if err := is.err(); err != nil {
		return nil, "", err
	}
	rows, next, err := s.db.RefundHistory(ctx, f)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", (&issues{{Field: "cursor", Issue: issueHistoryCursor}}).err()
	}
	if err != nil {
		return nil, "", fmt.Errorf("refunds: %w", err)
	}
	out := make([]RefundView, len(rows))
	for i, r := range rows {
		out[i] = refundView(r)
	}
	return out, next, nil
}
