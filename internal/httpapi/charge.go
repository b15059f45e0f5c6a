package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
)

func (s *Server) createCharge(w http.ResponseWriter, r *http.Request) error {
	var req gateway.ChargeRequest
	body, err := readJSON(r, &req)
	if err != nil {
		return err
	}
	req.IdempotencyKey = r.Header.Get("Idempotency-Key")
	resp, replayed, err := s.gw.CreateCharge(r.Context(), client(r), &req, body)
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusCreated, resp)
	return nil
}
