package admin

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
)

// Batches of payouts and scheduled payouts (docs/payouts.md): each a list,
// an operator's of every client or of the one it picks, a merchant user's
// of its own client only, paged by the store's keyset cursor.

// listFilter is the client filter of a list page.
type listFilter struct {
	Clients    []pix.Client // an operator's filter; nil for merchant users
	ClientID   string       // the client filter, "" for every client
	AllClients bool         // the rows are of every client: show whose each is
	names      map[string]string
}

// Name is the name of client id, for an operator's list of every client.
func (f listFilter) Name(id string) string { return f.names[id] }

// listScope reads the client a list page is for and fills v: a merchant
// user naming another client gets a 404.
func (h *Handler) listScope(r *http.Request, v *view) (listFilter, error) {
	s, _ := sessionFrom(r)
	id := r.URL.Query().Get("client")
	if s.user.Role != pix.RoleOperator {
		if id == "" {
			id = s.user.ClientID
		}
		if id != s.user.ClientID {
			return listFilter{}, errNotFound
		}
	}
	v.session(s)
	f := listFilter{ClientID: id, names: map[string]string{}}
	if v.Operator() {
		cs, err := h.bo.Clients(r.Context())
		if err != nil {
			return f, err
		}
		f.Clients = cs
		for _, c := range cs {
			f.names[c.ID] = c.Name
		}
	}
	if id == "" {
		f.AllClients = true
		return f, nil
	}
	c, err := h.gw.Client(r.Context(), id)
	if pix.ErrorCode(err) == pix.ENotFound {
		return f, errNotFound
	}
	if err != nil {
		return f, err
	}
	v.Client = &c
	return f, nil
}

type batchListData struct {
	listFilter
	State, Path string
	States      []string
	Rows        []pix.Batch
	Scheduled   []backoffice.ScheduledPayout
	Next, First string
}

// batches lists batches of payouts, newest first.
func (h *Handler) batches(w http.ResponseWriter, r *http.Request) error {
	return h.payoutList(w, r, "batches", []string{pix.BatchAccepted, pix.BatchCompleted})
}

// scheduled lists scheduled payouts, latest day first, filterable by state.
func (h *Handler) scheduled(w http.ResponseWriter, r *http.Request) error {
	return h.payoutList(w, r, "scheduled", backoffice.ScheduledStates())
}

// payoutList is the batches or the scheduled payouts page (page).
func (h *Handler) payoutList(w http.ResponseWriter, r *http.Request, page string, states []string) error {
	v := &view{Page: page}
	f, err := h.listScope(r, v)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	d := batchListData{listFilter: f, States: states, Path: "/admin/" + page}
	if st := q.Get("state"); slices.Contains(states, st) {
		d.State = st
	}
	cursor := q.Get("cursor")
	if len(cursor) > 200 {
		cursor = ""
	}
	read := func(cursor string) (string, error) {
		var next string
		var err error
		if page == "batches" {
			d.Rows, next, err = h.bo.BatchPage(r.Context(), f.ClientID, d.State, cursor, PageSize)
		} else {
			d.Scheduled, next, err = h.bo.ScheduledPage(r.Context(), f.ClientID, d.State, cursor, PageSize)
		}
		return next, err
	}
	next, err := read(cursor)
	if pix.ErrorCode(err) == pix.EInvalid {
		v.Alert, cursor = "tx.badcursor", ""
		next, err = read(cursor)
	}
	if err != nil {
		return err
	}
	base := url.Values{}
	if f.ClientID != "" && v.Operator() {
		base.Set("client", f.ClientID)
	}
	if d.State != "" {
		base.Set("state", d.State)
	}
	d.Next, d.First = pagerLinks(d.Path, base, cursor, next)
	v.D = d
	h.render(w, r, http.StatusOK, v)
	return nil
}

type batchData struct {
	Batch  pix.Batch
	Items  []batchItemRow
	Counts map[pix.TxStatus]int
}

type batchItemRow struct {
	pix.BatchItem
	Status pix.TxStatus
}

// batch shows one batch with its items, each linking to its payout.
func (h *Handler) batch(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if len(id) > 64 {
		return errNotFound
	}
	bd, err := h.bo.BatchDetail(r.Context(), c.ID, id)
	if pix.ErrorCode(err) == pix.ENotFound {
		return errNotFound
	}
	if err != nil {
		return err
	}
	d := batchData{Batch: bd.Batch, Counts: gateway.BatchCounts(bd.Items)}
	for _, it := range bd.Items {
		d.Items = append(d.Items, batchItemRow{BatchItem: it, Status: gateway.ItemStatus(it)})
	}
	v := &view{Page: "batch", Client: &c, D: d}
	v.session(s)
	h.render(w, r, http.StatusOK, v)
	return nil
}

// batchPath is the panel's page of a client's batch.
func batchPath(clientID, id string) string {
	return clientBase(clientID) + "/batches/" + url.PathEscape(id)
}
