package admin

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/store"
)

// PageSize is how many transactions a page of the list shows.
const PageSize = 25

type txListData struct {
	Q, Status, Type string
	Statuses        []string
	Types           []string
	Rows            []store.Transaction
	Searched        bool
	Next, First     string // URLs of the next and the first page, or ""
}

// transactions lists the client's transactions, newest first, a page at a
// time by the store's keyset cursor; or finds one by payment_id or
// external_id.
func (h *Handler) transactions(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	q := r.URL.Query()
	d := txListData{Q: strings.TrimSpace(q.Get("q")), Statuses: gateway.LookupStatuses, Types: []string{store.TypeCashin, store.TypeCashout}}
	if st := q.Get("status"); slices.Contains(d.Statuses, st) {
		d.Status = st
	}
	if typ := q.Get("type"); slices.Contains(d.Types, typ) {
		d.Type = typ
	}
	v := &view{Page: "transactions", Client: &c}
	v.session(s)
	if d.Q != "" {
		d.Searched = true
		if len(d.Q) <= 64 {
			for _, find := range []func() (store.Transaction, error){
				func() (store.Transaction, error) { return h.db.Transaction(ctx, c.ID, d.Q) },
				func() (store.Transaction, error) { return h.db.TransactionByExternalID(ctx, c.ID, d.Q) },
			} {
				t, err := find()
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				if len(d.Rows) == 0 || d.Rows[0].ID != t.ID {
					d.Rows = append(d.Rows, t)
				}
			}
		}
		v.D = d
		h.render(w, r, http.StatusOK, v)
		return nil
	}
	cursor := q.Get("cursor")
	if len(cursor) > 200 {
		cursor = ""
	}
	f := store.HistoryFilter{Status: d.Status, Type: d.Type, Cursor: cursor, Limit: PageSize}
	rows, next, err := h.db.History(ctx, c.ID, f)
	if errors.Is(err, store.ErrBadCursor) {
		v.Alert = "tx.badcursor"
		f.Cursor, cursor = "", ""
		rows, next, err = h.db.History(ctx, c.ID, f)
	}
	if err != nil {
		return err
	}
	d.Rows = rows
	base := url.Values{}
	if d.Status != "" {
		base.Set("status", d.Status)
	}
	if d.Type != "" {
		base.Set("type", d.Type)
	}
	path := clientBase(c.ID) + "/transactions"
	if next != "" {
		nq := url.Values{}
		for k, vs := range base {
			nq[k] = vs
		}
		nq.Set("cursor", next)
		d.Next = path + "?" + nq.Encode()
	}
	if cursor != "" {
		d.First = path
		if len(base) > 0 {
			d.First += "?" + base.Encode()
		}
	}
	v.D = d
	h.render(w, r, http.StatusOK, v)
	return nil
}

type refundView struct {
	Refund   store.Refund
	Postings []store.PostingRecord
}

type eventView struct {
	Event    store.Event
	Attempts []store.Attempt
}

type txDetailData struct {
	Tx        store.Transaction
	Postings  []store.PostingRecord
	Refunds   []refundView
	Events    []eventView
	CanChange bool // sandbox: the charge may be paid or expired here
}

// transaction shows one transaction with its ledger postings (and those of
// its refunds), its events and every delivery attempt.
func (h *Handler) transaction(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	t, err := h.db.Transaction(ctx, c.ID, r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	d := txDetailData{Tx: t, CanChange: h.sandbox && t.Type == store.TypeCashin && t.Status == gateway.StatusPending}
	if d.Postings, err = h.db.Postings(ctx, t.ID); err != nil {
		return err
	}
	refunds, err := h.db.Refunds(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, rf := range refunds {
		ps, err := h.db.Postings(ctx, rf.ID)
		if err != nil {
			return err
		}
		d.Refunds = append(d.Refunds, refundView{Refund: rf, Postings: ps})
	}
	events, err := h.db.Events(ctx, t.ID)
	if err != nil {
		return err
	}
	attempts, err := h.db.Attempts(ctx, t.ID)
	if err != nil {
		return err
	}
	for _, e := range events {
		d.Events = append(d.Events, eventView{Event: e, Attempts: attempts[e.ID]})
	}
	v := &view{Page: "transaction", Client: &c, D: d}
	v.session(s)
	v.notice(r)
	h.render(w, r, http.StatusOK, v)
	return nil
}

func txPath(clientID, txID string) string {
	return clientBase(clientID) + "/transactions/" + url.PathEscape(txID)
}

// retryEvent sends an event again (same webhook-id), as the API's retry does.
func (h *Handler) retryEvent(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	e, err := h.db.Event(ctx, r.PathValue("event"))
	if errors.Is(err, store.ErrNotFound) || (err == nil && e.ClientID != c.ID) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	if err := h.gw.RetryDelivery(ctx, c, e.ID); pix.ErrorCode(err) == pix.ENotFound {
		return errNotFound
	} else if err != nil {
		return err
	}
	h.log.InfoContext(ctx, "admin resent webhook", "user_id", s.user.ID, "client_id", c.ID, "event_id", e.ID)
	return redirect(w, txPath(c.ID, e.TransactionID)+"?m=resent")
}

// sandboxPay pays a charge as the sandbox's payer would.
func (h *Handler) sandboxPay(w http.ResponseWriter, r *http.Request) error {
	_, c, err := h.scope(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	t, err := h.gw.Charge(ctx, c, r.PathValue("id"))
	if pix.ErrorCode(err) == pix.ENotFound {
		return errNotFound
	}
	if err != nil {
		return err
	}
	_, err = h.gw.ReceivePayment(ctx, sandbox.Provider{}.PaymentFor(t.TxID, t.Amount, h.gw.Now()))
	return h.afterSandbox(w, c, t, err, "paid")
}

// sandboxExpire cancels a pending charge at once.
func (h *Handler) sandboxExpire(w http.ResponseWriter, r *http.Request) error {
	_, c, err := h.scope(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	t, err := h.gw.Charge(ctx, c, r.PathValue("id"))
	if pix.ErrorCode(err) == pix.ENotFound {
		return errNotFound
	}
	if err != nil {
		return err
	}
	_, err = h.gw.ExpireCharge(ctx, c, t.ID)
	return h.afterSandbox(w, c, t, err, "expired")
}

func (h *Handler) afterSandbox(w http.ResponseWriter, c store.Client, t store.Transaction, err error, done string) error {
	switch pix.ErrorCode(err) {
	case pix.EUnprocessable:
		done = "notpayable"
	case pix.ENotFound:
		return errNotFound
	default:
		if err != nil {
			return err
		}
	}
	return redirect(w, txPath(c.ID, t.ID)+"?m="+done)
}
