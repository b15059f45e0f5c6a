package admin

import (
	"net/http"
	"net/url"
	"time"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
)

// DueSoon is how close a dispute's deadline (its respond_by) is when its
// row is marked: the merchant has less than a day left to defend it.
const DueSoon = 24 * time.Hour

// Deadline marks of an OPEN dispute's row.
const (
	deadlineSoon    = "soon"    // respond_by within DueSoon, not past
	deadlineOverdue = "overdue" // respond_by past, still OPEN
)

// deadlineOf is the mark of dispute d's deadline at now: only an OPEN
// dispute has one, as only it can still be defended (or no longer).
func deadlineOf(d pix.Dispute, now time.Time) string {
	switch {
	case d.Status != pix.DisputeOpen:
		return ""
	case now.After(d.RespondBy):
		return deadlineOverdue
	case d.RespondBy.Sub(now) <= DueSoon:
		return deadlineSoon
	}
	return ""
}

// disputeRow is one line of the disputes list, with the name of its client
// for an operator's list of every client and its deadline's mark.
type disputeRow struct {
	pix.Dispute
	ClientName string
	Deadline   string // deadlineSoon, deadlineOverdue or ""
}

type dispListData struct {
	Clients     []pix.Client // an operator's filter; nil for merchant users
	ClientID    string       // the client filter, "" for every client
	AllClients  bool         // the rows are of every client: show whose each is
	Status      pix.DisputeStatus
	Statuses    []pix.DisputeStatus
	Rows        []disputeRow
	Next, First string // URLs of the next and the first page, or ""
}

// disputes lists MED disputes with their deadlines (docs/med.md), newest
// first, a page at a time by the store's keyset cursor: an operator's of
// every client or of the one it picks, a merchant user's of its own client
// only (naming another is a 404, like every page of another client).
func (h *Handler) disputes(w http.ResponseWriter, r *http.Request) error {
	s, _ := sessionFrom(r)
	ctx := r.Context()
	q := r.URL.Query()
	id := q.Get("client")
	if s.user.Role != pix.RoleOperator {
		if id == "" {
			id = s.user.ClientID
		}
		// A merchant user without a client sees nothing rather than, by
		// an empty filter, every client's disputes.
		if id == "" || id != s.user.ClientID {
			return errNotFound
		}
	}
	v := &view{Page: "disputes"}
	v.session(s)
	d := dispListData{ClientID: id, Statuses: []pix.DisputeStatus{pix.DisputeOpen, pix.DisputeClosed}}
	if st := pix.DisputeStatus(q.Get("status")); st.Valid() {
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
	page := backoffice.DisputeQuery{ClientID: id, AllClients: d.AllClients, Status: d.Status, Cursor: cursor, Limit: PageSize}
	rows, next, err := h.bo.DisputePage(ctx, page)
	if pix.ErrorCode(err) == pix.EInvalid && cursor != "" {
		v.Alert = "tx.badcursor"
		cursor, page.Cursor = "", ""
		rows, next, err = h.bo.DisputePage(ctx, page)
	}
	if err != nil {
		return err
	}
	now := h.bo.Now()
	for _, dp := range rows {
		d.Rows = append(d.Rows, disputeRow{Dispute: dp, ClientName: names[dp.ClientID], Deadline: deadlineOf(dp, now)})
	}
	base := url.Values{}
	if id != "" && v.Operator() {
		base.Set("client", id)
	}
	if d.Status != "" {
		base.Set("status", string(d.Status))
	}
	d.Next, d.First = pagerLinks("/admin/disputes", base, cursor, next)
	v.D = d
	h.render(w, r, http.StatusOK, v)
	return nil
}

// pagerLinks returns the URLs of a list's next page (when next is a
// cursor) and first page (when the page shown is not it), each keeping the
// list's filters base.
func pagerLinks(path string, base url.Values, cursor, next string) (nextURL, firstURL string) {
	if next != "" {
		nq := url.Values{"cursor": {next}}
		for k, vs := range base {
			nq[k] = vs
		}
		nextURL = path + "?" + nq.Encode()
	}
	if cursor != "" {
		firstURL = path
		if len(base) > 0 {
			firstURL += "?" + base.Encode()
		}
	}
	return nextURL, firstURL
}

// disputesPath is the disputes list of one client.
func disputesPath(clientID string) string {
	return "/admin/disputes?" + url.Values{"client": {clientID}}.Encode()
}
