package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
)

// sandboxPay pays the caller's charge as if a payer had paid its BR Code.
func (s *Server) sandboxPay(w http.ResponseWriter, r *http.Request) error {
	t, err := s.gw.Charge(r.Context(), client(r), r.PathValue("payment_id"))
	if err != nil {
		return err
	}
	t, err = s.gw.SandboxPay(r.Context(), t)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, transactionResponse{http.StatusOK, "Charge paid", gateway.View(t)})
	return nil
}

// sandboxExpire cancels the caller's pending charge.
func (s *Server) sandboxExpire(w http.ResponseWriter, r *http.Request) error {
	t, err := s.gw.ExpireCharge(r.Context(), client(r), r.PathValue("payment_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, transactionResponse{http.StatusOK, "Charge cancelled", gateway.View(t)})
	return nil
}
