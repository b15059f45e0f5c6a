package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/testkit/chromium"
)

// dispute creates and pays a charge of amount reais through the API, then
// has the payer's bank contest it through the sandbox's dispute action
// (respond_by three days from the clock's now); it returns the charge's
// payment_id and the dispute's id.
func (b *bundle) dispute(cred backoffice.Credentials, ext, amount string) (paymentID, disputeID string) {
	b.t.Helper()
	paymentID = b.paidCharge(cred, ext, amount)
	status, body := b.api(cred, "POST", "/api/v1/sandbox/charges/"+paymentID+"/dispute", nil)
	require.Equal(b.t, http.StatusOK, status, "%v", body)
	return paymentID, body["data"].(map[string]any)["dispute_id"].(string)
}

// defend sends client cred's defense of dispute id through the API.
func (b *bundle) defend(cred backoffice.Credentials, id string, accept bool, justification string) {
	b.t.Helper()
	status, body := b.api(cred, "POST", "/api/v1/gateway/disputes/"+id+"/defense", map[string]any{"accept": accept, "justification": justification})
	require.Equal(b.t, http.StatusOK, status, "%v", body)
}

// resolve closes dispute id as the PSP decides it, through the sandbox.
func (b *bundle) resolve(cred backoffice.Credentials, id string, res map[string]any) {
	b.t.Helper()
	status, body := b.api(cred, "POST", "/api/v1/sandbox/disputes/"+id+"/resolve", res)
	require.Equal(b.t, http.StatusOK, status, "%v", body)
}

// disputeFixture is what TestDisputesPage's clients hold, on a clock that
// has moved on: the merchant's disputes overdue (respond_by past), soon
// (due in 23 h, defended) and later (due in 3 days); the other client's
// one closed with part of it returned.
type disputeFixture struct {
	other                  backoffice.Credentials
	overdue, soon, later   string
	closed                 string
	soonCharge, closedChrg string
}

const hostileJustification = `<script>alert("x")</script> & não reconheço`

func (b *bundle) disputeFixture() disputeFixture {
	b.t.Helper()
	var f disputeFixture
	var err error
	f.other, err = b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "Outra <Loja>"})
	require.NoError(b.t, err)
	_, f.overdue = b.dispute(b.merchant, "med-overdue", "10.00")
	b.clock.Advance(25 * time.Hour)
	f.soonCharge, f.soon = b.dispute(b.merchant, "med-soon", "20.00")
	f.closedChrg, f.closed = b.dispute(f.other, "med-closed", "30.00")
	b.resolve(f.other, f.closed, map[string]any{"outcome": "returned", "amount": json.Number("12.34")})
	b.clock.Advance(49 * time.Hour)
	// Now the first is a couple of hours past its deadline, the second
	// has 23 h left, and the third opens with three days.
	b.defend(b.merchant, f.soon, false, hostileJustification)
	_, f.later = b.dispute(b.merchant, "med-later", "40.00")
	return f
}

// dispRows returns the HTML of each row of a disputes page by dispute id,
// and the ids in order.
func dispRows(t *testing.T, body string) (map[string]string, []string) {
	t.Helper()
	rows := map[string]string{}
	var ids []string
	for _, part := range strings.Split(body, `data-testid="disp-row"`)[1:] {
		id := regexp.MustCompile(`^ data-id="([^"]+)"`).FindStringSubmatch(part)
		require.NotNil(t, id, part)
		rows[id[1]] = part[:strings.Index(part, "</tr>")]
		ids = append(ids, id[1])
	}
	return rows, ids
}

// TestDisputesPage: an operator sees every client's disputes, newest
// first, with whose each is; a dispute due within 24 h is marked and one
// due in three days is not, one past its deadline is marked overdue; the
// defense shows with its justification escaped; a closed one shows its
// outcome and what it returned; the charge links to its transaction page;
// in both languages, filtered by client and by status.
func TestDisputesPage(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		f := b.disputeFixture()
		c := b.web()
		c.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))

		p := c.get("/admin/disputes?lang=en")
		require.Equal(t, http.StatusOK, p.status, p.body)
		rows, ids := dispRows(t, p.body)
		require.Equal(t, []string{f.later, f.closed, f.soon, f.overdue}, ids, "every client's, newest first")
		require.Equal(t, []string{"Loja Exemplo", "Outra <Loja>", "Loja Exemplo", "Loja Exemplo"}, fields(p.body, "disp-client"))
		require.NotContains(t, p.body, "Outra <Loja>", "the client's name is escaped")
		require.Contains(t, p.body, `data-testid="nav-disputes"`)

		require.Contains(t, rows[f.soon], `data-testid="disp-due-soon"`, "due in 23 h")
		require.Equal(t, "due within 24 h", field(t, rows[f.soon], "disp-due-soon"))
		require.NotContains(t, rows[f.soon], `data-testid="disp-overdue"`)
		require.NotContains(t, rows[f.later], `data-testid="disp-due-soon"`, "due in 3 days")
		require.NotContains(t, rows[f.later], `data-testid="disp-overdue"`)
		require.Equal(t, "overdue", field(t, rows[f.overdue], "disp-overdue"))
		require.NotContains(t, rows[f.overdue], `data-testid="disp-due-soon"`)
		require.NotContains(t, rows[f.closed], `data-testid="disp-due-soon"`, "a closed dispute has no deadline left")
		require.NotContains(t, rows[f.closed], `data-testid="disp-overdue"`)

		require.Equal(t, "R$ 20.00", field(t, rows[f.soon], "disp-amount"))
		require.Equal(t, "Fraud", field(t, rows[f.soon], "disp-reason"))
		require.Contains(t, rows[f.soon], `title="OPEN">Open</span>`)
		require.Equal(t, "/admin/c/"+b.merchant.ClientID+"/transactions/"+f.soonCharge, attr(t, rows[f.soon], "disp-charge"))
		require.Equal(t, "Contested", field(t, rows[f.soon], "disp-defense"))
		require.Equal(t, hostileJustification, field(t, rows[f.soon], "disp-justification"), "shown as text")
		require.NotContains(t, p.body, "<script>alert")
		require.Equal(t, "—", field(t, rows[f.later], "disp-no-defense"))
		require.Contains(t, rows[f.later], "—", "no outcome while open")

		require.Contains(t, rows[f.closed], `title="CLOSED">Closed</span>`)
		require.Equal(t, "Returned to the payer", field(t, rows[f.closed], "disp-outcome"))
		require.Equal(t, "R$ 12.34 returned", field(t, rows[f.closed], "disp-returned"))
		require.Equal(t, "/admin/c/"+f.other.ClientID+"/transactions/"+f.closedChrg, attr(t, rows[f.closed], "disp-charge"))
		tx := c.get(attr(t, rows[f.closed], "disp-charge"))
		require.Equal(t, http.StatusOK, tx.status)
		require.Equal(t, f.closedChrg, field(t, tx.body, "tx-id"))

		// Portuguese: the marks, money, reasons, statuses and outcomes in
		// words, no code left.
		p = c.get("/admin/disputes?lang=pt-BR")
		rows, _ = dispRows(t, p.body)
		require.Equal(t, "vence em menos de 24 h", field(t, rows[f.soon], "disp-due-soon"))
		require.Equal(t, "prazo vencido", field(t, rows[f.overdue], "disp-overdue"))
		require.Equal(t, "R$ 20,00", field(t, rows[f.soon], "disp-amount"))
		require.Equal(t, "Fraude", field(t, rows[f.soon], "disp-reason"))
		require.Equal(t, "Contestada", field(t, rows[f.soon], "disp-defense"))
		require.Equal(t, "devolvido R$ 12,34", field(t, rows[f.closed], "disp-returned"))
		text := shownText(p.body)
		for _, code := range []string{"OPEN", "CLOSED", "FRAUD", "released", "returned"} {
			require.NotRegexp(t, `(^|[^\pL_])`+code+`($|[^\pL_])`, text, "%q untranslated", code)
		}
		require.Contains(t, text, "Aberta")
		require.Contains(t, text, "Encerrada")

		// The filters.
		p = c.get("/admin/disputes?status=CLOSED")
		_, ids = dispRows(t, p.body)
		require.Equal(t, []string{f.closed}, ids)
		p = c.get("/admin/disputes?status=OPEN&client=" + url.QueryEscape(b.merchant.ClientID))
		_, ids = dispRows(t, p.body)
		require.Equal(t, []string{f.later, f.soon, f.overdue}, ids)
		require.NotContains(t, p.body, `data-testid="disp-client"`, "one client's list has no client column")
		p = c.get("/admin/disputes?status=bogus")
		_, ids = dispRows(t, p.body)
		require.Len(t, ids, 4, "an unknown status filters nothing")
		p = c.get("/admin/disputes?client=" + url.QueryEscape(f.other.ClientID) + "&status=OPEN")
		require.Contains(t, p.body, `data-testid="no-disputes"`)
		require.Equal(t, http.StatusNotFound, c.get("/admin/disputes?client=nope").status)
		p = c.get("/admin/disputes?cursor=garbage")
		require.Equal(t, http.StatusOK, p.status)
		require.Contains(t, p.body, `data-testid="alert"`)
		_, ids = dispRows(t, p.body)
		require.Len(t, ids, 4)
	})
}

// TestDisputesScoping: a merchant user sees only its own client's
// disputes, without a client column or filter; another client's list is a
// 404 that shows nothing of it.
func TestDisputesScoping(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		f := b.disputeFixture()
		m := b.web()
		m.login("loja@example.com", b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID))
		for _, path := range []string{"/admin/disputes", "/admin/disputes?client=" + url.QueryEscape(b.merchant.ClientID)} {
			p := m.get(path)
			require.Equal(t, http.StatusOK, p.status, path)
			_, ids := dispRows(t, p.body)
			require.Equal(t, []string{f.later, f.soon, f.overdue}, ids, path)
			require.NotContains(t, p.body, f.closed, path)
			require.NotContains(t, p.body, `data-testid="filter-client"`, path)
			require.NotContains(t, p.body, `data-testid="disp-client"`, path)
			require.NotContains(t, p.body, "Outra", path)
		}
		p := m.get("/admin/c/" + b.merchant.ClientID + "/")
		require.Equal(t, "/admin/disputes?client="+url.QueryEscape(b.merchant.ClientID), attr(t, p.body, "nav-disputes"))
		for _, path := range []string{"/admin/disputes?client=" + url.QueryEscape(f.other.ClientID),
			"/admin/disputes?client=" + url.QueryEscape(f.other.ClientID) + "&status=CLOSED",
			"/admin/c/" + f.other.ClientID + "/transactions/" + f.closedChrg} {
			p := m.get(path)
			require.Equal(t, http.StatusNotFound, p.status, path)
			require.NotContains(t, p.body, f.closed, path)
			require.NotContains(t, p.body, "Outra", path)
		}
	})
}

// TestBrowserDisputes: in Chromium, a merchant user goes from the
// navigation to its disputes and sees the one due within 24 h marked, and
// only that one, then follows it to its charge.
func TestBrowserDisputes(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	f := b.disputeFixture()
	pw := b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID)
	br := &browser{t: t, ctx: chromium.Launch(t, 90*time.Second), base: b.srv.URL}
	br.login("loja@example.com", pw)
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-disputes]"))
	require.Equal(t, 3, br.count("[data-testid=disp-row]"))
	require.Equal(t, 1, br.count("[data-testid=disp-due-soon]"))
	soon := "[data-testid=disp-row][data-id='" + f.soon + "']"
	require.Equal(t, "vence em menos de 24 h", br.text(soon+" [data-testid=disp-due-soon]"))
	require.Equal(t, hostileJustification, br.text(soon+" [data-testid=disp-justification]"))
	require.Equal(t, "prazo vencido", br.text("[data-testid=disp-row][data-id='"+f.overdue+"'] [data-testid=disp-overdue]"))
	require.EqualValues(t, http.StatusOK, br.click(soon+" [data-testid=disp-charge]"))
	require.Equal(t, f.soonCharge, br.text("[data-testid=tx-id]"))
}
