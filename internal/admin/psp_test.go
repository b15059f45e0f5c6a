package admin_test

import (
	"context"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/ratelimit"
	"github.com/pixgate/pixgate/internal/testkit"
)

// pspField returns the text of the element with data-testid=id, or "" when
// the page has none.
func pspField(body, id string) string {
	m := regexp.MustCompile(`data-testid="` + id + `">([^<]*)<`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// TestOverviewShowsPSP: with a real PSP provider (an API Pix client on
// the PSP simulator), the operators' overview shows whether the PSP
// answers, the last successful call, the class of the last failure (never
// its text) and an alert when another deployment took the webhook over;
// merchant users see none of it, and neither does anyone with the
// simulated network.
func TestOverviewShowsPSP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sim := pspsim.New(pspsim.Options{SettleDelay: -1})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	client := func(hookURL string) *apipix.Client {
		c, err := apipix.New(apipix.Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
			CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
			WebhookURL: hookURL, Log: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		return c
	}
	psp := client("https://first.example/psp/webhook/first-deployment-secret-0123456789")

	db := openSQLite(t)
	log := slog.New(slog.DiscardHandler)
	clk := &testkit.Clock{}
	gw, err := gateway.New(gateway.Config{DB: db, Env: gateway.EnvSandbox, ChargeTTL: time.Hour, Log: log, Provider: psp, Now: clk.Now})
	require.NoError(t, err)
	panel, bo := newPanel(t, db, gw, psp, clk, log)
	api, err := httpapi.New(httpapi.Options{Gateway: gw, Now: clk.Now, Log: log, Ready: db.Ping, Limiter: ratelimit.NewMemory(100000), Admin: panel})
	require.NoError(t, err)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	cred, err := bo.CreateClient(ctx, backoffice.ClientParams{Name: "Loja"})
	require.NoError(t, err)
	b := &bundle{t: t, db: db, gw: gw, bo: bo, srv: srv, clock: clk, panel: panel, merchant: cred}

	ops := b.web()
	ops.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))
	home := func() string {
		t.Helper()
		p := ops.get("/admin/?lang=en")
		require.Equal(t, http.StatusOK, p.status)
		return p.body
	}

	// Nothing called yet.
	body := home()
	require.Contains(t, body, `data-testid="psp"`)
	require.Equal(t, "no answer to the last call", pspField(body, "psp-up"))
	require.Equal(t, "—", pspField(body, "psp-last-success"))
	require.Equal(t, "—", pspField(body, "psp-last-failure"))
	require.Equal(t, "not read yet", pspField(body, "psp-webhook"))
	require.NotContains(t, body, `data-testid="psp-alert"`)

	// Registered and read back: this deployment's.
	require.NoError(t, psp.Start(ctx))
	_, err = psp.CheckWebhook(ctx)
	require.NoError(t, err)
	body = home()
	require.Equal(t, "answering", pspField(body, "psp-up"))
	require.NotEqual(t, "—", pspField(body, "psp-last-success"))
	require.Regexp(t, `^this deployment's · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$`, pspField(body, "psp-webhook"))
	require.NotContains(t, body, `data-testid="psp-alert"`)

	// A failing call: its class, never its text or the PSP's address.
	sim.AddFault(pspsim.Fault{PathPrefix: "/v2/pix/", Kind: pspsim.FaultError, Times: 3})
	_, err = psp.ConfirmPayment(ctx, "E12345678202601011200abcdefghijk")
	require.Error(t, err)
	body = home()
	require.Equal(t, "no answer to the last call", pspField(body, "psp-up"))
	require.Regexp(t, `^HTTP 5xx · \d{4}-`, pspField(body, "psp-last-failure"))
	require.NotContains(t, body, sim.URL())
	require.NotContains(t, body, "500")

	// Another deployment on the same PSP account takes the webhook over.
	require.NoError(t, client("https://second.example/psp/webhook/second-deployment-secret-012345678").Start(ctx))
	_, err = psp.CheckWebhook(ctx)
	require.NoError(t, err)
	body = home()
	require.Contains(t, body, `data-testid="psp-alert"`)
	require.Contains(t, body, "The PSP sends its Pix notifications to another deployment")
	require.Regexp(t, `^another deployment's \(second\.example\) · `, pspField(body, "psp-webhook"))
	require.NotContains(t, body, "second-deployment-secret")
	require.Equal(t, "answering", pspField(body, "psp-up"))
	pt := ops.get("/admin/?lang=pt-BR")
	require.Contains(t, pt.body, "O PSP envia as notificações de Pix a outra instalação")
	// …on the client overview too, for operators.
	p := ops.get("/admin/c/" + cred.ClientID + "/?lang=en")
	require.Equal(t, http.StatusOK, p.status)
	require.Contains(t, p.body, `data-testid="psp-alert"`)

	// A merchant user sees nothing of the PSP.
	shop := b.web()
	shop.login("loja@example.com", b.user("loja@example.com", pix.RoleMerchant, cred.ClientID))
	p = shop.get("/admin/c/" + cred.ClientID + "/?lang=en")
	require.Equal(t, http.StatusOK, p.status)
	require.NotContains(t, p.body, `data-testid="psp`)

	// The simulated network has no PSP to show.
	sb := setup(t, openSQLite, "sandbox")
	c := sb.web()
	c.login("ops@example.com", sb.user("ops@example.com", pix.RoleOperator, ""))
	require.NotContains(t, c.get("/admin/").body, `data-testid="psp`)
}
