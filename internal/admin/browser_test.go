package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit/chromium"
)

// browser drives one Chromium tab against the bundle's server.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
}

const stepTimeout = 15 * time.Second

func (br *browser) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(br.ctx, stepTimeout)
}

// open navigates to path and returns the HTTP status of the page.
func (br *browser) open(path string) int64 {
	br.t.Helper()
	ctx, cancel := br.step()
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(br.base+path))
	require.NoError(br.t, err, "open %s", path)
	return resp.Status
}

// click clicks what sel finds, waits for the page it leads to and returns
// that page's status (after redirects).
func (br *browser) click(sel string) int64 {
	br.t.Helper()
	ctx, cancel := br.step()
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	require.NoError(br.t, err, "click %s", sel)
	return resp.Status
}

func (br *browser) fill(sel, value string) {
	br.t.Helper()
	ctx, cancel := br.step()
	defer cancel()
	// The field is emptied through its value property, not chromedp.Clear:
	// Clear rewrites the value attribute, and the DOM event it causes is
	// applied to chromedp's node while SendKeys reads the node's attributes
	// without a lock (a data race inside chromedp v0.23.0).
	require.NoError(br.t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel))), "fill %s", sel)
	_, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(`+jsString(sel)+`).value = ''`))
	require.NoError(br.t, err, "empty %s", sel)
	require.NoError(br.t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(sel), value)), "fill %s", sel)
}

func (br *browser) text(sel string) string {
	br.t.Helper()
	ctx, cancel := br.step()
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(br.t, err, "text of %s", sel)
	return strings.TrimSpace(s)
}

func (br *browser) count(sel string) int {
	br.t.Helper()
	ctx, cancel := br.step()
	defer cancel()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(`+jsString(sel)+`).length`))
	require.NoError(br.t, err)
	return n
}

func jsString(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }

func (br *browser) login(email, password string) {
	br.t.Helper()
	require.EqualValues(br.t, http.StatusOK, br.open("/admin/login"))
	br.fill("#email", email)
	br.fill("#password", password)
	require.EqualValues(br.t, http.StatusOK, br.click("[data-testid=login-submit]"))
	require.Equal(br.t, email, br.text("[data-testid=user]"))
}

// TestBrowser drives the panel in Chromium on each database: log in, create
// a client and use the secret copied from the page, rotate it, find a
// charge by external_id, pay it, resend a webhook, and see a merchant user
// refused another client's pages.
func TestBrowser(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		pw := b.user("ops@example.com", pix.RoleOperator, "")
		root := chromium.Launch(t, 90*time.Second)
		br := &browser{t: t, ctx: root, base: b.srv.URL}
		ctx := context.Background()

		br.login("ops@example.com", pw)

		// Create a client; the secret on the page works against the API.
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-clients]"))
		br.fill("#name", "Loja Navegador")
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=create-client-submit]"))
		cred := backoffice.Credentials{ClientID: br.text("[data-testid=client-id]"), ClientSecret: br.text("[data-testid=client-secret]")}
		require.True(t, strings.HasPrefix(cred.ClientSecret, "sk_test_"), cred.ClientSecret)
		status, _ := b.api(cred, "GET", "/api/v1/wallet/balance", nil)
		require.Equal(t, http.StatusOK, status)

		// Rotate it: the old secret is refused at once, the new one works.
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=open-settings]"))
		require.Equal(t, cred.ClientID, br.text("[data-testid=client-id]"))
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=rotate-secret]"))
		rotated := backoffice.Credentials{ClientID: cred.ClientID, ClientSecret: br.text("[data-testid=new-secret]")}
		require.NotEqual(t, cred.ClientSecret, rotated.ClientSecret)
		status, body := b.api(cred, "GET", "/api/v1/wallet/balance", nil)
		require.Equal(t, http.StatusUnauthorized, status, "%v", body)
		status, _ = b.api(rotated, "GET", "/api/v1/wallet/balance", nil)
		require.Equal(t, http.StatusOK, status)

		// Find a charge by its external_id and open it.
		for _, ext := range []string{"pedido-40", "pedido-41"} {
			b.charge(rotated, ext, "10.00")
		}
		target := b.charge(rotated, "pedido-42", "42.50")
		toExpire := b.charge(rotated, "pedido-43", "7.00")
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-transactions]"))
		require.Equal(t, 4, br.count("[data-testid=tx-link]"))
		br.fill("[data-testid=search]", "pedido-42")
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=search-submit]"))
		require.Equal(t, 1, br.count("[data-testid=tx-link]"))
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=tx-link]"))
		require.Equal(t, target, br.text("[data-testid=tx-id]"))
		require.Equal(t, "pedido-42", br.text("[data-testid=tx-external]"))
		require.Equal(t, "Pendente", br.text("[data-testid=tx-status]"))
		require.Equal(t, "R$ 42,50", br.text("[data-testid=tx-amount]"))

		// Pay it from the panel: PAID, with its ledger posting and event.
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=sandbox-pay]"))
		require.Equal(t, "Cobrança paga (sandbox).", br.text("[data-testid=notice]"))
		require.Equal(t, "Pago", br.text("[data-testid=tx-status]"))
		require.Len(t, br.text("[data-testid=tx-e2e]"), 32, "the payment's end-to-end id")
		require.Contains(t, br.text("[data-testid=ledger]"), "+R$ 42,50")
		require.Contains(t, br.text("[data-testid=event]"), "pix.cashin.paid")
		require.Zero(t, br.count("[data-testid=sandbox-pay]"), "a paid charge has no sandbox actions")
		status, body = b.api(rotated, "POST", "/api/v1/wallet/transaction", map[string]any{"external_id": "pedido-42"})
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, "PAID", body["data"].(map[string]any)["status"])

		// Its webhook failed for good; resend it from the detail page.
		b.failDelivery(target, true)
		detail := "/admin/c/" + cred.ClientID + "/transactions/" + target
		require.EqualValues(t, http.StatusOK, br.open(detail))
		require.Equal(t, "falhou", br.text("[data-testid=event-status]"))
		require.Contains(t, br.text("[data-testid=attempts]"), "500")
		require.Contains(t, br.text("[data-testid=attempts]"), "unexpected status 500")
		before := b.clock.Now()
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=resend]"))
		require.Equal(t, "Entrega agendada novamente.", br.text("[data-testid=notice]"))
		require.Equal(t, "pendente", br.text("[data-testid=event-status]"))
		events, err := b.db.Events(ctx, target)
		require.NoError(t, err)
		require.Len(t, events, 1)
		require.Equal(t, "pending", events[0].Status)
		require.Equal(t, 1, events[0].Attempts, "the attempt log is kept")
		require.False(t, events[0].NextAttemptAt.After(b.clock.Now()), "due now")
		require.False(t, events[0].NextAttemptAt.Before(before.Truncate(time.Millisecond)))

		// Expire another charge from the panel.
		require.EqualValues(t, http.StatusOK, br.open("/admin/c/"+cred.ClientID+"/transactions/"+toExpire))
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=sandbox-expire]"))
		require.Equal(t, "Cancelado", br.text("[data-testid=tx-status]"))

		// The client's overview counts today's activity.
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-overview]"))
		require.Equal(t, "R$ 42,50", br.text("[data-testid=balance]"))
		require.Equal(t, "R$ 42,50", br.text("[data-testid=volume-in]"))

		// Operators reach the unmatched receipts from the navigation.
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-unmatched]"))
		require.Equal(t, "Nenhum recebimento não conciliado.", br.text("[data-testid=no-unmatched]"))
		require.Equal(t, "R$ 0,00", br.text("[data-testid=suspense-balance]"))
		require.EqualValues(t, http.StatusOK, br.open("/admin/c/"+cred.ClientID+"/"))

		// A merchant user of another client, in its own browser context,
		// sees its client and gets 404 for this one's pages.
		mpw := b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID)
		mb := &browser{t: t, ctx: chromium.Isolated(t, root), base: b.srv.URL}
		mb.login("loja@example.com", mpw)
		require.Equal(t, "Loja Exemplo", mb.text("[data-testid=client-name]"))
		require.Zero(t, mb.count("[data-testid=nav-clients]"))
		for _, path := range []string{detail, "/admin/c/" + cred.ClientID + "/", "/admin/c/" + cred.ClientID + "/settings", "/admin/clients", "/admin/unmatched"} {
			require.EqualValues(t, http.StatusNotFound, mb.open(path), path)
			require.Equal(t, "404", mb.text("[data-testid=error-status]"))
		}
		require.EqualValues(t, http.StatusNotFound, mb.open("/admin/c/"+b.merchant.ClientID+"/transactions/"+target), "not through its own client either")
		require.EqualValues(t, http.StatusOK, mb.open("/admin/c/"+b.merchant.ClientID+"/settings"))
		require.Equal(t, "Somente operadores alteram as tarifas.", mb.text("[data-testid=fees-readonly]"))

		// Switch language, then log out.
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=lang-en]"))
		require.Equal(t, "Transactions", br.text("[data-testid=nav-transactions]"))
		require.EqualValues(t, http.StatusOK, br.click("[data-testid=logout]"))
		require.Equal(t, "You have logged out.", br.text("[data-testid=notice]"))
		require.EqualValues(t, http.StatusOK, br.open("/admin/"))
		require.Equal(t, 1, br.count("#password"), "back at the login form")
	})
}

// TestScreenshots rewrites docs/screenshots/*.png. It runs only when asked:
//
//	PIXGATE_SCREENSHOTS=1 go test -run TestScreenshots ./internal/admin/
func TestScreenshots(t *testing.T) {
	if os.Getenv("PIXGATE_SCREENSHOTS") != "1" {
		t.Skip("set PIXGATE_SCREENSHOTS=1 to rewrite docs/screenshots")
	}
	b := setup(t, openSQLite, "sandbox")
	ctx := context.Background()
	require.NoError(t, b.db.Write(ctx, func(tx *store.Tx) error {
		return tx.SetClientFees(ctx, b.merchant.ClientID, pix.FeeRule{PercentBP: 99}, pix.FeeRule{Fixed: 50})
	}))
	other, err := b.bo.CreateClient(ctx, backoffice.ClientParams{Name: "Café Aurora"})
	require.NoError(t, err)
	pw := b.user("ops@pixgate.dev", pix.RoleOperator, "")
	amounts := []string{"129.90", "45.00", "1250.00", "89.90", "19.99", "310.00", "74.50", "560.00"}
	var ids []string
	for i, amt := range amounts {
		ids = append(ids, b.charge(b.merchant, "pedido-"+string(rune('1'+i))+"0"+string(rune('1'+i)), amt))
	}
	pay := func(cred backoffice.Credentials, id string) {
		status, body := b.api(cred, "POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
		require.Equal(t, http.StatusOK, status, "%v", body)
	}
	for _, i := range []int{0, 2, 3, 5, 7} {
		pay(b.merchant, ids[i])
	}
	status, body := b.api(b.merchant, "POST", "/api/v1/sandbox/charges/"+ids[4]+"/expire", nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	pay(other, b.charge(other, "cafe-1", "32.00"))
	status, body = b.api(b.merchant, "POST", "/api/v1/gateway/pix-payment", map[string]any{
		"amount": 300, "creditParty": map[string]any{"name": "Fornecedor Ltda", "keyType": "EMAIL", "key": "fornecedor@example.com"}, "external_id": "saque-1",
		"description": "Fornecedor", "callbackUrl": "https://merchant.example.com/webhooks/pix"})
	require.Equal(t, http.StatusOK, status, "%v", body)
	b.failDelivery(ids[0], false)
	b.failDelivery(ids[0], false)

	root := chromium.Launch(t, 60*time.Second)
	br := &browser{t: t, ctx: root, base: b.srv.URL}
	dir := filepath.Join("..", "..", "docs", "screenshots")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	shot := func(name string) {
		t.Helper()
		sctx, cancel := br.step()
		defer cancel()
		png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
	}
	require.EqualValues(t, http.StatusOK, br.open("/admin/login"))
	shot("login")
	br.login("ops@pixgate.dev", pw)
	shot("home")
	base := "/admin/c/" + b.merchant.ClientID
	require.EqualValues(t, http.StatusOK, br.open(base+"/"))
	shot("overview")
	require.EqualValues(t, http.StatusOK, br.open(base+"/transactions"))
	shot("transactions")
	require.EqualValues(t, http.StatusOK, br.open(base+"/transactions/"+ids[0]))
	shot("transaction")
	require.EqualValues(t, http.StatusOK, br.open(base+"/settings?lang=en"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=rotate-secret]"))
	shot("settings")

	// The same overview on a phone.
	sctx, cancel := br.step()
	defer cancel()
	require.NoError(t, chromedp.Do(sctx, chromedp.EmulateViewport(390, 844)))
	require.EqualValues(t, http.StatusOK, br.open(base+"/?lang=pt-BR"))
	shot("overview-mobile")
}

// TestTransactionsOnAPhone opens the transactions list at a phone's width
// (390 px) and checks that every row's id link is on screen, not clipped,
// shows the start of the id, and leads to the detail page with the whole
// id; and that nothing needs scrolling sideways.
func TestTransactionsOnAPhone(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	pw := b.user("ops@example.com", pix.RoleOperator, "")
	var ids []string
	for i := range 3 {
		ext := fmt.Sprintf("pedido-%d-", i) + strings.Repeat("x", 55) // 64 characters, the longest
		ids = append(ids, b.charge(b.merchant, ext, "1234.56"))
	}
	root := chromium.Launch(t, 90*time.Second)
	br := &browser{t: t, ctx: root, base: b.srv.URL}
	br.login("ops@example.com", pw)
	ctx, cancel := br.step()
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)))
	require.EqualValues(t, http.StatusOK, br.open("/admin/c/"+b.merchant.ClientID+"/transactions"))

	type link struct {
		Left    float64 `json:"left"`
		Right   float64 `json:"right"`
		Width   float64 `json:"width"`
		Shown   string  `json:"shown"`
		Href    string  `json:"href"`
		Clipped bool    `json:"clipped"`
	}
	type layoutInfo struct {
		Inner       float64 `json:"inner"`
		Page        float64 `json:"page"`
		TableScroll float64 `json:"tableScroll"`
		TableClient float64 `json:"tableClient"`
	}
	ctx, cancel = br.step()
	defer cancel()
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]link](`[...document.querySelectorAll('[data-testid=tx-link]')].map(a => {
		const r = a.getBoundingClientRect();
		const shown = [...a.querySelectorAll('code')].filter(c => c.offsetWidth > 0);
		return {left: r.left, right: r.right, width: r.width, shown: shown.map(c => c.innerText).join(''),
			href: a.getAttribute('href'), clipped: shown.some(c => c.scrollWidth > c.clientWidth + 1)};
	})`))
	require.NoError(t, err)
	layout, err := chromedp.Run(ctx, chromedp.Evaluate[layoutInfo](`({inner: window.innerWidth, page: document.documentElement.scrollWidth,
		tableScroll: document.querySelector('.table').scrollWidth, tableClient: document.querySelector('.table').clientWidth})`))
	require.NoError(t, err)
	require.Len(t, links, 3)
	require.EqualValues(t, 390, layout.Inner)
	require.LessOrEqual(t, layout.Page, layout.Inner, "the page does not scroll sideways")
	require.LessOrEqual(t, layout.TableScroll, layout.TableClient, "the table fits its box")
	for i, l := range links {
		id := ids[len(ids)-1-i] // newest first
		require.Greater(t, l.Width, 0.0, "link %d is visible", i)
		require.GreaterOrEqual(t, l.Left, 0.0)
		require.LessOrEqual(t, l.Right, layout.Inner, "link %d ends on screen", i)
		require.False(t, l.Clipped, "link %d is not cut off", i)
		require.Equal(t, id[:8]+"…", l.Shown)
		require.True(t, strings.HasSuffix(l.Href, "/transactions/"+id), l.Href)
	}
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=tx-link]"))
	require.Equal(t, ids[2], br.text("[data-testid=tx-id]"), "the detail page has the whole id")
}

// TestNavAt1366 opens the longest menu — an operator looking at a client
// with a long name — on a 1366 px wide screen (the most common laptop
// width) in Portuguese and in English: every item is on one line and on
// screen, the menu does not scroll sideways, and the name is cut with its
// whole text in the tooltip.
func TestNavAt1366(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	const name = "Comércio de Alimentos e Bebidas Nossa Senhora Aparecida do Vale do Paraíba Ltda"
	long, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: name})
	require.NoError(t, err)
	pw := b.user("ops@example.com", pix.RoleOperator, "")
	root := chromium.Launch(t, 90*time.Second)
	br := &browser{t: t, ctx: root, base: b.srv.URL}
	br.login("ops@example.com", pw)
	ctx, cancel := br.step()
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1366, 768)))

	type item struct {
		Text   string  `json:"text"`
		Top    float64 `json:"top"`
		Right  float64 `json:"right"`
		Height float64 `json:"height"`
	}
	type navInfo struct {
		Scroll float64 `json:"scroll"`
		Client float64 `json:"client"`
		Right  float64 `json:"right"`
		Title  string  `json:"title"`
		Cut    bool    `json:"cut"`
		Items  []item  `json:"items"`
	}
	for _, lang := range []string{"pt-BR", "en"} {
		require.EqualValues(t, http.StatusOK, br.open("/admin/c/"+long.ClientID+"/transactions?lang="+lang))
		ctx, cancel := br.step()
		nav, err := chromedp.Run(ctx, chromedp.Evaluate[navInfo](`(() => {
			const nav = document.querySelector('.main-nav');
			const r = nav.getBoundingClientRect();
			return {scroll: nav.scrollWidth, client: nav.clientWidth, right: r.right,
				title: nav.querySelector('.crumb').title,
				cut: nav.querySelector('.crumb').scrollWidth > nav.querySelector('.crumb').clientWidth,
				items: [...nav.children].map(c => { const b = c.getBoundingClientRect();
					return {text: c.innerText, top: b.top, right: b.right, height: b.height}; })};
		})()`))
		cancel()
		require.NoError(t, err)
		require.Len(t, nav.Items, 10, "%s: the operator's items, the client's name and the client's items", lang)
		require.LessOrEqual(t, nav.Scroll, nav.Client, "%s: the menu does not scroll sideways", lang)
		require.Equal(t, name, nav.Title, "%s: the client's whole name is the tooltip", lang)
		require.True(t, nav.Cut, "%s: the name is cut (with an ellipsis)", lang)
		for _, it := range nav.Items {
			require.InDelta(t, nav.Items[0].Top+nav.Items[0].Height/2, it.Top+it.Height/2, 2, "%s: %q is on the menu's line", lang, it.Text)
			require.LessOrEqual(t, it.Right, nav.Right+0.5, "%s: %q ends inside the menu", lang, it.Text)
			require.LessOrEqual(t, it.Right, 1366.0, "%s: %q ends on screen", lang, it.Text)
		}
	}
}

// TestBrowserSubAccounts: a parent's merchant user opens Sub-accounts from
// the menu, sees its sub-accounts with their balances, opens one and reads
// its overview and transactions, marked read-only and with no form but
// the logout; the way back is the menu's Sub-accounts.
func TestBrowserSubAccounts(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	f := newFamily(b)
	pw := b.user("shop@example.com", pix.RoleMerchant, f.parent.ClientID)
	root := chromium.Launch(t, 90*time.Second)
	br := &browser{t: t, ctx: root, base: b.srv.URL}
	br.login("shop@example.com", pw)
	require.EqualValues(t, http.StatusOK, br.open("/admin/c/"+f.parent.ClientID+"/?lang=en"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-accounts]"))
	require.Equal(t, "Sub-accounts", br.text("h1"))
	require.Equal(t, 2, br.count("[data-testid=sub-account]"))
	require.Equal(t, "R$ 7.00", br.text("[data-client-id='"+f.subA.ClientID+"'] [data-testid=available]"))
	require.Equal(t, f.accA, br.text("[data-client-id='"+f.subA.ClientID+"'] [data-testid=account-id]"))

	require.EqualValues(t, http.StatusOK, br.click("[data-client-id='"+f.subA.ClientID+"'] [data-testid=sub-link]"))
	require.Equal(t, "Vendedor Ana", br.text("[data-testid=client-name]"))
	require.Equal(t, "READ-ONLY", br.text("[data-testid=read-only]"), "a badge, in capitals")
	require.Equal(t, "Loja Exemplo", br.text("[data-testid=parent-link]"))
	require.Equal(t, "R$ 7.00", br.text("[data-testid=balance]"))
	require.Equal(t, 1, br.count("form[method=post]"), "only the logout")
	require.Zero(t, br.count("[data-testid=nav-settings]"))

	require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-transactions]"))
	require.Equal(t, 4, br.count("[data-testid=tx-link]"), "the two transfers, the paid charge and the open one")
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=tx-link]"))
	require.Equal(t, f.pendingA, br.text("[data-testid=tx-id]"), "the newest: the open charge, which the sandbox could pay")
	require.Zero(t, br.count("[data-testid=sandbox-pay]"), "no sandbox action on a sub-account's charge")
	require.Equal(t, 1, br.count("form[method=post]"))

	require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-accounts]"))
	require.Equal(t, "Sub-accounts", br.text("h1"))
	require.EqualValues(t, http.StatusNotFound, br.open("/admin/c/"+f.subC.ClientID+"/"), "another parent's sub-account")
}
