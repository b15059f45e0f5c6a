package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/stream"
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
		BlockedCents   cents  `json:"blocked_cents"`
		DebtCents      cents  `json:"debt_cents"`
	}
	writeJSON(w, http.StatusOK, struct {
		StatusCode int         `json:"statusCode"`
		Message    string      `json:"message"`
		Data       balanceData `json:"data"`
		Timestamp  string      `json:"timestamp"`
	}{http.StatusOK, gateway.MsgBalanceOK, balanceData{cents(b.Available), "BRL", cents(b.Pending), cents(b.Blocked), cents(b.Debt)},
		gateway.BalanceTimestamp(s.gw.ClientNow(client(r)), s.loc)})
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
	writeJSON(w, http.StatusOK, transactionResponse{http.StatusOK, gateway.MsgLookupOK, gateway.View(t, s.gw.ClientToday(client(r)))})
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
	today := s.gw.ClientToday(client(r))
	for i, t := range rows {
		data[i] = gateway.View(t, today)
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

func (s *Server) statement(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	st, err := s.gw.Statement(r.Context(), client(r), gateway.StatementQuery{From: q.Get("from"), To: q.Get("to"), Format: q.Get("format")})
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", st.ContentType())
	h.Set("Cache-Control", "no-store")
	if st.Format == gateway.StatementCSV {
		h.Set("Content-Disposition", stream.Attachment(statementFilename(st)))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	// A long statement outlives the server's WriteTimeout while the client reads.
	if err := st.Write(r.Context(), stream.NewWriter(w)); err != nil {
		// The status and part of the body are sent: abort the connection
		// so that the body never looks complete (the chunked encoding is
		// not terminated). A client that went away is not a server failure.
		level := slog.LevelError
		if r.Context().Err() != nil {
			level = slog.LevelWarn
		}
		s.logger(r.Context()).LogAttrs(r.Context(), level, "statement aborted",
			slog.String("client_id", client(r).ID), slog.String("format", st.Format), slog.String("error", err.Error()))
		panic(http.ErrAbortHandler)
	}
	return nil
}

// statementFilename is the CSV statement's download name, its dates
// written without ':'.
func statementFilename(st *gateway.Statement) string {
	const layout = "20060102T150405.000Z"
	return "pixgate-statement-" + st.From.UTC().Format(layout) + "-" + st.To.UTC().Format(layout) + ".csv"
}
