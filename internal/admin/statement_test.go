package admin_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit/chromium"
)

// setClock moves the gateway's clock so that now is about at (the real
// clock keeps running from there).
func (b *bundle) setClock(at time.Time) {
	b.t.Helper()
	b.clock.Advance(at.Sub(b.clock.Now()))
}

// paidCharge creates and pays a charge through the API at the clock's now.
func (b *bundle) paidCharge(cred backoffice.Credentials, externalID, amount string) string {
	b.t.Helper()
	id := b.charge(cred, externalID, amount)
	status, body := b.api(cred, "POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
	require.Equal(b.t, http.StatusOK, status, "%v", body)
	return id
}

// payout sends a payout of amount reais through the API and returns its id.
func (b *bundle) payout(cred backoffice.Credentials, externalID string, amount int) string {
	b.t.Helper()
	status, body := b.api(cred, "POST", "/api/v1/gateway/pix-payment", map[string]any{
		"amount": amount, "external_id": externalID, "description": "Fornecedor",
		"creditParty": map[string]any{"name": "Fornecedor Ltda", "keyType": "EMAIL", "key": "fornecedor@example.com"},
		"callbackUrl": "https://merchant.example.com/webhooks/pix"})
	require.Equal(b.t, http.StatusOK, status, "%v", body)
	return body["transaction_id"].(string)
}

// csvRows parses a CSV statement and returns its rows without the header,
// each as transaction_id, type, amount_cents, balance_cents (and at apart).
func csvRows(t *testing.T, body string) (rows [][4]string, at []string) {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	require.NoError(t, err, body)
	require.NotEmpty(t, recs)
	require.Equal(t, gateway.CSVHeader, recs[0])
	require.True(t, strings.HasSuffix(body, "\r\n"), "RFC 4180 line ends, complete")
	for _, r := range recs[1:] {
		rows = append(rows, [4]string{r[1], r[2], r[4], r[5]})
		at = append(at, r[0])
	}
	return rows, at
}

var saoPaulo = func() *time.Location {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		panic(err)
	}
	return loc
}()

// statementDays runs money through one client across São Paulo day and
// month boundaries, the clock set to each moment (fees: 1% on charges,
// R$ 0,50 on payouts):
//
//	2026-02-28 20:00Z (17:00 SP, Feb 28)  charge A 10,00     → 9,90
//	2026-03-09 14:00Z (11:00 SP, Mar 9)   charge B 100,00    → 108,90
//	2026-03-10 02:00Z (23:00 SP, Mar 9)   payout P 20,00     → 88,40
//	2026-03-10 04:00Z (01:00 SP, Mar 10)  charge C 5,00      → 93,35
//	2026-04-01 02:30Z (23:30 SP, Mar 31)  charge D 2,00      → 95,33
//	2026-04-01 03:30Z (00:30 SP, Apr 1)   charge E 3,00      → 98,30
type statementDays struct {
	A, B, P, C, D, E string
}

func (b *bundle) statementDays() statementDays {
	b.t.Helper()
	ctx := context.Background()
	require.NoError(b.t, b.db.Write(ctx, func(tx *store.Tx) error {
		return tx.SetClientFees(ctx, b.merchant.ClientID, pix.FeeRule{PercentBP: 100}, pix.FeeRule{Fixed: 50})
	}))
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339, s)
		require.NoError(b.t, err)
		return t
	}
	var d statementDays
	b.setClock(at("2026-02-28T20:00:00Z"))
	d.A = b.paidCharge(b.merchant, "st-a", "10.00")
	b.setClock(at("2026-03-09T14:00:00Z"))
	d.B = b.paidCharge(b.merchant, "st-b", "100.00")
	b.setClock(at("2026-03-10T02:00:00Z"))
	d.P = b.payout(b.merchant, "st-p", 20)
	b.setClock(at("2026-03-10T04:00:00Z"))
	d.C = b.paidCharge(b.merchant, "st-c", "5.00")
	b.setClock(at("2026-04-01T02:30:00Z"))
	d.D = b.paidCharge(b.merchant, "st-d", "2.00")
	b.setClock(at("2026-04-01T03:30:00Z"))
	d.E = b.paidCharge(b.merchant, "st-e", "3.00")
	return d
}

// TestStatementDownloads: an operator picks a day and a month of a client
// with paid charges and a payout and downloads them. The page shows the
// period's opening and closing available balances; the CSV has each
// movement with its fee and running balance; the day and month are São
// Paulo's — the payout at 02:00 UTC on March 10 is in March 9's statement,
// the charge at 02:30 UTC on April 1 in March's, the one at 03:30 UTC in
// April's.
func TestStatementDownloads(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		d := b.statementDays()
		pw := b.user("ops@example.com", pix.RoleOperator, "")
		c := b.web()
		c.login("ops@example.com", pw)
		id := b.merchant.ClientID

		// The page: the form, then the chosen day's balances and link.
		p := c.get("/admin/statement")
		require.Equal(t, http.StatusOK, p.status)
		require.Contains(t, p.body, `data-testid="statement-form"`)
		require.Contains(t, p.body, `<option value="`+id+`"`, "operators choose among the clients")
		require.NotContains(t, p.body, `data-testid="statement-result"`)

		p = c.get("/admin/statement?" + url.Values{"client": {id}, "period": {"day"}, "day": {"2026-03-09"}, "month": {"2026-01"}, "format": {"csv"}}.Encode())
		require.Equal(t, http.StatusOK, p.status, p.body)
		require.Equal(t, "R$ 9,90", field(t, p.body, "statement-opening"))
		require.Equal(t, "R$ 88,40", field(t, p.body, "statement-closing"))
		require.Equal(t, "De 09/03/2026 00:00:00 até 10/03/2026 00:00:00 (horário de Brasília).", field(t, p.body, "statement-window"))
		link := attr(t, p.body, "statement-download")
		require.Equal(t, "/admin/statement/download?client="+id+"&day=2026-03-09&format=csv", link)

		// The day's CSV.
		dl := c.get(link)
		require.Equal(t, http.StatusOK, dl.status, dl.body)
		require.Equal(t, "text/csv; charset=utf-8", dl.header.Get("Content-Type"))
		require.Equal(t, `attachment; filename="pixgate-`+id+`-2026-03-09.csv"`, dl.header.Get("Content-Disposition"))
		rows, at := csvRows(t, dl.body)
		require.Equal(t, [][4]string{
			{d.B, "charge", "10000", "10990"}, {d.B, "charge_fee", "-100", "10890"},
			{d.P, "payout", "-2000", "8890"}, {d.P, "payout_fee", "-50", "8840"},
		}, rows, "opening 990 + the day's movements")
		require.True(t, strings.HasPrefix(at[0], "2026-03-09T14:00:"), at[0])
		require.True(t, strings.HasPrefix(at[2], "2026-03-10T02:00:"), "the payout at 02:00 UTC is 23:00 of March 9 in São Paulo: %s", at[2])

		// The next day starts at São Paulo midnight (03:00 UTC).
		p = c.get("/admin/statement?client=" + id + "&period=day&day=2026-03-10")
		require.Equal(t, http.StatusOK, p.status, p.body)
		require.Equal(t, "R$ 88,40", field(t, p.body, "statement-opening"))
		require.Equal(t, "R$ 93,35", field(t, p.body, "statement-closing"))
		dl = c.get(attr(t, p.body, "statement-download"))
		require.Equal(t, http.StatusOK, dl.status)
		rows, _ = csvRows(t, dl.body)
		require.Equal(t, [][4]string{{d.C, "charge", "500", "9340"}, {d.C, "charge_fee", "-5", "9335"}}, rows)

		// March as CSV: from March 1 00:00 to April 1 00:00 in São Paulo.
		p = c.get("/admin/statement?client=" + id + "&period=month&month=2026-03&day=2026-03-10&format=csv")
		require.Equal(t, http.StatusOK, p.status, p.body)
		require.Equal(t, "R$ 9,90", field(t, p.body, "statement-opening"))
		require.Equal(t, "R$ 95,33", field(t, p.body, "statement-closing"))
		link = attr(t, p.body, "statement-download")
		require.Equal(t, "/admin/statement/download?client="+id+"&format=csv&month=2026-03", link)
		dl = c.get(link)
		require.Equal(t, http.StatusOK, dl.status, dl.body)
		require.Equal(t, `attachment; filename="pixgate-`+id+`-2026-03.csv"`, dl.header.Get("Content-Disposition"))
		rows, _ = csvRows(t, dl.body)
		require.Equal(t, [][4]string{
			{d.B, "charge", "10000", "10990"}, {d.B, "charge_fee", "-100", "10890"},
			{d.P, "payout", "-2000", "8890"}, {d.P, "payout_fee", "-50", "8840"},
			{d.C, "charge", "500", "9340"}, {d.C, "charge_fee", "-5", "9335"},
			{d.D, "charge", "200", "9535"}, {d.D, "charge_fee", "-2", "9533"},
		}, rows, "A (February) and E (April, São Paulo) are not in March")

		// March as JSON: the same window, opening and closing.
		dl = c.get("/admin/statement/download?client=" + id + "&month=2026-03&format=json")
		require.Equal(t, http.StatusOK, dl.status, dl.body)
		require.Equal(t, "application/json; charset=utf-8", dl.header.Get("Content-Type"))
		require.Equal(t, `attachment; filename="pixgate-`+id+`-2026-03.json"`, dl.header.Get("Content-Disposition"))
		var body struct {
			Data struct {
				From      string `json:"from"`
				To        string `json:"to"`
				Opening   int64  `json:"opening_balance_cents"`
				Closing   int64  `json:"closing_balance_cents"`
				Movements []struct {
					TransactionID string `json:"transaction_id"`
					Type          string `json:"type"`
				} `json:"movements"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal([]byte(dl.body), &body), dl.body)
		require.Equal(t, "2026-03-01T03:00:00.000Z", body.Data.From)
		require.Equal(t, "2026-04-01T03:00:00.000Z", body.Data.To)
		require.EqualValues(t, 990, body.Data.Opening)
		require.EqualValues(t, 9533, body.Data.Closing)
		require.Len(t, body.Data.Movements, 8)

		// April starts with E, at 00:30 in São Paulo.
		dl = c.get("/admin/statement/download?client=" + id + "&month=2026-04&format=csv")
		require.Equal(t, http.StatusOK, dl.status, dl.body)
		rows, _ = csvRows(t, dl.body)
		require.Equal(t, [][4]string{{d.E, "charge", "300", "9833"}, {d.E, "charge_fee", "-3", "9830"}}, rows)
		// February ends with A.
		dl = c.get("/admin/statement/download?client=" + id + "&month=2026-02&format=csv")
		rows, _ = csvRows(t, dl.body)
		require.Equal(t, [][4]string{{d.A, "charge", "1000", "1000"}, {d.A, "charge_fee", "-10", "990"}}, rows)

		// In English, money and the window read the English way.
		p = c.get("/admin/statement?client=" + id + "&day=2026-03-09&lang=en")
		require.Equal(t, "R$ 88.40", field(t, p.body, "statement-closing"))
		require.Contains(t, p.body, "Download statement (CSV)")
	})
}

// TestStatementMerchantSeesOnlyItsClient: a merchant user's statement page
// is fixed to its own client; naming another client, on the page or the
// download, is the panel's 404, and nothing of the other client shows.
func TestStatementMerchantSeesOnlyItsClient(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	b.setClock(time.Date(2026, 5, 5, 15, 0, 0, 0, time.UTC)) // midday in São Paulo: the test stays on one day
	other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "Outra Loja"})
	require.NoError(t, err)
	otherTx := b.paidCharge(other, "outra-1", "12.34")
	ownTx := b.paidCharge(b.merchant, "minha-1", "10.00")
	pw := b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID)
	c := b.web()
	c.login("loja@example.com", pw)
	today := b.clock.Now().In(saoPaulo).Format("2006-01-02")
	require.Equal(t, "2026-05-05", today)

	// The overview links to the statement; the page has no client choice.
	p := c.get("/admin/c/" + b.merchant.ClientID + "/")
	require.Equal(t, "/admin/statement?client="+b.merchant.ClientID, attr(t, p.body, "nav-statement"))
	p = c.get("/admin/statement")
	require.Equal(t, http.StatusOK, p.status)
	require.NotContains(t, p.body, `data-testid="statement-client"`)
	require.NotContains(t, p.body, other.ClientID)
	require.NotContains(t, p.body, "Outra Loja")
	require.Contains(t, p.body, `value="`+today+`"`, "the day defaults to today in São Paulo")

	// Without a client parameter, its own.
	p = c.get("/admin/statement?period=day&day=" + today)
	require.Equal(t, http.StatusOK, p.status, p.body)
	require.Equal(t, "R$ 10,00", field(t, p.body, "statement-closing"))
	dl := c.get(attr(t, p.body, "statement-download"))
	require.Equal(t, http.StatusOK, dl.status)
	require.Equal(t, `attachment; filename="pixgate-`+b.merchant.ClientID+"-"+today+`.csv"`, dl.header.Get("Content-Disposition"))
	rows, _ := csvRows(t, dl.body)
	require.Equal(t, [][4]string{{ownTx, "charge", "1000", "1000"}}, rows)
	require.NotContains(t, dl.body, otherTx)

	// Another client's, or one that does not exist: 404, nothing streamed.
	for _, path := range []string{
		"/admin/statement?client=" + other.ClientID,
		"/admin/statement?client=" + other.ClientID + "&period=day&day=" + today,
		"/admin/statement/download?client=" + other.ClientID + "&day=" + today + "&format=csv",
		"/admin/statement/download?client=" + other.ClientID + "&month=" + today[:7] + "&format=json",
		"/admin/statement/download?client=nope&day=" + today,
	} {
		p := c.get(path)
		require.Equal(t, http.StatusNotFound, p.status, path)
		require.Contains(t, p.body, "Página não encontrada.", path)
		require.Empty(t, p.header.Get("Content-Disposition"), path)
		require.NotContains(t, p.body, otherTx, path)
		require.NotContains(t, p.body, "Outra Loja", path)
		require.NotContains(t, p.body, "12,34", path)
	}

	// The operator gets the other client's statement.
	opw := b.user("ops@example.com", pix.RoleOperator, "")
	op := b.web()
	op.login("ops@example.com", opw)
	dl = op.get("/admin/statement/download?client=" + other.ClientID + "&day=" + today + "&format=csv")
	require.Equal(t, http.StatusOK, dl.status)
	rows, _ = csvRows(t, dl.body)
	require.Equal(t, [][4]string{{otherTx, "charge", "1234", "1234"}}, rows)

	// Logged out: the login page, nothing streamed.
	p = b.web().get("/admin/statement/download?client=" + b.merchant.ClientID + "&day=" + today)
	require.Equal(t, http.StatusSeeOther, p.status)
	require.Equal(t, "/admin/login", p.header.Get("Location"))
	require.Empty(t, p.header.Get("Content-Disposition"))
}

// TestStatementBadInput: a download or page asked for without a day or
// month, with a malformed one, an unknown format or (an operator) no
// client answers 400 with the page and its message, nothing streamed.
func TestStatementBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	b.paidCharge(b.merchant, "bad-1", "10.00")
	pw := b.user("ops@example.com", pix.RoleOperator, "")
	c := b.web()
	c.login("ops@example.com", pw)
	id := b.merchant.ClientID
	for _, tc := range []struct{ query, msg string }{
		{"client=" + id + "&month=2026-13&format=csv", "Mês inválido"},
		{"client=" + id + "&month=março&format=csv", "Mês inválido"},
		{"client=" + id + "&month=1999-12", "Mês inválido"},
		{"client=" + id + "&period=month&month=&day=2026-03-09", "Mês inválido"},
		{"client=" + id + "&day=2026-02-30&format=csv", "Dia inválido"},
		{"client=" + id + "&day=09/03/2026", "Dia inválido"},
		{"client=" + id + "&format=csv", "Informe um dia ou um mês."},
		{"client=" + id + "&day=2026-03-09&month=2026-03", "Informe um dia ou um mês."},
		{"client=" + id + "&period=week&day=2026-03-09", "Informe um dia ou um mês."},
		{"client=" + id + "&day=2026-03-09&format=xml", "Formato inválido"},
		{"day=2026-03-09&format=csv", "Escolha um cliente."},
	} {
		for _, path := range []string{"/admin/statement/download?", "/admin/statement?"} {
			p := c.get(path + tc.query)
			require.Equal(t, http.StatusBadRequest, p.status, path+tc.query)
			require.Equal(t, "text/html; charset=utf-8", p.header.Get("Content-Type"), path+tc.query)
			require.Empty(t, p.header.Get("Content-Disposition"), path+tc.query)
			require.Contains(t, field(t, p.body, "alert"), tc.msg, path+tc.query)
			require.Contains(t, p.body, `data-testid="statement-form"`, "the form again, to correct")
			require.NotContains(t, p.body, `data-testid="statement-download"`, path+tc.query)
			require.NotContains(t, p.body, "transaction_id", path+tc.query)
		}
	}
	p := c.get("/admin/statement/download?client=" + id + "&month=2026-13&lang=en")
	require.Equal(t, http.StatusBadRequest, p.status)
	require.Contains(t, field(t, p.body, "alert"), "Invalid month")
	// The bad value is shown back in its field.
	p = c.get("/admin/statement?client=" + id + "&period=month&month=2026-13")
	require.Contains(t, p.body, `value="2026-13"`)
}

// TestStatementInBrowser: in Chromium, an operator goes from the menu to the
// statement page, picks the client and a day, then a month, and gets the
// balances and a download link that serves the file.
func TestStatementInBrowser(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	pw := b.user("ops@example.com", pix.RoleOperator, "")
	d := b.statementDays()
	root := chromium.Launch(t, 90*time.Second)
	br := &browser{t: t, ctx: root, base: b.srv.URL}
	br.login("ops@example.com", pw)
	id := b.merchant.ClientID

	require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-statement]"))
	require.Equal(t, 1, br.count("[data-testid=statement-form]"))
	require.Zero(t, br.count("[data-testid=statement-result]"))
	set := func(sel, value string) {
		t.Helper()
		ctx, cancel := br.step()
		defer cancel()
		require.NoError(t, chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(sel), value)), sel)
	}
	set("#client", id)
	set("#day", "2026-03-09")
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=statement-day-submit]"))
	require.Equal(t, "R$ 9,90", br.text("[data-testid=statement-opening]"))
	require.Equal(t, "R$ 88,40", br.text("[data-testid=statement-closing]"))
	require.Equal(t, "Loja Exemplo", br.text("[data-testid=client-name]"), "the chosen client's menu")
	href := func() string {
		t.Helper()
		ctx, cancel := br.step()
		defer cancel()
		a, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS("[data-testid=statement-download]"), "href"))
		require.NoError(t, err)
		require.True(t, a.Exists)
		return a.Value
	}
	require.Equal(t, "/admin/statement/download?client="+id+"&day=2026-03-09&format=csv", href())
	require.Equal(t, "Baixar extrato (CSV)", br.text("[data-testid=statement-download]"))

	// A month, as JSON; the form keeps the client chosen.
	set("#month", "2026-03")
	set("#format", "json")
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=statement-month-submit]"))
	require.Equal(t, "Período 2026-03", br.text("[data-testid=statement-period]"))
	require.Equal(t, "R$ 95,33", br.text("[data-testid=statement-closing]"))
	link := href()
	require.Equal(t, "/admin/statement/download?client="+id+"&format=json&month=2026-03", link)

	c := b.web()
	c.login("ops@example.com", pw)
	dl := c.get(link)
	require.Equal(t, http.StatusOK, dl.status)
	require.Equal(t, `attachment; filename="pixgate-`+id+`-2026-03.json"`, dl.header.Get("Content-Disposition"))
	require.Contains(t, dl.body, d.P)
	require.NotContains(t, dl.body, d.E)
}
