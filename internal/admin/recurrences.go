package admin

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/pixgate/pixgate/internal/pix"
)

// recurrenceRow is one line of the recurrences list, with the name of its
// client for an operator's list of every client.
type recurrenceRow struct {
	pix.Recurrence
	ClientName string
}

type recListData struct {
	Clients     []pix.Client // an operator's filter; nil for merchant users
	ClientID    string       // the client filter, "" for every client
	AllClients  bool         // the rows are of every client: show whose each is
	Status      pix.RecurrenceStatus
	Statuses    []pix.RecurrenceStatus
	Rows        []recurrenceRow
	Next, First string // URLs of the next and the first page, or ""
}

// recurrences lists Pix Automático recurrences, newest first, a page at a
// time by the store's keyset cursor: an operator's of every client or of
// the one it picks, a merchant user's of its own client only (naming
// another is a 404, like every page of another client).
func (h *Handler) recurrences(w http.ResponseWriter, r *http.Request) error {
	s, _ := sessionFrom(r)
	ctx := r.Context()
	q := r.URL.Query()
	id := q.Get("client")
	if s.user.Role != pix.RoleOperator {
		if id == "" {
			id = s.user.ClientID
		}
		if id != s.user.ClientID {
			return errNotFound
		}
	}
	v := &view{Page: "recurrences"}
	v.session(s)
	d := recListData{ClientID: id, Statuses: pix.RecurrenceStatuses()}
	if st := pix.RecurrenceStatus(q.Get("status")); slices.Contains(d.Statuses, st) {
		d.Status = st
	}
	names := map[string]string{}
	if v.Operator() {
		cs, err := h.bo.Clients(ctx)
		if err != nil {
			return err
		}
		d.Clients = cs
		for _, c := range cs {
			names[c.ID] = c.Name
		}
	}
	if id != "" {
		c, err := h.gw.Client(ctx, id)
		if pix.ErrorCode(err) == pix.ENotFound {
			return errNotFound
		}
		if err != nil {
			return err
		}
		v.Client = &c
	} else {
		d.AllClients = true
	}
	cursor := q.Get("cursor")
	if len(cursor) > 200 {
		cursor = ""
	}
	rows, next, err := h.bo.RecurrencePage(ctx, id, d.Status, cursor, PageSize)
	if pix.ErrorCode(err) == pix.EInvalid {
		v.Alert = "tx.badcursor"
		cursor = ""
		rows, next, err = h.bo.RecurrencePage(ctx, id, d.Status, cursor, PageSize)
	}
	if err != nil {
		return err
	}
	for _, rec := range rows {
		d.Rows = append(d.Rows, recurrenceRow{Recurrence: rec, ClientName: names[rec.ClientID]})
	}
	base := url.Values{}
	if id != "" && v.Operator() {
		base.Set("client", id)
	}
	if d.Status != "" {
		base.Set("status", string(d.Status))
	}
	d.Next, d.First = pagerLinks("/admin/recurrences", base, cursor, next)
	v.D = d
	h.render(w, r, http.StatusOK, v)
	return nil
}

// recurrence shows one recurrence: its terms, where it stands, and its
// cycles, each linking to its charge's transaction page.
func (h *Handler) recurrence(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if len(id) > 64 {
		return errNotFound
	}
	d, err := h.bo.RecurrenceDetail(r.Context(), c.ID, id)
	if pix.ErrorCode(err) == pix.ENotFound {
		return errNotFound
	}
	if err != nil {
		return err
	}
	v := &view{Page: "recurrence", Client: &c, D: d}
	v.session(s)
	h.render(w, r, http.StatusOK, v)
	return nil
}

// recurrencePath is the panel's page of a client's recurrence.
func recurrencePath(clientID, id string) string {
	return clientBase(clientID) + "/recurrences/" + url.PathEscape(id)
}

// recurrencesPath is the recurrences list of one client.
func recurrencesPath(clientID string) string {
	return "/admin/recurrences?" + url.Values{"client": {clientID}}.Encode()
}
