package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
)

// refundResponse is the 200 body of GET /api/v1/gateway/refunds/{refund_id}.
type refundResponse struct {
	StatusCode int                `json:"statusCode"`
	Data       gateway.RefundView `json:"data"`
}

// getRefund shows one of the caller's refunds; another client's is 404.
func (s *Server) getRefund(w http.ResponseWriter, r *http.Request) error {
	v, err := s.gw.Refund(r.Context(), client(r), r.PathValue("refund_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, refundResponse{http.StatusOK, v})
	return nil
}
