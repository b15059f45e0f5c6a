package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
)

// refundPage is the body of GET /api/v1/gateway/refunds.
type refundPage struct {
	StatusCode int                  `json:"statusCode"`
	Message    string               `json:"message"`
	Data       []gateway.RefundView `json:"data"`
	NextCursor *string              `json:"next_cursor"`
}

// listRefunds lists the caller's refunds, newest first, a page at a time.
func (s *Server) listRefunds(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	rows, next, err := s.gw.Refunds(r.Context(), client(r), gateway.RefundsQuery{
		PaymentID: q.Get("payment_id"), Status: q.Get("status"), Limit: q.Get("limit"), Cursor: q.Get("cursor"),
	})
	if err != nil {
		return err
	}
	page := refundPage{StatusCode: http.StatusOK, Message: "Refunds listed successfully.", Data: rows}
	if next != "" {
		page.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
