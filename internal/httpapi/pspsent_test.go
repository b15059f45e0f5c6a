package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/provider/efi"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// efiSent is a production gateway on Efí (the PSP simulator, whose sends
// settle only on Settle) whose API serves the PSP's webhook over HTTP, and
// one client with funds. No sender runs: a payout is sent by one explicit
// SettleDue and is never polled afterwards.
type efiSent struct {
	gw  *gateway.Service
	sim *pspsim.Server
	api pspAPI
	c   pix.Client
}

func newEfiSent(t *testing.T, open testkit.Opener) *efiSent {
	t.Helper()
	ctx := context.Background()
	db := open(t)
	discard := slog.New(slog.NewJSONHandler(io.Discard, nil))
	var handler atomic.Pointer[http.Handler]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*handler.Load()).ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	f := &efiSent{sim: pspsim.New(pspsim.Options{SettleDelay: -1, PixKey: "loja@example.com"})}
	require.NoError(t, f.sim.Start(ctx))
	t.Cleanup(f.sim.Close)
	o := f.sim.Options()
	p, err := efi.New(apipix.Config{APIURL: f.sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		WebhookURL: srv.URL + "/psp/webhook/" + pspSecret, Log: discard})
	require.NoError(t, err)
	f.gw, err = gateway.New(gateway.Config{DB: db, Env: gateway.EnvProduction, ChargeTTL: time.Hour, Log: discard, Provider: p})
	require.NoError(t, err)
	logs := &testkit.Buffer{}
	api, err := httpapi.New(httpapi.Options{Gateway: f.gw, Log: slog.New(httpapi.LogHandler(slog.NewJSONHandler(logs, nil))),
		Ready: db.Ping, PSPWebhookSecret: pspSecret})
	require.NoError(t, err)
	h := api.Handler()
	handler.Store(&h)
	f.api = pspAPI{url: srv.URL, logs: logs}
	require.NoError(t, p.Start(ctx), "registers the webhook")

	cred, err := backOffice(t, db, f.gw).CreateClient(ctx, backoffice.ClientParams{Name: "m"})
	require.NoError(t, err)
	f.c, err = f.gw.Authenticate(ctx, cred.ClientID, cred.ClientSecret)
	require.NoError(t, err)
	// Funds: a charge paid, reported by the webhook and read back.
	resp, _, err := f.gw.CreateCharge(ctx, f.c, gateway.Keyed(&gateway.ChargeRequest{Amount: json.RawMessage("100.00"), ExternalID: "fund",
		PayerQuestion: "Pedido", PostbackURL: "https://merchant.example.com/h",
		Payer: &gateway.Payer{Name: "Maria", Document: "52998224725", PhoneNumber: "11987654321", Email: "m@example.com",
			Address: &gateway.Address{Street: "Rua A", Number: "1", Neighborhood: "Centro", City: "Recife", State: "PE", ZipCode: "50000000"}},
		Products: []gateway.Product{{Name: "X", Quantity: "1", Price: json.RawMessage("100.00")}}}, "",

		[]byte(`{"k":"fund"}`)))

	require.NoError(t, err)
	ch, err := f.gw.Charge(ctx, f.c, resp.PaymentID)
	require.NoError(t, err)
	_, err = f.sim.Pay(ctx, ch.TxID)
	require.NoError(t, err)
	require.Equal(t, pix.StatusPaid, f.status(t, resp.PaymentID))
	return f
}

func (f *efiSent) status(t *testing.T, id string) pix.TxStatus {
	t.Helper()
	tr, err := f.gw.Lookup(context.Background(), f.c, id, "")
	require.NoError(t, err)
	return tr.Status
}

func (f *efiSent) available(t *testing.T) pix.Amount {
	t.Helper()
	b, err := f.gw.Balance(context.Background(), f.c)
	require.NoError(t, err)
	return b.Available
}

// payout accepts a payout of amount to key and sends it (one step, the
// PSP answers EM_PROCESSAMENTO); it returns its id and idEnvio.
func (f *efiSent) payout(t *testing.T, key, amount, idem string) (string, string) {
	t.Helper()
	ctx := context.Background()
	resp, _, err := f.gw.CreatePayout(ctx, f.c, gateway.Keyed(&gateway.PayoutRequest{Amount: json.RawMessage(amount), Description: "x",
		CallbackURL: "https://merchant.example.com/p", CreditParty: &pix.CreditParty{Name: "F", KeyType: "EMAIL", Key: key}},
		idem, []byte(`{"k":"`+idem+`"}`)))

	require.NoError(t, err)
	_, err = f.gw.Transfers().StepDue(ctx, pix.TransferPayout, 10)
	require.NoError(t, err)
	idEnvio := strings.ReplaceAll(resp.TransactionID, "-", "")
	require.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, f.sim.SendCount(idEnvio))
	require.Equal(t, pix.StatusPending, f.status(t, resp.TransactionID))
	return resp.TransactionID, idEnvio
}

// reads is how many times the send idEnvio was read at the PSP.
func (f *efiSent) reads(idEnvio string) int {
	n := 0
	for _, r := range f.sim.Requests() {
		if r.Method == http.MethodGet && r.Path == "/v2/gn/pix/enviados/id-envio/"+idEnvio {
			n++
		}
	}
	return n
}

// TestPSPWebhookFinishesSentPayouts: Efí's webhook report of a Pix sent
// (tipo SOLICITACAO, named by gnExtras.idEnvio) makes pixgate read that
// payout back at once, so it finishes with no polling at all: PAID when
// the PSP settled it, CANCELLED with its funds back when the PSP failed
// it. The report's own status and amount are never taken: a forged one
// (REALIZADO for a send still processing, another amount, an idEnvio of
// no payout) costs a read and changes nothing.
func TestPSPWebhookFinishesSentPayouts(t *testing.T) {
	t.Parallel()
	testkit.Databases(t, func(t *testing.T, open testkit.Opener) {
		f := newEfiSent(t, open)
		ctx := context.Background()
		before := f.available(t)
		paid, paidEnvio := f.payout(t, "f@example.com", "10.00", "p1")
		failed, failedEnvio := f.payout(t, "g"+pspsim.FailKeySuffix, "20.00", "p2")
		require.Equal(t, before-3000, f.available(t))
		require.Zero(t, f.reads(paidEnvio)+f.reads(failedEnvio), "not read since sent")

		forged := func(idEnvio, status, valor string) {
			t.Helper()
			body := `{"pix":[{"endToEndId":"E12345678202603011200aBcDeFgHiJk","chave":"f@example.com","tipo":"SOLICITACAO",` +
				`"status":"` + status + `","valor":"` + valor + `","horario":"2026-03-01T12:00:00.000Z","gnExtras":{"idEnvio":"` + idEnvio + `"}}]}`
			code, _, raw := f.api.send(t, "POST", pixPath, strings.NewReader(body))
			require.Equal(t, http.StatusOK, code, string(raw))
		}
		forged(paidEnvio, "REALIZADO", "9999.99")
		forged(failedEnvio, "NAO_REALIZADO", "20.00")
		forged(strings.Repeat("ab", 16), "REALIZADO", "10.00") // no payout's
		forged("pixgateNoUUID", "REALIZADO", "10.00")          // no payout's
		require.Equal(t, 1, f.reads(paidEnvio), "read back")
		require.Equal(t, 1, f.reads(failedEnvio), "read back")
		require.Equal(t, pix.StatusPending, f.status(t, paid), "the PSP still processes it: the report moved nothing")
		require.Equal(t, pix.StatusPending, f.status(t, failed))
		require.Equal(t, before-3000, f.available(t))

		// The PSP settles both and reports them; Settle returns once the
		// webhook has been answered.
		f.sim.Settle(ctx)
		var reported bool
		for _, d := range f.sim.Deliveries() {
			if len(d.IDs) == 2 {
				require.ElementsMatch(t, []string{paidEnvio, failedEnvio}, d.IDs)
				require.Equal(t, http.StatusOK, d.Status, d.Err)
				reported = true
			}
		}
		require.True(t, reported, "the PSP reported the sends")
		require.Equal(t, pix.StatusPaid, f.status(t, paid))
		require.Equal(t, pix.StatusCancelled, f.status(t, failed))
		require.Equal(t, before-1000, f.available(t), "the failed payout's amount is back")
		require.Equal(t, 2, f.reads(paidEnvio))
		require.Equal(t, pspsim.Count{Puts: 1, Accepted: 1}, f.sim.SendCount(paidEnvio), "sent once")

		// A report again (the PSP retries) changes nothing more.
		forged(paidEnvio, "NAO_REALIZADO", "10.00")
		require.Equal(t, pix.StatusPaid, f.status(t, paid))
		require.Equal(t, 2, f.reads(paidEnvio), "a finished payout is not read again")
		require.Equal(t, before-1000, f.available(t))
	})
}

// TestPSPWebhookBadSendID: a sent Pix whose idEnvio is not letters and
// digits is refused like any malformed notification.
func TestPSPWebhookBadSendID(t *testing.T) {
	t.Parallel()
	api := newPSPAPI(t, pspSecret, fakePSP{})
	for _, id := range []string{`""`, `"a-b"`, `"` + strings.Repeat("a", 36) + `"`, `12`} {
		code, _, raw := api.send(t, "POST", pixPath, strings.NewReader(`{"pix":[{"tipo":"SOLICITACAO","gnExtras":{"idEnvio":`+id+`}}]}`))
		require.Equal(t, http.StatusBadRequest, code, "%s: %s", id, raw)
	}
}
