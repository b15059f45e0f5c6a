package httpapi

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/pixgate/pixgate/internal/pix"
)

// family is the error body shape of an endpoint group (docs/api.md, Errors): wallet
// endpoints answer {statusCode, message}; all others add error.
type family int

const (
	gatewayFamily family = iota
	walletFamily
)

func familyOf(r *http.Request) family {
	if strings.HasPrefix(r.URL.Path, "/api/v1/wallet/") {
		return walletFamily
	}
	return gatewayFamily
}

// errorSpec is one row of the table that maps a domain code to a response.
type errorSpec struct {
	status  int
	gateway string // message for gateway/general endpoints when the error has none to show
	wallet  string // message for wallet endpoints
	show    bool   // whether the error's own message is shown
}

var errorTable = map[pix.Code]errorSpec{
	pix.EInvalid:             {http.StatusBadRequest, "Invalid request parameters", "Invalid request parameters", false},
	pix.EInvalidKey:          {http.StatusBadRequest, "Invalid key format", "Invalid key format", false},
	pix.EUnauthorized:        {http.StatusUnauthorized, "Invalid credentials", "Falha na autenticação.", false},
	pix.ENotFound:            {http.StatusNotFound, "Not found", "Transação não encontrada.", true},
	pix.EConflict:            {http.StatusConflict, pix.MsgExternalIDInProgress, pix.MsgExternalIDInProgress, true},
	pix.EUnprocessable:       {http.StatusUnprocessableEntity, "Unprocessable request", "Unprocessable request", true},
	pix.EInsufficientBalance: {http.StatusUnprocessableEntity, "Insufficient balance", "Insufficient balance", false},
	pix.EIdempotencyMismatch: {http.StatusUnprocessableEntity, pix.MsgExternalIDMismatch, pix.MsgExternalIDMismatch, true},
	pix.ERateLimited:         {http.StatusTooManyRequests, "Rate limit exceeded", "Rate limit exceeded", false},
	pix.EProviderUnavailable: {http.StatusBadGateway, "Payment provider unavailable", "Payment provider unavailable", false},
	pix.EInternal:            {http.StatusInternalServerError, "Internal server error", "Erro interno.", false},
}

// errorBody is the error envelope of docs/api.md (Errors). Error is omitted for wallet
// endpoints; Details only on gateway endpoints (validation errors, a key's
// expected form, the amounts behind Insufficient balance); RetryAfter only
// on 429.
type errorBody struct {
	StatusCode int              `json:"statusCode"`
	Message    string           `json:"message"`
	Error      string           `json:"error,omitempty"`
	Details    []pix.FieldIssue `json:"details,omitempty"`
	RetryAfter *int             `json:"retryAfter,omitempty"`
}

// httpError is an error decided by the HTTP layer itself (415, 413, 404, 405).
type httpError struct {
	status  int
	gateway string
	wallet  string
}

func (e *httpError) Error() string { return e.gateway }

var (
	errTooLarge         = &httpError{http.StatusRequestEntityTooLarge, "Request body too large (limit 64 KiB)", "Request body too large (limit 64 KiB)"}
	errMediaType        = &httpError{http.StatusUnsupportedMediaType, "Content-Type must be application/json", "Content-Type must be application/json"}
	errRouteNotFound    = &httpError{http.StatusNotFound, "Not found", "Not found"}
	errMethodNotAllowed = &httpError{http.StatusMethodNotAllowed, "Method not allowed", "Method not allowed"}
)

// writeError writes err as the error body of the request's endpoint family.
// Anything that is not a domain or HTTP error is logged and becomes the 500 body.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	fam := familyOf(r)
	body := errorBody{}
	var he *httpError
	// The database out of reach is no failure of the request: 503, once
	// for every endpoint (unavailable.go).
	if s.gw != nil && s.gw.Unavailable(err) {
		s.writeUnavailable(w, r, err)
		return
	}
	if errors.As(err, &he) {
		body.StatusCode = he.status
		body.Message = he.gateway
		if fam == walletFamily {
			body.Message = he.wallet
		}
	} else {
		pe := pix.AsError(err)
		if pe == nil {
			s.logger(r.Context()).ErrorContext(r.Context(), "request failed", "error", err.Error())
			pe = &pix.Error{Code: pix.EInternal}
		}
		spec, ok := errorTable[pe.Code]
		if !ok {
			spec = errorTable[pix.EInternal]
		}
		body.StatusCode = spec.status
		body.Message = spec.gateway
		if fam == walletFamily {
			body.Message = spec.wallet
		}
		if pe.Message != "" && (spec.show || (pe.Code == pix.EInvalid && fam == walletFamily)) {
			body.Message = pe.Message
		}
		if fam == gatewayFamily {
			body.Details = pe.Details
		}
	}
	if fam == gatewayFamily {
		body.Error = http.StatusText(body.StatusCode)
	}
	if body.StatusCode >= 500 {
		s.logger(r.Context()).LogAttrs(r.Context(), slog.LevelError, "server error", slog.Int("status", body.StatusCode))
	}
	writeJSON(w, body.StatusCode, body)
}
