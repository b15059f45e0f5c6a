package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
)

func (s *Server) createPayout(w http.ResponseWriter, r *http.Request) error {
	var req gateway.PayoutRequest
	return s.idempotentCreate(w, r, &req, http.StatusOK, func(body []byte, key string) (any, bool, error) {
		resp, replayed, err := s.gw.CreatePayout(r.Context(), client(r), &req, key, body)
		noteLog(r, "", resp.TransactionID)
		return resp, replayed, err
	})
}

func (s *Server) createRefund(w http.ResponseWriter, r *http.Request) error {
	var req gateway.RefundRequest
	return s.idempotentCreate(w, r, &req, http.StatusOK, func(body []byte, key string) (any, bool, error) {
		resp, replayed, err := s.gw.CreateRefund(r.Context(), client(r), &req, key, body)
		noteLog(r, "", resp.PaymentID) // the charge it refunds
		return resp, replayed, err
	})
}

func (s *Server) createCharge(w http.ResponseWriter, r *http.Request) error {
	var req gateway.ChargeRequest
	return s.idempotentCreate(w, r, &req, http.StatusCreated, func(body []byte, key string) (any, bool, error) {
		req.IdempotencyKey = key
		resp, replayed, err := s.gw.CreateCharge(r.Context(), client(r), &req, body)
		noteLog(r, "", resp.PaymentID)
		return resp, replayed, err
	})
}

// idempotentCreate decodes the body into req, runs create with the raw body
// and the Idempotency-Key header, and writes its response with status —
// marked Idempotent-Replayed when it replays an earlier one.
func (s *Server) idempotentCreate(w http.ResponseWriter, r *http.Request, req any, status int,
	create func(body []byte, key string) (any, bool, error)) error {
	body, err := readJSON(r, req)
	if err != nil {
		return err
	}
	resp, replayed, err := create(body, r.Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, status, resp)
	return nil
}
