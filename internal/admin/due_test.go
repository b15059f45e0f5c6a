package admin_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/testkit/chromium"
)

// atNoon moves the bundle's clock to noon of its São Paulo date, so that
// the date does not change while a test runs.
func (b *bundle) atNoon() {
	b.t.Helper()
	d := b.spToday(0)
	b.setClock(time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, d.Location()))
}

// spToday is the São Paulo date of the bundle's clock, days on.
func (b *bundle) spToday(days int) time.Time {
	b.t.Helper()
	loc, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(b.t, err)
	return b.clock.Now().In(loc).AddDate(0, 0, days)
}

// dueCharge creates, through the API, a charge of R$ 100.00 due in three
// days and payable five days after, with a 2% fine, 1% a month and R$ 1.00
// off until today; it returns its payment_id and due date.
func (b *bundle) dueCharge(ext string) (string, time.Time) {
	b.t.Helper()
	due := b.spToday(3)
	body := validCharge(ext, "100.00")
	body["due"] = map[string]any{"date": due.Format(pix.DateLayout), "days_after": 5, "fine": map[string]any{"percent": 2},
		"interest": map[string]any{"percent_per_month": 1}, "discounts": []any{map[string]any{"until": b.spToday(0).Format(pix.DateLayout), "amount": 1}}}
	status, resp := b.api(b.merchant, "POST", "/api/v1/gateway/request-qrcode", body)
	require.Equal(b.t, http.StatusCreated, status, "%v", resp)
	return resp["payment_id"].(string), due
}

// TestDueChargeDetail: the detail of a charge with a due date shows the
// due date, its last day, its terms and the amount due today; once paid,
// the amount due today is gone and the amount paid, and what was due on
// the day it was paid, are shown.
func TestDueChargeDetail(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		b.atNoon()
		c := b.web()
		c.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))
		id, due := b.dueCharge("bill-1")
		detail := "/admin/c/" + b.merchant.ClientID + "/transactions/" + id

		p := c.get(detail + "?lang=en")
		require.Equal(t, http.StatusOK, p.status)
		require.Equal(t, due.Format("2006-01-02"), field(t, p.body, "tx-due-date"))
		require.Equal(t, due.AddDate(0, 0, 5).Format("2006-01-02"), field(t, p.body, "tx-due-lastday"))
		require.Equal(t, "fine of 2%; interest of 1% a month; discount of R$ 1.00 until "+b.spToday(0).Format("2006-01-02"), field(t, p.body, "tx-due-terms"))
		require.Equal(t, "R$ 99.00", field(t, p.body, "tx-due-today"), "R$ 1.00 off today")
		require.NotContains(t, p.body, `data-testid="tx-paid-amount"`)
		p = c.get(detail + "?lang=pt-BR")
		require.Equal(t, due.Format("02/01/2006"), field(t, p.body, "tx-due-date"))
		require.Equal(t, "R$ 99,00", field(t, p.body, "tx-due-today"))

		// Paid two days after its due date: a 2% fine and 2 days of 1% a
		// month (R$ 0.0667, rounded to 0.07).
		status, resp := b.api(b.merchant, "POST", "/api/v1/sandbox/charges/"+id+"/pay", map[string]any{"date": due.AddDate(0, 0, 2).Format(pix.DateLayout)})
		require.Equal(t, http.StatusOK, status, "%v", resp)
		p = c.get(detail + "?lang=en")
		require.Equal(t, "R$ 102.07", field(t, p.body, "tx-paid-amount"))
		require.Equal(t, "R$ 102.07", field(t, p.body, "tx-due-expected"))
		require.Equal(t, "— (can no longer be paid)", field(t, p.body, "tx-due-today"))
		require.Equal(t, "R$ 100.00", field(t, p.body, "tx-amount"), "the amount asked for")
		require.NotContains(t, p.body, `data-testid="amount-mismatch"`)

		// An immediate charge shows none of it.
		plain := b.charge(b.merchant, "plain-1", "10.00")
		p = c.get("/admin/c/" + b.merchant.ClientID + "/transactions/" + plain)
		require.NotContains(t, p.body, `data-testid="tx-due-date"`)
		require.NotContains(t, p.body, `data-testid="tx-due-today"`)
	})
}

// TestBrowserDueCharge: in Chromium, an operator sees a charge's due date
// and the amount due today, pays it from the panel (today, for what is due
// today) and then sees the amount paid.
func TestBrowserDueCharge(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	b.atNoon()
	pw := b.user("ops@example.com", pix.RoleOperator, "")
	br := &browser{t: t, ctx: chromium.Launch(t, 90*time.Second), base: b.srv.URL}
	br.login("ops@example.com", pw)
	id, due := b.dueCharge("bill-browser")
	require.EqualValues(t, http.StatusOK, br.open("/admin/c/"+b.merchant.ClientID+"/transactions/"+id))
	require.Equal(t, due.Format("02/01/2006"), br.text("[data-testid=tx-due-date]"))
	require.Equal(t, "R$ 99,00", br.text("[data-testid=tx-due-today]"))
	require.Equal(t, "R$ 100,00", br.text("[data-testid=tx-amount]"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=sandbox-pay]"))
	require.Equal(t, "Pago", br.text("[data-testid=tx-status]"), "PAID in Portuguese")
	require.Equal(t, "R$ 99,00", br.text("[data-testid=tx-paid-amount]"))
	require.Equal(t, "— (não pode mais ser paga)", br.text("[data-testid=tx-due-today]"))
	require.Contains(t, br.text("[data-testid=ledger]"), "+R$ 99,00")
}
