package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/store"
)

// TestRecurrenceWebhooksFromThePSP: the PSP's notifications of a
// recurrence (POST …/rec) and of a cycle charge (POST …/cobr) reach the
// API, which reads each back from the PSP before anything moves: the
// payer's approval and a cycle's debit take effect with no polling at all.
// A notification that names nothing usable is refused and moves nothing.
func TestRecurrenceWebhooksFromThePSP(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		ctx := context.Background()
		db := open(t)
		log := slog.New(slog.NewJSONHandler(io.Discard, nil))
		var handler http.Handler
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
		t.Cleanup(srv.Close)
		sim := pspsim.New(pspsim.Options{SettleDelay: -1, PixKey: "loja@example.com"})
		require.NoError(t, sim.Start(ctx))
		t.Cleanup(sim.Close)
		o := sim.Options()
		psp, err := apipix.New(apipix.Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
			CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
			WebhookURL: srv.URL + "/psp/webhook/" + pspSecret, Account: apipix.Account{Number: "123456", Type: "CORRENTE"}, Log: log})
		require.NoError(t, err)
		gw, err := gateway.New(gateway.Config{DB: db, Env: gateway.EnvProduction, ChargeTTL: time.Hour, Log: log, Provider: psp})
		require.NoError(t, err)
		api, err := httpapi.New(httpapi.Options{Gateway: gw, Log: log, Ready: db.Ping, PSPWebhookSecret: pspSecret})
		require.NoError(t, err)
		handler = api.Handler()
		require.NoError(t, psp.Start(ctx))
		require.NoError(t, psp.StartRecurrences(ctx))
		cred, err := backOffice(t, db, gw).CreateClient(ctx, backoffice.ClientParams{Name: "m"})
		require.NoError(t, err)
		c, err := gw.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
		require.NoError(t, err)

		start := time.Now().In(saoPaulo).AddDate(0, 0, 4).Format(pix.DateLayout)
		req := &pix.RecurrenceRequest{ExternalID: "w1", Payer: &pix.RecurrencePayer{Name: "Maria Souza", Document: "52998224725"},
			Contract: "CTR-1", Description: "Plano", Frequency: "MONTHLY", StartDate: start, Amount: []byte("19.90"), Retry: "NONE",
			PostbackURL: "https://merchant.example.com/rec"}
		created, _, err := gw.Recurrences().Create(ctx, c, gateway.Keyed(req, "", []byte(`{"k":"w1"}`)))
		require.NoError(t, err)
		r, err := db.Recurrence(ctx, c.ID, created.RecurrenceID)
		require.NoError(t, err)

		// Forged notifications: refused, or read back and found to say nothing new.
		post := func(sub, body string) int {
			resp, err := http.Post(srv.URL+"/psp/webhook/"+pspSecret+"/"+sub, "application/json", strings.NewReader(body))
			require.NoError(t, err)
			resp.Body.Close()
			return resp.StatusCode
		}
		require.Equal(t, http.StatusBadRequest, post("rec", `{"recs":[{"idRec":"../x"}]}`))
		require.Equal(t, http.StatusBadRequest, post("rec", `{"cobsr":[]}`))
		require.Equal(t, http.StatusBadRequest, post("cobr", `{"cobsr":"x"}`))
		require.Equal(t, http.StatusOK, post("rec", `{"recs":[{"idRec":"`+r.PSPID+`","status":"APROVADA"}]}`))
		// Ids the PSP does not know are taken as /pix takes them (200), so
		// that the PSP stops resending them; nothing moves.
		require.Equal(t, http.StatusOK, post("rec", `{"recs":[{"idRec":"RN999999992026120100000000000"}]}`))
		require.Equal(t, http.StatusOK, post("cobr", `{"cobsr":[{"txid":"00000000000000000000000000000000"}]}`))
		v, err := gw.Recurrences().Get(ctx, c, created.RecurrenceID)
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceCreated, v.Status, "the PSP still says CRIADA: the body's status is not believed")

		// The payer approves: the PSP's own notification moves it.
		_, err = sim.ApproveRec(ctx, r.PSPID)
		require.NoError(t, err)
		v, err = gw.Recurrences().Get(ctx, c, created.RecurrenceID)
		require.NoError(t, err)
		require.Equal(t, pix.RecurrenceApproved, v.Status)

		// The job creates the cycle; its debit's notification credits it.
		_, err = gw.Recurrences().RunCycles(ctx, 10)
		require.NoError(t, err)
		v, err = gw.Recurrences().Get(ctx, c, created.RecurrenceID)
		require.NoError(t, err)
		require.Len(t, v.Charges, 1)
		ch, err := gw.Charge(ctx, c, v.Charges[0].PaymentID)
		require.NoError(t, err)
		_, err = sim.DebitCobR(ctx, ch.TxID)
		require.NoError(t, err)
		ch, err = gw.Charge(ctx, c, ch.ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, ch.Status)
		bal, err := gw.Balance(ctx, c)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(1990), bal.Available)
	})
}
