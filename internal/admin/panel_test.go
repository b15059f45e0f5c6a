package admin_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/admin"
	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

func TestLoginAndLogout(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	pw := b.user("Ops@Example.com", pix.RoleOperator, "")
	c := b.web()

	// Not logged in: pages send to the login form; /admin to /admin/.
	p := c.get("/admin/")
	require.Equal(t, http.StatusSeeOther, p.status)
	require.Equal(t, "/admin/login", p.header.Get("Location"))
	p = c.get("/admin")
	require.Equal(t, http.StatusMovedPermanently, p.status)
	require.Equal(t, "/admin/", p.header.Get("Location"))

	tok := c.login("ops@example.com", pw) // e-mail is case-insensitive
	p = c.get("/admin/")
	require.Equal(t, http.StatusOK, p.status)
	require.Contains(t, p.body, "ops@example.com")
	p = c.get("/admin/login")
	require.Equal(t, http.StatusSeeOther, p.status, "a logged-in user skips the login form")

	p = c.post("/admin/logout", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, p.status)
	require.Equal(t, "/admin/login?m=loggedout", p.header.Get("Location"))
	p = c.get("/admin/")
	require.Equal(t, http.StatusSeeOther, p.status, "the session is gone")
}

func TestWrongPassword(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	b.user("ops@example.com", pix.RoleOperator, "")
	for _, email := range []string{"ops@example.com", "nobody@example.com"} {
		c := b.web()
		lp := c.get("/admin/login")
		p := c.post("/admin/login", url.Values{"csrf": {csrf(t, lp)}, "email": {email}, "password": {"wrong-password"}})
		require.Equal(t, http.StatusUnauthorized, p.status)
		require.Contains(t, p.body, "E-mail ou senha incorretos.")
		require.NotContains(t, p.header.Get("Set-Cookie"), "pixgate_session=")
		require.Equal(t, http.StatusSeeOther, c.get("/admin/").status)
	}
}

func TestCSRF(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	pw := b.user("ops@example.com", pix.RoleOperator, "")
	c := b.web()
	tok := c.login("ops@example.com", pw)
	rotate := "/admin/c/" + b.merchant.ClientID + "/settings/secret"

	// Every POST of a session needs its token: missing or wrong → 403,
	// nothing changes.
	flipped := "x" + tok[1:]
	if tok[0] == 'x' {
		flipped = "y" + tok[1:]
	}
	for _, form := range []url.Values{{}, {"csrf": {""}}, {"csrf": {flipped}}, {"csrf": {tok + "x"}}} {
		p := c.post(rotate, form)
		require.Equal(t, http.StatusForbidden, p.status, "form %v", form)
		require.Contains(t, p.body, "Formulário expirado ou inválido")
	}
	status, _ := b.api(b.merchant, "GET", "/api/v1/wallet/balance", nil)
	require.Equal(t, http.StatusOK, status, "the secret was not rotated")
	p := c.post("/admin/logout", url.Values{})
	require.Equal(t, http.StatusForbidden, p.status, "logout needs the token too")

	// Another session's token does not work either.
	other := b.web()
	otherTok := other.login("ops@example.com", pw)
	require.NotEqual(t, tok, otherTok)
	require.Equal(t, http.StatusForbidden, c.post(rotate, url.Values{"csrf": {otherTok}}).status)

	// A request the browser marks cross-site is refused even with the token.
	c.header.Set("Sec-Fetch-Site", "cross-site")
	require.Equal(t, http.StatusForbidden, c.post(rotate, url.Values{"csrf": {tok}}).status)
	c.header.Del("Sec-Fetch-Site")

	p = c.post(rotate, url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusOK, p.status)
	require.Contains(t, p.body, `data-testid="new-secret"`)
	require.Equal(t, "/admin/c/"+b.merchant.ClientID+"/settings?lang=en", attr(t, p.body, "lang-en"), "the language switch leads to the GET page")

	// The login form has its own token, bound to a cookie.
	fresh := b.web()
	p = fresh.post("/admin/login", url.Values{"csrf": {"forged"}, "email": {"ops@example.com"}, "password": {pw}})
	require.Equal(t, http.StatusForbidden, p.status)
	lp := fresh.get("/admin/login")
	p = fresh.post("/admin/login", url.Values{"csrf": {csrf(t, lp) + "x"}, "email": {"ops@example.com"}, "password": {pw}})
	require.Equal(t, http.StatusForbidden, p.status)
}

func cookieNamed(t *testing.T, h http.Header, name string) *http.Cookie {
	t.Helper()
	for _, line := range h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(line)
		require.NoError(t, err)
		if c.Name == name {
			c.Raw = line
			return c
		}
	}
	t.Fatalf("no Set-Cookie %s in %v", name, h.Values("Set-Cookie"))
	return nil
}

func TestCookieFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env, session, login string
		secure              bool
	}{
		{"sandbox", "pixgate_session", "pixgate_login", false},
		{"production", "__Host-pixgate_session", "__Host-pixgate_login", true},
	} {
		t.Run(tc.env, func(t *testing.T) {
			t.Parallel()
			b := setup(t, openSQLite, tc.env)
			pw := b.user("ops@example.com", pix.RoleOperator, "")
			c := b.web()
			lp := c.get("/admin/login")
			lc := cookieNamed(t, lp.header, tc.login)
			require.True(t, lc.HttpOnly)
			require.Equal(t, http.SameSiteStrictMode, lc.SameSite)
			require.Equal(t, tc.secure, lc.Secure)
			require.Equal(t, "/", lc.Path)

			// A Secure cookie is not sent back over plain HTTP by a real
			// browser; send the login cookie by hand.
			req, err := http.NewRequest("POST", b.srv.URL+"/admin/login", strings.NewReader(url.Values{
				"csrf": {csrf(t, lp)}, "email": {"ops@example.com"}, "password": {pw}}.Encode()))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: tc.login, Value: lc.Value})
			resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusSeeOther, resp.StatusCode)
			sc := cookieNamed(t, resp.Header, tc.session)
			require.True(t, sc.HttpOnly, sc.Raw)
			require.Equal(t, http.SameSiteStrictMode, sc.SameSite, sc.Raw)
			require.Equal(t, tc.secure, sc.Secure, sc.Raw)
			require.Equal(t, "/", sc.Path)
			require.Equal(t, int(admin.SessionTTL/time.Second), sc.MaxAge)
			require.GreaterOrEqual(t, len(sc.Value), 40)

			// The database holds only the token's hash.
			users, err := b.db.Users(context.Background())
			require.NoError(t, err)
			require.Len(t, users, 1)
			require.NotContains(t, users[0].PasswordHash, pw)
			_, _, err = b.db.SessionUser(context.Background(), sc.Value, time.Now())
			require.ErrorIs(t, err, store.ErrNotFound, "the raw token is not a session id")
		})
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	c := b.web()
	for _, path := range []string{"/admin/login", "/admin/nope", "/admin/assets/admin.css", "/admin/c/x/"} {
		p := c.get(path)
		h := p.header
		require.Equal(t, admin.CSP, h.Get("Content-Security-Policy"), path)
		for _, d := range []string{"default-src 'none'", "style-src 'self'", "script-src 'self'", "img-src 'self' data:",
			"form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
			require.Contains(t, h.Get("Content-Security-Policy"), d)
		}
		require.Equal(t, "DENY", h.Get("X-Frame-Options"), path)
		require.Equal(t, "nosniff", h.Get("X-Content-Type-Options"), path)
		require.Equal(t, "no-store", h.Get("Cache-Control"), path)
	}
	p := c.get("/admin/nope")
	require.Equal(t, http.StatusNotFound, p.status)
	require.Contains(t, p.body, "Página não encontrada.")
	// No inline script or style anywhere: the CSP would block them.
	lp := c.get("/admin/login")
	require.NotContains(t, lp.body, "<script>")
	require.NotContains(t, lp.body, "style=")
	require.NotContains(t, lp.body, "<style")
	require.Equal(t, http.StatusOK, c.get("/admin/assets/admin.js").status)
	require.Equal(t, http.StatusNotFound, c.get("/admin/assets/").status, "no directory listing")
}

func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		pw := b.user("ops@example.com", pix.RoleOperator, "")
		attempt := func(email, password string) page {
			c := b.web()
			lp := c.get("/admin/login")
			return c.post("/admin/login", url.Values{"csrf": {csrf(t, lp)}, "email": {email}, "password": {password}})
		}
		for i := range admin.LoginMaxFailures {
			require.Equal(t, http.StatusUnauthorized, attempt("ops@example.com", "guess").status, "attempt %d", i+1)
		}
		// The sixth attempt is refused before the password is checked.
		p := attempt("ops@example.com", pw)
		require.Equal(t, http.StatusTooManyRequests, p.status)
		require.Equal(t, "900", p.header.Get("Retry-After"))
		require.Contains(t, p.body, "Muitas tentativas de login")
		require.Equal(t, http.StatusTooManyRequests, attempt("OPS@example.com", pw).status)

		// Another e-mail from the same address is counted apart.
		other := b.user("other@example.com", pix.RoleOperator, "")
		require.Equal(t, http.StatusSeeOther, attempt("other@example.com", other).status)

		// After the window, logging in works again and clears the count.
		b.clock.Advance(admin.LoginWindow + time.Second)
		require.Equal(t, http.StatusUnauthorized, attempt("ops@example.com", "guess").status)
		require.Equal(t, http.StatusSeeOther, attempt("ops@example.com", pw).status)
		pair, _, err := b.db.LoginAttempts(context.Background(), "ops@example.com", "127.0.0.1", time.Time{})
		require.NoError(t, err)
		require.Zero(t, pair)
	})
}

// TestLoginRateLimitIPv6Prefix: attempts from any address of one IPv6 /64
// count together (a subscriber holds the whole /64), another /64 is
// counted apart, and IPv4 stays per address.
func TestLoginRateLimitIPv6Prefix(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		pw := b.user("ops@example.com", pix.RoleOperator, "")
		// The panel over loopback, each request given the peer address
		// the test names, as a connection from it would have.
		const from = "X-Test-Remote-Addr"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a := r.Header.Get(from); a != "" {
				r.RemoteAddr = a
			}
			b.panel.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		via := *b
		via.srv = srv
		attempt := func(addr, password string) int {
			c := via.web()
			c.header.Set(from, addr)
			lp := c.get("/admin/login")
			return c.post("/admin/login", url.Values{"csrf": {csrf(t, lp)}, "email": {"ops@example.com"}, "password": {password}}).status
		}
		for i := range admin.LoginMaxFailures {
			addr := fmt.Sprintf("[2001:db8:1:2:%x::%x]:4%d000", i+1, i+7, i)
			require.Equal(t, http.StatusUnauthorized, attempt(addr, "guess"), "attempt %d", i+1)
		}
		require.Equal(t, http.StatusTooManyRequests, attempt("[2001:db8:1:2:ffff:ffff:ffff:fffe]:5000", pw),
			"a fresh address of the same /64 is refused")
		require.Equal(t, http.StatusSeeOther, attempt("[2001:db8:1:3::1]:5000", pw), "the next /64 is another subscriber")

		for i := range admin.LoginMaxFailures {
			require.Equal(t, http.StatusUnauthorized, attempt(fmt.Sprintf("198.51.100.%d:5000", i+1), "guess"), "IPv4 attempt %d", i+1)
		}
		require.Equal(t, http.StatusSeeOther, attempt("198.51.100.200:5000", pw), "IPv4 is counted per address")
	})
}

func TestSessionExpires(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	pw := b.user("ops@example.com", pix.RoleOperator, "")
	c := b.web()
	tok := c.login("ops@example.com", pw)
	b.clock.Advance(admin.SessionTTL - time.Minute)
	require.Equal(t, http.StatusOK, c.get("/admin/").status)
	b.clock.Advance(2 * time.Minute)
	p := c.get("/admin/")
	require.Equal(t, http.StatusSeeOther, p.status)
	require.Equal(t, "/admin/login", p.header.Get("Location"))
	p = c.post("/admin/c/"+b.merchant.ClientID+"/settings/secret", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusSeeOther, p.status)
	require.Equal(t, "/admin/login?m=expired", p.header.Get("Location"))
	require.Contains(t, c.get("/admin/login?m=expired").body, "Sua sessão terminou")
}

func TestMerchantSeesOnlyItsClient(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	other, err := b.bo.CreateClient(context.Background(), backoffice.ClientParams{Name: "Outra Loja"})
	require.NoError(t, err)
	otherTx := b.charge(other, "outra-1", "12.34")
	ownTx := b.charge(b.merchant, "minha-1", "10.00")
	pw := b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID)
	c := b.web()
	tok := c.login("loja@example.com", pw)

	p := c.get("/admin/")
	require.Equal(t, http.StatusSeeOther, p.status)
	own := "/admin/c/" + b.merchant.ClientID
	require.Equal(t, own+"/", p.header.Get("Location"))
	for _, path := range []string{own + "/", own + "/transactions", own + "/transactions/" + ownTx, own + "/settings"} {
		p := c.get(path)
		require.Equal(t, http.StatusOK, p.status, path)
		require.NotContains(t, p.body, other.ClientID, path)
		require.NotContains(t, p.body, "Outra Loja", path)
	}
	require.NotContains(t, c.get(own+"/settings").body, `data-testid="fees-form"`, "fees are read-only for merchants")

	theirs := "/admin/c/" + other.ClientID
	for _, path := range []string{theirs + "/", theirs + "/transactions", theirs + "/transactions/" + otherTx, theirs + "/settings",
		own + "/transactions/" + otherTx, "/admin/clients", "/admin/c/nope/"} {
		p := c.get(path)
		require.Equal(t, http.StatusNotFound, p.status, path)
		require.Contains(t, p.body, "Página não encontrada.")
		require.NotContains(t, p.body, "Outra Loja")
		require.NotContains(t, p.body, "12,34")
	}
	for _, path := range []string{theirs + "/settings/secret", theirs + "/settings/webhook-secret", theirs + "/transactions/" + otherTx + "/pay",
		own + "/transactions/" + otherTx + "/pay", own + "/settings/fees", own + "/settings/disable", "/admin/clients"} {
		p := c.post(path, url.Values{"csrf": {tok}, "name": {"x"}})
		require.Equal(t, http.StatusNotFound, p.status, path)
	}
	status, _ := b.api(other, "GET", "/api/v1/wallet/balance", nil)
	require.Equal(t, http.StatusOK, status, "the other client's secret is untouched")
	tx, err := b.db.Transaction(context.Background(), other.ClientID, otherTx)
	require.NoError(t, err)
	require.Equal(t, pix.StatusPending, tx.Status)
	cl, err := b.db.Client(context.Background(), b.merchant.ClientID)
	require.NoError(t, err)
	require.Equal(t, pix.ClientActive, cl.Status)
}

func TestLanguage(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	c := b.web()
	p := c.get("/admin/login")
	require.Contains(t, p.body, `<html lang="pt-BR">`)
	require.Contains(t, p.body, "Senha")
	p = c.get("/admin/login?lang=en")
	require.Contains(t, p.body, `<html lang="en">`)
	require.Contains(t, p.body, "Password")
	lc := cookieNamed(t, p.header, "pixgate_lang")
	require.True(t, lc.HttpOnly)
	p = c.get("/admin/login")
	require.Contains(t, p.body, "Password", "the choice is remembered")
	p = c.get("/admin/nope?lang=pt-BR")
	require.Contains(t, p.body, "Página não encontrada.")
	p = c.get("/admin/login?lang=xx")
	require.Contains(t, p.body, `<html lang="pt-BR">`)
}

func TestOperatorPages(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		pw := b.user("ops@example.com", pix.RoleOperator, "")
		c := b.web()
		tok := c.login("ops@example.com", pw)
		ctx := context.Background()

		// Create a client with fees; its credentials work once shown.
		p := c.post("/admin/clients", url.Values{"csrf": {tok}, "name": {"Loja Nova"}, "cashin_percent": {"1,5"},
			"cashin_fixed": {"0.10"}, "payout_percent": {"0"}, "payout_fixed": {"2"}})
		require.Equal(t, http.StatusOK, p.status, p.body)
		id := field(t, p.body, "client-id")
		secret := field(t, p.body, "client-secret")
		cred := backoffice.Credentials{ClientID: id, ClientSecret: secret}
		status, _ := b.api(cred, "GET", "/api/v1/wallet/balance", nil)
		require.Equal(t, http.StatusOK, status)
		cl, err := b.db.Client(ctx, id)
		require.NoError(t, err)
		require.EqualValues(t, 150, cl.CashinFee.PercentBP)
		require.EqualValues(t, 10, cl.CashinFee.Fixed)
		require.EqualValues(t, 200, cl.PayoutFee.Fixed)
		p = c.post("/admin/clients", url.Values{"csrf": {tok}, "name": {" "}})
		require.Equal(t, http.StatusBadRequest, p.status)
		p = c.post("/admin/clients", url.Values{"csrf": {tok}, "name": {"X"}, "cashin_percent": {"101"}})
		require.Equal(t, http.StatusBadRequest, p.status)
		require.Contains(t, c.get("/admin/clients").body, "Loja Nova")

		// Fees, webhook secret, disabling.
		base := "/admin/c/" + id
		p = c.post(base+"/settings/fees", url.Values{"csrf": {tok}, "cashin_percent": {"0.99"}, "cashin_fixed": {""}, "payout_percent": {"0"}, "payout_fixed": {"0,50"}})
		require.Equal(t, http.StatusSeeOther, p.status, p.body)
		require.Contains(t, c.get(p.header.Get("Location")).body, "Tarifas atualizadas.")
		cl, err = b.db.Client(ctx, id)
		require.NoError(t, err)
		require.EqualValues(t, 99, cl.CashinFee.PercentBP)
		require.EqualValues(t, 50, cl.PayoutFee.Fixed)
		require.Equal(t, http.StatusBadRequest, c.post(base+"/settings/fees", url.Values{"csrf": {tok}, "cashin_percent": {"abc"}}).status)
		p = c.post(base+"/settings/webhook-secret", url.Values{"csrf": {tok}})
		require.Equal(t, http.StatusOK, p.status)
		wh := field(t, p.body, "new-webhook-secret")
		require.True(t, strings.HasPrefix(wh, "whsec_"))
		cl, err = b.db.Client(ctx, id)
		require.NoError(t, err)
		require.Equal(t, wh, cl.WebhookSecret)
		p = c.post(base+"/settings/disable", url.Values{"csrf": {tok}})
		require.Equal(t, http.StatusSeeOther, p.status)
		require.Contains(t, c.get(p.header.Get("Location")).body, "Marque a confirmação")
		status, _ = b.api(cred, "GET", "/api/v1/wallet/balance", nil)
		require.Equal(t, http.StatusOK, status, "not disabled without the confirmation")
		p = c.post(base+"/settings/disable", url.Values{"csrf": {tok}, "confirm": {"yes"}})
		require.Equal(t, http.StatusSeeOther, p.status)
		require.Contains(t, c.get(p.header.Get("Location")).body, "Cliente desativado")
		status, _ = b.api(cred, "GET", "/api/v1/wallet/balance", nil)
		require.Equal(t, http.StatusUnauthorized, status)

		// Overview numbers: a paid charge of R$ 25,00 today.
		pid := b.charge(b.merchant, "ov-1", "25.00")
		b.charge(b.merchant, "ov-2", "5.00")
		status, body := b.api(b.merchant, "POST", "/api/v1/sandbox/charges/"+pid+"/pay", nil)
		require.Equal(t, http.StatusOK, status, "%v", body)
		b.failDelivery(pid, true)
		for _, path := range []string{"/admin/", "/admin/c/" + b.merchant.ClientID + "/"} {
			p := c.get(path)
			require.Equal(t, http.StatusOK, p.status)
			require.Equal(t, "R$ 25,00", field(t, p.body, "balance"), path)
			require.Equal(t, "R$ 25,00", field(t, p.body, "volume-in"), path)
			require.Contains(t, p.body, `data-testid="failing"`, path)
			require.Contains(t, p.body, "pix.cashin.paid", path)
		}
		p = c.get("/admin/c/" + b.merchant.ClientID + "/?lang=en")
		require.Equal(t, "R$ 25.00", field(t, p.body, "balance"))
	})
}

func TestTransactionsPaging(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		pw := b.user("ops@example.com", pix.RoleOperator, "")
		c := b.web()
		c.login("ops@example.com", pw)
		n := admin.PageSize + 5
		for i := range n {
			b.charge(b.merchant, "pg-"+string(rune('a'+i/26))+string(rune('a'+i%26)), "1.00")
		}
		base := "/admin/c/" + b.merchant.ClientID + "/transactions"
		p := c.get(base)
		require.Equal(t, http.StatusOK, p.status)
		first := strings.Count(p.body, `data-testid="tx-link"`)
		require.Equal(t, admin.PageSize, first)
		next := attr(t, p.body, "next-page")
		p = c.get(next)
		require.Equal(t, http.StatusOK, p.status)
		require.Equal(t, 5, strings.Count(p.body, `data-testid="tx-link"`))
		require.NotContains(t, p.body, `data-testid="next-page"`)
		require.Contains(t, p.body, `data-testid="first-page"`)

		p = c.get(base + "?status=PAID")
		require.Contains(t, p.body, `data-testid="no-transactions"`)
		p = c.get(base + "?type=cashin&status=PENDING")
		require.Equal(t, admin.PageSize, strings.Count(p.body, `data-testid="tx-link"`))
		require.Contains(t, attr(t, p.body, "next-page"), "status=PENDING")
		p = c.get(base + "?cursor=garbage")
		require.Equal(t, http.StatusOK, p.status)
		require.Contains(t, p.body, `data-testid="alert"`)
		p = c.get(base + "?q=pg-ab")
		require.Equal(t, 1, strings.Count(p.body, `data-testid="tx-link"`))
		p = c.get(base + "?q=nothing-here")
		require.Contains(t, p.body, `data-testid="no-transactions"`)
	})
}

func TestSandboxActionsOnlyInSandbox(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "production")
	pw := b.user("ops@example.com", pix.RoleOperator, "")
	c := b.web()
	tok := c.login("ops@example.com", pw)
	// A production client cannot create charges over plain HTTP webhooks,
	// so insert one directly.
	tx := pix.Transaction{ID: "8f7d3c1e-6a4b-4c2d-9e8f-7a6b5c4d3e2f", ClientID: b.merchant.ClientID, Type: pix.TypeCashin, RequestHash: "h",
		Status: "PENDING", Amount: 100, CreatedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour), TxID: "abc123"}
	require.NoError(t, b.db.Write(context.Background(), func(t2 *store.Tx) error { _, err := t2.InsertTransaction(context.Background(), tx); return err }))
	p := c.get("/admin/c/" + b.merchant.ClientID + "/transactions/" + tx.ID)
	require.Equal(t, http.StatusOK, p.status)
	require.NotContains(t, p.body, `data-testid="sandbox-pay"`)
	require.Contains(t, p.body, `data-testid="env">produção`)
	p = c.post("/admin/c/"+b.merchant.ClientID+"/transactions/"+tx.ID+"/pay", url.Values{"csrf": {tok}})
	require.Equal(t, http.StatusNotFound, p.status)
}

// field returns the text of the element with data-testid="id" (no nesting).
func field(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `data-testid="`+id+`"`)
	require.GreaterOrEqual(t, i, 0, "no %s in %s", id, body)
	rest := body[i:]
	start := strings.IndexByte(rest, '>') + 1
	end := strings.IndexByte(rest[start:], '<')
	return html.UnescapeString(strings.TrimSpace(rest[start : start+end]))
}

// attr returns the (unescaped) href of the element with data-testid="id".
func attr(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `data-testid="`+id+`"`)
	require.GreaterOrEqual(t, i, 0, "no %s", id)
	j := strings.LastIndex(body[:i], `href="`)
	require.GreaterOrEqual(t, j, 0)
	href := body[j+len(`href="`):]
	href = href[:strings.IndexByte(href, '"')]
	return html.UnescapeString(href)
}

// TestDisabledClientLocksOutMerchantUsers disables a client the way the CLI
// does (gateway.DisableClient): its merchant user's open session stops
// working at once, rotating the secret through it is refused, and logging
// in again is refused like a wrong password and still counted by the login
// rate limit. Operators are unaffected.
func TestDisabledClientLocksOutMerchantUsers(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		ctx := context.Background()
		mpw := b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID)
		opw := b.user("ops@example.com", pix.RoleOperator, "")
		own := "/admin/c/" + b.merchant.ClientID
		m := b.web()
		tok := m.login("loja@example.com", mpw)
		require.Equal(t, http.StatusOK, m.get(own+"/settings").status)
		op := b.web()
		opTok := op.login("ops@example.com", opw)
		before, err := b.db.Client(ctx, b.merchant.ClientID)
		require.NoError(t, err)

		require.NoError(t, b.bo.DisableClient(ctx, b.merchant.ClientID))

		// The open session is over on its very next request.
		for _, path := range []string{"/admin/", own + "/", own + "/settings", own + "/transactions"} {
			p := m.get(path)
			require.Equal(t, http.StatusSeeOther, p.status, path)
			require.Equal(t, "/admin/login", p.header.Get("Location"), path)
		}
		p := m.post(own+"/settings/secret", url.Values{"csrf": {tok}})
		require.Equal(t, http.StatusSeeOther, p.status)
		require.Equal(t, "/admin/login?m=expired", p.header.Get("Location"))
		after, err := b.db.Client(ctx, b.merchant.ClientID)
		require.NoError(t, err)
		require.Equal(t, before.SecretHash, after.SecretHash, "the secret was not rotated")

		// A new login with the right password is refused like a wrong one.
		attempt := func() page {
			c := b.web()
			lp := c.get("/admin/login")
			p := c.post("/admin/login", url.Values{"csrf": {csrf(t, lp)}, "email": {"loja@example.com"}, "password": {mpw}})
			if p.status == http.StatusUnauthorized {
				require.Contains(t, p.body, "E-mail ou senha incorretos.")
				require.Empty(t, p.header.Values("Set-Cookie"), "no session")
				require.Equal(t, http.StatusSeeOther, c.get("/admin/").status)
			}
			return p
		}
		for i := range admin.LoginMaxFailures {
			require.Equal(t, http.StatusUnauthorized, attempt().status, "attempt %d", i+1)
		}
		require.Equal(t, http.StatusTooManyRequests, attempt().status, "refused logins count toward the limit")

		// Operators keep their session and still manage the client.
		require.Equal(t, http.StatusOK, op.get(own+"/settings").status)
		p = op.post(own+"/settings/secret", url.Values{"csrf": {opTok}})
		require.Equal(t, http.StatusOK, p.status)
		require.Contains(t, p.body, `data-testid="new-secret"`)
		b.web().login("ops@example.com", opw) // and log in anew
	})
}

// TestBadTextIsRefused sends a NUL byte or invalid UTF-8 in every kind of
// text the panel reads (search, path ids, login and client forms): 400,
// never a 500, on both databases. Paths and queries are refused by the
// server's middleware before the panel; the panel refuses them itself too,
// with its own page, wherever it is mounted.
func TestBadTextIsRefused(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		pw := b.user("ops@example.com", pix.RoleOperator, "")
		c := b.web()
		tok := c.login("ops@example.com", pw)
		base := "/admin/c/" + b.merchant.ClientID
		for _, bad := range []string{"%00", "a%00b", "%FF", "pedido%C3"} {
			for _, path := range []string{base + "/transactions?q=" + bad, base + "/transactions?cursor=" + bad,
				"/admin/c/" + bad + "/", "/admin/c/" + bad + "/transactions", base + "/transactions/" + bad, "/admin/login?email=" + bad} {
				p := c.get(path)
				require.Equal(t, http.StatusBadRequest, p.status, path)

				// The panel alone, with the session's cookies.
				req := httptest.NewRequest("GET", path, nil)
				srvURL, err := url.Parse(b.srv.URL + "/admin/")
				require.NoError(t, err)
				for _, ck := range c.http.Jar.Cookies(srvURL) {
					req.AddCookie(ck)
				}
				rec := httptest.NewRecorder()
				b.panel.ServeHTTP(rec, req)
				require.Equal(t, http.StatusBadRequest, rec.Code, path)
				require.Contains(t, rec.Body.String(), "byte nulo ou UTF-8 inválido", path)
			}
			raw, err := url.QueryUnescape(bad)
			require.NoError(t, err)
			p := c.post("/admin/clients", url.Values{"csrf": {tok}, "name": {"Loja " + raw}})
			require.Equal(t, http.StatusBadRequest, p.status)
			require.Contains(t, p.body, "byte nulo ou UTF-8 inválido")

			fresh := b.web()
			lp := fresh.get("/admin/login")
			for _, form := range []url.Values{
				{"csrf": {csrf(t, lp)}, "email": {"ops" + raw + "@example.com"}, "password": {pw}},
				{"csrf": {csrf(t, lp)}, "email": {"ops@example.com"}, "password": {raw}},
			} {
				p = fresh.post("/admin/login", form)
				require.Equal(t, http.StatusBadRequest, p.status)
				require.Contains(t, p.body, "byte nulo ou UTF-8 inválido")
			}
		}
		cs, err := b.db.Clients(context.Background())
		require.NoError(t, err)
		require.Len(t, cs, 1, "no client was created")
		// A plain unknown text is simply not found.
		p := c.get(base + "/transactions?q=" + url.QueryEscape("não-existe"))
		require.Equal(t, http.StatusOK, p.status)
		require.Contains(t, p.body, `data-testid="no-transactions"`)
	})
}

// TestOverviewAddsUp runs a day through the API and checks the overview's
// cards: a charge paid with its fee, a payout paid, one failed, one paid
// and returned (not money out; its fee stays), a refund; and that the
// balance at the start of the day plus the cards is the balance now.
func TestOverviewAddsUp(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		ctx := context.Background()
		require.NoError(t, b.db.Write(ctx, func(tx *store.Tx) error {
			return tx.SetClientFees(ctx, b.merchant.ClientID, pix.FeeRule{PercentBP: 100}, pix.FeeRule{Fixed: 50})
		}))
		pid := b.charge(b.merchant, "dia-1", "100.00")
		status, body := b.api(b.merchant, "POST", "/api/v1/sandbox/charges/"+pid+"/pay", nil)
		require.Equal(t, http.StatusOK, status, "%v", body)
		for i, key := range []string{"fornecedor@example.com", "falha@fail.sandbox", "volta@reverse.sandbox"} {
			amount := []int{20, 5, 7}[i]
			status, body := b.api(b.merchant, "POST", "/api/v1/gateway/pix-payment", map[string]any{
				"amount": amount, "external_id": fmt.Sprint("saque-", i), "description": "Fornecedor",
				"creditParty": map[string]any{"name": "Fornecedor Ltda", "keyType": "EMAIL", "key": key},
				"callbackUrl": "https://merchant.example.com/webhooks/pix"})
			require.Equal(t, http.StatusOK, status, "%v", body)
		}
		status, body = b.api(b.merchant, "POST", "/api/v1/gateway/refund", map[string]any{"payment_id": pid, "amount": 10})
		require.Equal(t, http.StatusOK, status, "%v", body)
		// Settle everything: payouts complete or fail, the returned one
		// comes back, the refund leaves.
		for range 4 {
			b.clock.Advance(time.Second)
			_, err := b.gw.Transfers().StepDue(ctx, pix.TransferPayout, 100)
			require.NoError(t, err)
			_, err = b.gw.Transfers().StepDue(ctx, pix.TransferRefund, 100)
			require.NoError(t, err)
		}
		st, err := b.db.Balances(ctx, b.merchant.ClientID)
		require.NoError(t, err)
		require.EqualValues(t, 6800, st[ledger.Available], "100 − 1 fee − (20 + 0,50) − 0,50 kept of the returned payout − 10 refunded")
		require.Zero(t, st[ledger.Pending])

		pw := b.user("ops@example.com", pix.RoleOperator, "")
		c := b.web()
		c.login("ops@example.com", pw)
		for _, path := range []string{"/admin/", "/admin/c/" + b.merchant.ClientID + "/"} {
			p := c.get(path)
			require.Equal(t, http.StatusOK, p.status)
			require.Equal(t, "R$ 68,00", field(t, p.body, "balance"), path)
			require.Equal(t, "R$ 100,00", field(t, p.body, "volume-in"), path)
			require.Equal(t, "1 cobrança paga", field(t, p.body, "count-in"), path)
			require.Equal(t, "R$ 2,00", field(t, p.body, "flow-fees"), path)
			require.Equal(t, "R$ 20,00", field(t, p.body, "volume-out"), "%s: the failed and the returned payouts are not money out", path)
			require.Equal(t, "1 saque pago", field(t, p.body, "count-out"), path)
			require.Equal(t, "0 saques de dias anteriores devolvidos", field(t, p.body, "count-returns"), path)
			require.Equal(t, "R$ 0,00", field(t, p.body, "flow-returns"), path)
			require.Equal(t, "R$ 10,00", field(t, p.body, "flow-refunds"), path)
			require.Equal(t, "R$ 0,00", field(t, p.body, "opening"), path)
			require.Equal(t, "R$ 68,00", field(t, p.body, "closing"), "%s: 0 + 100 − 2 − 20 + 0 − 10", path)
		}
		p := c.get("/admin/c/" + b.merchant.ClientID + "/?lang=en")
		require.Equal(t, "R$ 2.00", field(t, p.body, "flow-fees"))
		require.Contains(t, p.body, "Money out")
		require.Contains(t, p.body, "Returned payouts")
		require.Equal(t, "1 charge paid", field(t, p.body, "count-in"))
	})
}
