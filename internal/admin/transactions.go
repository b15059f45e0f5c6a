package admin

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
)

// PageSize is how many transactions a page of the list shows.
const PageSize = 25

type txListData struct {
	Q           string
	Status      pix.TxStatus
	Type        pix.TxType
	Statuses    []pix.TxStatus
	Types       []pix.TxType
	Rows        []pix.Transaction
	Searched    bool
	Next, First string // URLs of the next and the first page, or ""
}

// transactions lists the client's transactions, newest first, a page at a
// time by the store's keyset cursor; or finds one by payment_id or
// external_id.
func (h *Handler) transactions(w http.ResponseWriter, r *http.Request) error {
	s, c, readOnly, err := h.scopeRead(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	q := r.URL.Query()
	d := txListData{Q: strings.TrimSpace(q.Get("q")), Statuses: pix.TxStatuses(), Types: pix.TxTypes()}
	if st := pix.TxStatus(q.Get("status")); slices.Contains(d.Statuses, st) {
		d.Status = st
	}
	if typ := pix.TxType(q.Get("type")); slices.Contains(d.Types, typ) {
		d.Type = typ
	}
	v := clientView(s, &c, "transactions", readOnly)
	if d.Q != "" {
		d.Searched = true
		if len(d.Q) <= 64 {
			if d.Rows, err = h.bo.FindTransactions(ctx, c.ID, d.Q); err != nil {
				return err
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
	rows, next, err := h.bo.TransactionPage(ctx, c.ID, d.Status, d.Type, cursor, PageSize)
	if pix.ErrorCode(err) == pix.EInvalid {
		v.Alert = "tx.badcursor"
		cursor = ""
		rows, next, err = h.bo.TransactionPage(ctx, c.ID, d.Status, d.Type, cursor, PageSize)
	}
	if err != nil {
		return err
	}
	d.Rows = rows
	base := url.Values{}
	if d.Status != "" {
		base.Set("status", string(d.Status))
	}
	if d.Type != "" {
		base.Set("type", string(d.Type))
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

type txDetailData struct {
	backoffice.TransactionDetail
	CanChange bool // sandbox: the charge may be paid or expired here
	// DueToday is what a charge with a due date costs today, and
	// DuePayable whether it can still be paid.
	DueToday   pix.Amount
	DuePayable bool
}

// transaction shows one transaction with its ledger postings (and those of
// its refunds), its events and every delivery attempt.
func (h *Handler) transaction(w http.ResponseWriter, r *http.Request) error {
	s, c, readOnly, err := h.scopeRead(r)
	if err != nil {
		return err
	}
	detail, err := h.bo.TransactionDetail(r.Context(), c.ID, r.PathValue("id"))
	if pix.ErrorCode(err) == pix.ENotFound {
		return errNotFound
	}
	if err != nil {
		return err
	}
	t := detail.Tx
	d := txDetailData{TransactionDetail: detail, CanChange: !readOnly && h.sandbox && t.Type == pix.TypeCashin && t.Status == pix.StatusPending}
	d.DueToday, d.DuePayable = t.AmountDueOn(h.gw.Today())
	v := clientView(s, &c, "transaction", readOnly)
	v.D = d
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
	e, err := h.bo.ClientEvent(ctx, c.ID, r.PathValue("event"))
	if pix.ErrorCode(err) == pix.ENotFound {
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
	return h.sandboxAct(w, r, "paid", func(ctx context.Context, _ pix.Client, t pix.Transaction) error {
		_, err := h.gw.Sandbox().Pay(ctx, t)
		return err
	})
}

// sandboxExpire cancels a pending charge at once.
func (h *Handler) sandboxExpire(w http.ResponseWriter, r *http.Request) error {
	return h.sandboxAct(w, r, "expired", func(ctx context.Context, c pix.Client, t pix.Transaction) error {
		_, err := h.gw.Sandbox().ExpireCharge(ctx, c, t.ID)
		return err
	})
}

// sandboxAct does act to the charge of the request's path and reports it
// as done.
func (h *Handler) sandboxAct(w http.ResponseWriter, r *http.Request, done string,
	act func(context.Context, pix.Client, pix.Transaction) error) error {
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
	return h.afterSandbox(w, c, t, act(ctx, c, t), done)
}

func (h *Handler) afterSandbox(w http.ResponseWriter, c pix.Client, t pix.Transaction, err error, done string) error {
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
