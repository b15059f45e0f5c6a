package admin

import (
	"net/http"
	"net/url"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
)

// This file holds the panel's pages of the marketplaces (docs/marketplace.md):
// a parent's sub-accounts, which its merchant users read but never change,
// and the read-only scope their pages are opened in.

// FamilySubs is how many sub-accounts the operators' list of clients shows
// beneath each parent; the rest are a link to the parent's sub-accounts.
const FamilySubs = 20

// scopeRead is scope for the pages that only read (a client's overview,
// its transactions and one transaction): a parent's merchant user may also
// open those of its own sub-accounts, and readOnly reports that case, in
// which the page offers no action. Anyone else's sub-account, or a client
// that does not exist, is the same 404 as in scope.
func (h *Handler) scopeRead(r *http.Request) (s *session, c pix.Client, readOnly bool, err error) {
	s, _ = sessionFrom(r)
	id := r.PathValue("client")
	if s.user.Role == pix.RoleOperator || id == s.user.ClientID {
		s, c, err = h.scope(r)
		return s, c, false, err
	}
	c, err = h.gw.Client(r.Context(), id)
	if pix.ErrorCode(err) == pix.ENotFound || (err == nil && c.ParentID != s.user.ClientID) {
		return nil, pix.Client{}, false, errNotFound
	}
	if err != nil {
		return nil, pix.Client{}, false, err
	}
	return s, c, true, nil
}

// clientView is the view of a page about client c, read-only or not.
func clientView(s *session, c *pix.Client, page string, readOnly bool) *view {
	v := &view{Page: page, Client: c, ReadOnly: readOnly}
	v.session(s)
	return v
}

type accountsData struct {
	Rows        []backoffice.AccountRow
	Next, First string // URLs of the next and the first page, or ""
}

// subAccounts lists a top-level client's sub-accounts, newest first, a page
// at a time: to its merchant users read-only, to operators as every
// client's pages. A sub-account has none (the API refuses to nest them),
// so its page is the 404 of a page that does not exist.
func (h *Handler) subAccounts(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	if c.ParentID != "" {
		return errNotFound
	}
	v := clientView(s, &c, "accounts", false)
	cursor := r.URL.Query().Get("cursor")
	if len(cursor) > 200 {
		cursor = ""
	}
	rows, next, err := h.bo.SubAccountPage(r.Context(), c.ID, cursor, PageSize)
	if pix.ErrorCode(err) == pix.EInvalid {
		v.Alert = "tx.badcursor"
		cursor = ""
		rows, next, err = h.bo.SubAccountPage(r.Context(), c.ID, cursor, PageSize)
	}
	if err != nil {
		return err
	}
	d := accountsData{Rows: rows}
	path := accountsPath(c.ID)
	if next != "" {
		d.Next = path + "?" + url.Values{"cursor": {next}}.Encode()
	}
	if cursor != "" {
		d.First = path
	}
	v.D = d
	h.render(w, r, http.StatusOK, v)
	return nil
}

func accountsPath(clientID string) string { return clientBase(clientID) + "/accounts" }

// parentOf fills in the parent of a sub-account's page, so that every
// page about a sub-account names it. A failed read costs only the name:
// the page shows the parent's id instead.
func (h *Handler) parentOf(r *http.Request, v *view) {
	if v.Client == nil || v.Client.ParentID == "" || v.Parent != nil {
		return
	}
	p, err := h.gw.Client(r.Context(), v.Client.ParentID)
	if err != nil {
		h.log.WarnContext(r.Context(), "admin: read parent client", "client_id", v.Client.ID, "error", err.Error())
		return
	}
	v.Parent = &p
}

// ParentLinked reports whether the viewer may open the parent's pages: an
// operator, or the parent's own merchant user; a sub-account's user sees
// only the parent's name.
func (v *view) ParentLinked() bool {
	return v.Client != nil && v.Client.ParentID != "" && (v.Operator() || v.User.ClientID == v.Client.ParentID)
}
