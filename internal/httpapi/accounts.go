package httpapi

import (
	"net/http"

	"github.com/pixgate/pixgate/internal/account"
	"github.com/pixgate/pixgate/internal/gateway"
)

// accountResponse is the body of every answer that shows one account (or
// its new secret): data is the use case's view.
type accountResponse[T any] struct {
	StatusCode int `json:"statusCode"`
	Data       T   `json:"data"`
}

// accountPage is the body of the sub-accounts' list (the history shape).
type accountPage struct {
	StatusCode int            `json:"statusCode"`
	Message    string         `json:"message"`
	Data       []account.View `json:"data"`
	NextCursor *string        `json:"next_cursor"`
}

func (s *Server) accountMe(w http.ResponseWriter, r *http.Request) error {
	m, err := s.gw.Accounts().Me(r.Context(), client(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, accountResponse[account.Me]{http.StatusOK, m})
	return nil
}

func (s *Server) createAccount(w http.ResponseWriter, r *http.Request) error {
	var req account.CreateRequest
	return idempotentCreate(w, r, &req, http.StatusCreated, func(in gateway.Idempotent[account.CreateRequest]) (any, bool, error) {
		c, replayed, err := s.gw.Accounts().Create(r.Context(), client(r), in)
		return accountResponse[account.Created]{http.StatusCreated, c}, replayed, err
	})
}

func (s *Server) listAccounts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	rows, next, err := s.gw.Accounts().List(r.Context(), client(r), account.ListQuery{Limit: q.Get("limit"), Cursor: q.Get("cursor")})
	if err != nil {
		return err
	}
	page := accountPage{StatusCode: http.StatusOK, Message: account.MsgAccountsOK, Data: rows}
	if next != "" {
		page.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *Server) getAccount(w http.ResponseWriter, r *http.Request) error {
	v, err := s.gw.Accounts().Get(r.Context(), client(r), r.PathValue("account_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, accountResponse[account.View]{http.StatusOK, v})
	return nil
}

func (s *Server) rotateAccountSecret(w http.ResponseWriter, r *http.Request) error {
	v, err := s.gw.Accounts().RotateSecret(r.Context(), client(r), r.PathValue("account_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, accountResponse[account.Rotated]{http.StatusOK, v})
	return nil
}
