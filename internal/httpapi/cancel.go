package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
)

// cancelCharge cancels the caller's unpaid charge (docs/api.md, Cancel a
// charge): 200 with the charge as lookup shows it.
func (s *Server) cancelCharge(w http.ResponseWriter, r *http.Request) error {
	t, err := s.gw.CancelCharge(r.Context(), client(r), r.PathValue("payment_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, transactionResponse{http.StatusOK, "Charge cancelled", gateway.View(t, s.gw.Today())})
	return nil
}
