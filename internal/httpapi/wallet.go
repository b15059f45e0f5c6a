package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
)

// cents is an amount of centavos written as a JSON integer.
type cents int64

func (s *Server) balance(w http.ResponseWriter, r *http.Request) error {
	b, err := s.gw.Balance(r.Context(), client(r))
	if err != nil {
		return err
	}
	type balanceData struct {
		AvailableCents cents  `json:"available_cents"`
		Currency       string `json:"currency"`
		PendingCents   cents  `json:"pending_cents"`
	}
	writeJSON(w, http.StatusOK, struct {
		StatusCode int         `json:"statusCode"`
		Message    string      `json:"message"`
		Data       balanceData `json:"data"`
		Timestamp  string      `json:"timestamp"`
	}{http.StatusOK, gateway.MsgBalanceOK, balanceData{cents(b.Available), "BRL", cents(b.Pending)},
		gateway.BalanceTimestamp(s.gw.Now(), s.loc)})
	return nil
}

type lookupRequest struct {
	PaymentID  string `json:"payment_id"`
	ExternalID string `json:"external_id"`
}

// transactionResponse is the body of every endpoint that answers with one
// transaction (lookup and the sandbox actions).
type transactionResponse struct {
	StatusCode int                     `json:"statusCode"`
	Message    string                  `json:"message"`
	Data       gateway.TransactionView `json:"data"`
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) error {
	var req lookupRequest
	if _, err := readJSON(r, &req); err != nil {
		return err
	}
	t, err := s.gw.Lookup(r.Context(), client(r), req.PaymentID, req.ExternalID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, transactionResponse{http.StatusOK, gateway.MsgLookupOK, gateway.View(t)})
	return nil
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	rows, next, err := s.gw.History(r.Context(), client(r), gateway.HistoryQuery{
		Limit: q.Get("limit"), Cursor: q.Get("cursor"), Status: q.Get("status"), Type: q.Get("type"), From: q.Get("from"), To: q.Get("to"),
	})
	if err != nil {
		return err
	}
	data := make([]gateway.TransactionView, len(rows))
	for i, t := range rows {
		data[i] = gateway.View(t)
	}
	var nextCursor *string
	if next != "" {
		nextCursor = &next
	}
	writeJSON(w, http.StatusOK, struct {
		StatusCode int                       `json:"statusCode"`
		Message    string                    `json:"message"`
		Data       []gateway.TransactionView `json:"data"`
		NextCursor *string                   `json:"next_cursor"`
	}{http.StatusOK, gateway.MsgHistoryOK, data, nextCursor})
	return nil
}
