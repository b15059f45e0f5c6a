package httpapi

import (
	"net/http"
	"strings"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
)

func (s *Server) createPayout(w http.ResponseWriter, r *http.Request) error {
	var req gateway.PayoutRequest
	return idempotentCreate(w, r, &req, http.StatusOK, func(in gateway.Idempotent[gateway.PayoutRequest]) (any, bool, error) {
		resp, replayed, err := s.gw.CreatePayout(r.Context(), client(r), in)
		noteLog(r, "", resp.TransactionID)
		return resp, replayed, err
	})
}

func (s *Server) createRefund(w http.ResponseWriter, r *http.Request) error {
	var req gateway.RefundRequest
	return idempotentCreate(w, r, &req, http.StatusOK, func(in gateway.Idempotent[gateway.RefundRequest]) (any, bool, error) {
		resp, replayed, err := s.gw.CreateRefund(r.Context(), client(r), in)
		noteLog(r, "", resp.PaymentID) // the charge it refunds
		return resp, replayed, err
	})
}

func (s *Server) createCharge(w http.ResponseWriter, r *http.Request) error {
	var req gateway.ChargeRequest
	return idempotentCreate(w, r, &req, http.StatusCreated, func(in gateway.Idempotent[gateway.ChargeRequest]) (any, bool, error) {
		resp, replayed, err := s.gw.CreateCharge(r.Context(), client(r), in)
		noteLog(r, "", resp.PaymentID)
		return resp, replayed, err
	})
}

// idempotentCreate decodes the body into req, runs create with it, the
// Idempotency-Key header and the body's digest (gateway.Keyed), and writes
// its response with status — marked Idempotent-Replayed when it replays an
// earlier one.
func idempotentCreate[T any](w http.ResponseWriter, r *http.Request, req *T, status int,
	create func(in gateway.Idempotent[T]) (any, bool, error)) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	body, err := readJSON(r, req)
	if err != nil {
		return err
	}
	resp, replayed, err := create(gateway.Keyed(req, key, body))
	if err != nil {
		return err
	}
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeJSON(w, status, resp)
	return nil
}

// idempotencyKey returns the Idempotency-Key header, "" when it is absent.
// A header that is present but blank, or sent more than once, is refused
// (400 naming it) rather than read as absent: a client that meant to send a
// key would otherwise get no idempotency and a retry could pay twice.
// (The server has already trimmed spaces around the value.)
func idempotencyKey(r *http.Request) (string, error) {
	vals, ok := r.Header["Idempotency-Key"]
	if !ok {
		return "", nil
	}
	issue := ""
	switch {
	case len(vals) > 1:
		issue = "must be sent once"
	case strings.TrimSpace(vals[0]) == "":
		issue = "must not be empty; omit the header to send no key"
	default:
		return vals[0], nil
	}
	return "", &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters",
		Details: []pix.FieldIssue{{Field: "Idempotency-Key", Issue: issue}}}
}
