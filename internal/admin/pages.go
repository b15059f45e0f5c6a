package admin

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
)

// notices are the ?m= values a redirect may carry, and the message each
// shows: success notices and alerts. Anything else shows nothing.
var notices = map[string]struct {
	key   string
	alert bool
}{
	"resent":     {"detail.resent", false},
	"paid":       {"detail.paid", false},
	"expired":    {"detail.expired", false},
	"notpayable": {"detail.notpayable", true},
	"fees":       {"settings.feesaved", false},
	"disabled":   {"settings.disabled", false},
	"confirm":    {"settings.confirm", true},
	"returning":  {"unmatched.returning", false},
	"notheld":    {"unmatched.notheld", true},
}

func (v *view) notice(r *http.Request) {
	if n, ok := notices[r.URL.Query().Get("m")]; ok {
		if n.alert {
			v.Alert = n.key
		} else {
			v.Notice = n.key
		}
	}
}

// scope returns the session and the client named by the path. A merchant
// user asking for another client, or anyone asking for a client that does
// not exist, gets the same 404.
func (h *Handler) scope(r *http.Request) (*session, pix.Client, error) {
	s, _ := sessionFrom(r)
	id := r.PathValue("client")
	if s.user.Role != pix.RoleOperator && id != s.user.ClientID {
		return nil, pix.Client{}, errNotFound
	}
	c, err := h.gw.Client(r.Context(), id)
	if pix.ErrorCode(err) == pix.ENotFound {
		return nil, pix.Client{}, errNotFound
	}
	if err != nil {
		return nil, pix.Client{}, err
	}
	return s, c, nil
}

func clientBase(id string) string { return "/admin/c/" + url.PathEscape(id) }

// statusRow is one line of the counts-by-status table.
type statusRow struct {
	Type   pix.TxType
	Status pix.TxStatus
	N      int64
}

// failing is a failing webhook with what the page links it to.
type failing struct {
	Event      pix.Event
	ClientName string
}

type overviewData struct {
	Available, Pending pix.Amount
	Activity           pix.Activity
	Flows              pix.Flows // today's money, which adds up to the change in balance
	Rows               []statusRow
	Failing            []failing
	ClientCount        int
	PSP                *pspStatus       // operators only; nil with the simulated network
	Suspense           *suspenseSummary // the all-clients overview only; nil when nothing is in suspense
}

// today returns the current day in São Paulo as [start, end).
func (h *Handler) today() (time.Time, time.Time) {
	now := h.bo.Now().In(h.loc)
	start := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, h.loc)
	return start, start.AddDate(0, 0, 1)
}

func (h *Handler) overview(r *http.Request, clientID string) (overviewData, error) {
	var d overviewData
	from, to := h.today()
	o, err := h.bo.Overview(r.Context(), clientID, from, to, 20)
	if err != nil {
		return d, err
	}
	d.Available, d.Pending = o.Balances[ledger.Available], o.Balances[ledger.Pending]
	d.PSP = h.pspStatusOf(r)
	if clientID == "" {
		if d.Suspense, err = h.suspenseOf(r); err != nil {
			return d, err
		}
	}
	d.Activity, d.Flows = o.Activity, o.Flows
	for _, typ := range pix.TxTypes() {
		for _, st := range pix.TxStatuses() {
			if n := d.Activity.Counts[string(typ)][string(st)]; n > 0 {
				d.Rows = append(d.Rows, statusRow{Type: typ, Status: st, N: n})
			}
		}
	}
	names := make(map[string]string, len(o.Clients))
	for _, c := range o.Clients {
		names[c.ID] = c.Name
	}
	d.ClientCount = len(o.Clients)
	for _, e := range o.Failing {
		d.Failing = append(d.Failing, failing{Event: e, ClientName: names[e.ClientID]})
	}
	return d, nil
}

// home is the operators' overview of every client; merchant users go to
// their client's overview.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) error {
	s, _ := sessionFrom(r)
	if s.user.Role != pix.RoleOperator {
		return redirect(w, clientBase(s.user.ClientID)+"/")
	}
	d, err := h.overview(r, "")
	if err != nil {
		return err
	}
	v := &view{Page: "home", D: d}
	v.session(s)
	h.render(w, r, http.StatusOK, v)
	return nil
}

func (h *Handler) clientOverview(w http.ResponseWriter, r *http.Request) error {
	s, c, readOnly, err := h.scopeRead(r)
	if err != nil {
		return err
	}
	d, err := h.overview(r, c.ID)
	if err != nil {
		return err
	}
	v := clientView(s, &c, "overview", readOnly)
	v.D = d
	h.render(w, r, http.StatusOK, v)
	return nil
}

// feeForm is the text of the four fee fields.
type feeForm struct {
	CashinPercent, CashinFixed, PayoutPercent, PayoutFixed string
}

func feeFormOf(c pix.Client) feeForm {
	return feeForm{pix.FormatPercent(c.CashinFee.PercentBP), c.CashinFee.Fixed.String(),
		pix.FormatPercent(c.PayoutFee.PercentBP), c.PayoutFee.Fixed.String()}
}

// parse reads the fee fields; a decimal comma is accepted. Empty means 0.
func (f feeForm) parse() (cashin, payout pix.FeeRule, ok bool) {
	ok = true
	pct := func(s string) int64 {
		bp, err := pix.ParsePercent(decimalText(s))
		ok = ok && err == nil
		return bp
	}
	fixed := func(s string) pix.Amount {
		a, err := pix.ParseAmountString(decimalText(s))
		ok = ok && err == nil
		return a
	}
	cashin = pix.FeeRule{PercentBP: pct(f.CashinPercent), Fixed: fixed(f.CashinFixed)}
	payout = pix.FeeRule{PercentBP: pct(f.PayoutPercent), Fixed: fixed(f.PayoutFixed)}
	return cashin, payout, ok
}

func decimalText(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), ",", ".")
	if s == "" {
		return "0"
	}
	return s
}

func feeFormFrom(r *http.Request) feeForm {
	f := r.PostForm
	return feeForm{f.Get("cashin_percent"), f.Get("cashin_fixed"), f.Get("payout_percent"), f.Get("payout_fixed")}
}

type clientsData struct {
	Families []backoffice.Family // every top-level client with its sub-accounts
	Name     string
	Fees     feeForm
}

func (h *Handler) clientsPage(w http.ResponseWriter, r *http.Request) error {
	return h.renderClients(w, r, http.StatusOK, "", clientsData{Fees: feeForm{"0", "0", "0", "0"}})
}

func (h *Handler) renderClients(w http.ResponseWriter, r *http.Request, status int, alert string, d clientsData) error {
	s, _ := sessionFrom(r)
	fs, err := h.bo.Families(r.Context(), FamilySubs)
	if err != nil {
		return err
	}
	d.Families = fs
	v := &view{Page: "clients", Self: "/admin/clients", Alert: alert, D: d}
	v.session(s)
	h.render(w, r, status, v)
	return nil
}

type createdData struct {
	Cred backoffice.Credentials
}

// createClient creates a client and shows its credentials, once.
func (h *Handler) createClient(w http.ResponseWriter, r *http.Request) error {
	s, _ := sessionFrom(r)
	name := strings.TrimSpace(r.PostForm.Get("name"))
	fees := feeFormFrom(r)
	d := clientsData{Name: name, Fees: fees}
	if name == "" || len(name) > 100 {
		return h.renderClients(w, r, http.StatusBadRequest, "clients.badname", d)
	}
	cashin, payout, ok := fees.parse()
	if !ok {
		return h.renderClients(w, r, http.StatusBadRequest, "settings.feebad", d)
	}
	cred, err := h.bo.CreateClient(r.Context(), backoffice.ClientParams{Name: name, CashinFee: cashin, PayoutFee: payout})
	if pix.ErrorCode(err) == pix.EInvalid {
		return h.renderClients(w, r, http.StatusBadRequest, "settings.feebad", d)
	}
	if err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "admin created client", "user_id", s.user.ID, "client_id", cred.ClientID)
	c, err := h.gw.Client(r.Context(), cred.ClientID)
	if err != nil {
		return err
	}
	v := &view{Page: "client_created", Self: clientBase(c.ID) + "/settings", Client: &c, Notice: "clients.created", D: createdData{Cred: cred}}
	v.session(s)
	h.render(w, r, http.StatusOK, v)
	return nil
}

type settingsData struct {
	NewSecret        string
	NewWebhookSecret string
	Fees             feeForm
}

func (h *Handler) renderSettings(w http.ResponseWriter, r *http.Request, status int, v *view, d settingsData) {
	v.Page, v.Self = "settings", clientBase(v.Client.ID)+"/settings"
	v.D = d
	h.render(w, r, status, v)
}

func (h *Handler) settings(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	v := &view{Client: &c}
	v.session(s)
	v.notice(r)
	h.renderSettings(w, r, http.StatusOK, v, settingsData{Fees: feeFormOf(c)})
	return nil
}

// rotateSecret replaces the client's secret and shows the new one, once:
// the page answers the POST itself, so the secret is never in a URL.
func (h *Handler) rotateSecret(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	cred, err := h.bo.RotateSecret(r.Context(), c.ID)
	if err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "admin rotated client secret", "user_id", s.user.ID, "client_id", c.ID)
	v := &view{Client: &c}
	v.session(s)
	h.renderSettings(w, r, http.StatusOK, v, settingsData{NewSecret: cred.ClientSecret, Fees: feeFormOf(c)})
	return nil
}

func (h *Handler) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	cred, err := h.bo.RotateWebhookSecret(r.Context(), c.ID)
	if err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "admin rotated webhook secret", "user_id", s.user.ID, "client_id", c.ID)
	if c, err = h.gw.Client(r.Context(), c.ID); err != nil {
		return err
	}
	v := &view{Client: &c}
	v.session(s)
	h.renderSettings(w, r, http.StatusOK, v, settingsData{NewWebhookSecret: cred.WebhookSecret, Fees: feeFormOf(c)})
	return nil
}

func (h *Handler) setFees(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	f := feeFormFrom(r)
	cashin, payout, ok := f.parse()
	if !ok {
		v := &view{Client: &c, Alert: "settings.feebad"}
		v.session(s)
		h.renderSettings(w, r, http.StatusBadRequest, v, settingsData{Fees: f})
		return nil
	}
	if err := h.bo.SetFees(r.Context(), c.ID, cashin, payout); err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "admin changed fees", "user_id", s.user.ID, "client_id", c.ID)
	return redirect(w, clientBase(c.ID)+"/settings?m=fees")
}

func (h *Handler) disableClient(w http.ResponseWriter, r *http.Request) error {
	s, c, err := h.scope(r)
	if err != nil {
		return err
	}
	if r.PostForm.Get("confirm") != "yes" {
		return redirect(w, clientBase(c.ID)+"/settings?m=confirm")
	}
	if err := h.bo.DisableClient(r.Context(), c.ID); err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "admin disabled client", "user_id", s.user.ID, "client_id", c.ID)
	return redirect(w, clientBase(c.ID)+"/settings?m=disabled")
}
