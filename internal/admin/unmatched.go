package admin

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/pixgate/pixgate/internal/pix"
)

// UnmatchedPageSize is how many unmatched receipts the operators' page
// shows, newest first; the status filter narrows a longer list.
const UnmatchedPageSize = 200

// unmatchedStatuses are the statuses the page filters by, in the order a
// receipt goes through them.
var unmatchedStatuses = []string{pix.UnmatchedHeld, pix.UnmatchedReturning, pix.UnmatchedReturned}

// unmatchedRow is one unmatched receipt with the link to the charge it
// names, if any.
type unmatchedRow struct {
	pix.UnmatchedReceipt
	ChargeURL string
}

type unmatchedData struct {
	Status   string // the filter, "" for every status
	Statuses []string
	Rows     []unmatchedRow
	Full     bool // the page holds UnmatchedPageSize rows: older ones are not shown
	Suspense pix.Amount
}

// unmatchedStatus returns s when it is a status of unmatched receipts, else "".
func unmatchedStatus(s string) string {
	if slices.Contains(unmatchedStatuses, s) {
		return s
	}
	return ""
}

// unmatchedPath is the list's path with the status filter st.
func unmatchedPath(st string) string {
	if st == "" {
		return "/admin/unmatched"
	}
	return "/admin/unmatched?" + url.Values{"status": {st}}.Encode()
}

// unmatchedPage lists, for operators, the money the PSP received that no
// open charge took: what it was, what became of it, and a button to return
// a held one to its payer.
func (h *Handler) unmatchedPage(w http.ResponseWriter, r *http.Request) error {
	s, _ := sessionFrom(r)
	ctx := r.Context()
	d := unmatchedData{Status: unmatchedStatus(r.URL.Query().Get("status")), Statuses: unmatchedStatuses}
	list, err := h.bo.UnmatchedReceipts(ctx, d.Status, UnmatchedPageSize)
	if err != nil {
		return err
	}
	if d.Suspense, err = h.bo.SuspenseBalance(ctx); err != nil {
		return err
	}
	d.Full = len(list) == UnmatchedPageSize
	for _, u := range list {
		row := unmatchedRow{UnmatchedReceipt: u}
		if u.TransactionID != "" && u.ClientID != "" {
			row.ChargeURL = txPath(u.ClientID, u.TransactionID)
		}
		d.Rows = append(d.Rows, row)
	}
	v := &view{Page: "unmatched", D: d}
	v.session(s)
	v.notice(r)
	h.render(w, r, http.StatusOK, v)
	return nil
}

// returnUnmatched starts the return to its payer of a HELD unmatched
// receipt, then shows the list again (with the filter it was on) saying
// so; a receipt already being returned, or returned, only says that.
func (h *Handler) returnUnmatched(w http.ResponseWriter, r *http.Request) error {
	s, _ := sessionFrom(r)
	ctx := r.Context()
	id := r.PathValue("id")
	back := unmatchedStatus(r.PostForm.Get("status"))
	sep := "?"
	if back != "" {
		sep = "&"
	}
	if len(id) > 64 {
		return errNotFound
	}
	u, err := h.gw.Transfers().ReturnUnmatched(ctx, id)
	switch pix.ErrorCode(err) {
	case pix.ENotFound:
		return errNotFound
	case pix.EUnprocessable:
		return redirect(w, unmatchedPath(back)+sep+"m=notheld")
	}
	if err != nil {
		return err
	}
	h.log.InfoContext(ctx, "admin started the return of an unmatched receipt", "user_id", s.user.ID,
		"unmatched_receipt", u.ID, "return_id", u.ReturnID)
	return redirect(w, unmatchedPath(back)+sep+"m=returning")
}

// suspenseSummary is what the operators' overview shows of the money in
// suspense, with a link to the unmatched receipts.
type suspenseSummary struct {
	Balance    pix.Amount // the suspense account: held and being returned
	Held       int64      // receipts waiting for an operator
	HeldAmount pix.Amount
	More       bool // Held counts only the newest UnmatchedPageSize
}

// suspenseOf is the overview's suspense section for r: nil for merchant
// users, and when nothing is or was ever waiting in suspense.
func (h *Handler) suspenseOf(r *http.Request) (*suspenseSummary, error) {
	if s, ok := sessionFrom(r); !ok || s.user.Role != pix.RoleOperator {
		return nil, nil
	}
	ctx := r.Context()
	bal, err := h.bo.SuspenseBalance(ctx)
	if err != nil {
		return nil, err
	}
	held, err := h.bo.UnmatchedReceipts(ctx, pix.UnmatchedHeld, UnmatchedPageSize)
	if err != nil {
		return nil, err
	}
	if bal == 0 && len(held) == 0 {
		return nil, nil
	}
	sum := &suspenseSummary{Balance: bal, Held: int64(len(held)), More: len(held) == UnmatchedPageSize}
	for _, u := range held {
		sum.HeldAmount += u.Amount
	}
	return sum, nil
}
