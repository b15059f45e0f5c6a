package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/ratelimit"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// setupPSP is setup for a production API on API Pix (the PSP simulator):
// its webhook is served by the same API and registered at the simulator,
// so a payment the simulator receives is reported at once. No background
// job runs.
func setupPSP(t *testing.T, open func(t *testing.T) *store.DB) (*bundle, *pspsim.Server) {
	t.Helper()
	ctx := context.Background()
	db := open(t)
	logs := &testkit.Buffer{}
	log := slog.New(httpapi.LogHandler(slog.NewJSONHandler(logs, nil)))
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*handler.Load()).ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	sim := pspsim.New(pspsim.Options{SettleDelay: -1, PixKey: "loja@example.com"})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	psp, err := apipix.New(apipix.Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		WebhookURL: srv.URL + "/psp/webhook/" + pspSecret, Log: log})
	require.NoError(t, err)
	gw, err := gateway.New(gateway.Config{DB: db, Env: gateway.EnvProduction, ChargeTTL: time.Hour, Log: log, Provider: psp})
	require.NoError(t, err)
	api, err := httpapi.New(httpapi.Options{Gateway: gw, Log: log, Ready: db.Ping, Limiter: ratelimit.NewMemory(100000),
		PSPWebhookSecret: pspSecret})
	require.NoError(t, err)
	h := api.Handler()
	handler.Store(&h)
	require.NoError(t, psp.Start(ctx), "registers the webhook")
	cred, err := backOffice(t, db, gw).CreateClient(ctx, backoffice.ClientParams{Name: "merchant"})
	require.NoError(t, err)
	doc := testkit.NewOpenAPI(t, httpapi.OpenAPIDocument())
	return &bundle{t: t, db: db, gw: gw, srv: srv, http: doc.Client(t, http.DefaultTransport), raw: &http.Client{},
		cred: cred, clock: &testkit.Clock{}, logs: logs}, sim
}
