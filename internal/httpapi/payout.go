package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
)

func (s *Server) createPayout(w http.ResponseWriter, r *http.Request) error {
	var req gateway.PayoutRequest
	body, err := readJSON(r, &req)
	if err != nil {
		return err
	}
	resp, replayed, err := s.gw.CreatePayout(r.Context(), client(r), &req, r.Header.Get("Idempotency-Key"), body)
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

func (s *Server) createRefund(w http.ResponseWriter, r *http.Request) error {
	var req gateway.RefundRequest
	body, err := readJSON(r, &req)
	if err != nil {
		return err
	}
	resp, replayed, err := s.gw.CreateRefund(r.Context(), client(r), &req, r.Header.Get("Idempotency-Key"), body)
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
