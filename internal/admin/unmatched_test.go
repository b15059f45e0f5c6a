package admin_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/cashin"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/ratelimit"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
)

// pspBundle is the panel of a production gateway whose provider is an API
// Pix client of the PSP simulator: payers pay at the simulator, and the
// gateway learns of each Pix when the test reports it (as the PSP's
// webhook would), reading it back from the PSP.
type pspBundle struct {
	*bundle
	sim *pspsim.Server
}

func setupPSP(t *testing.T, open opener, hold bool) *pspBundle {
	t.Helper()
	ctx := context.Background()
	sim := pspsim.New(pspsim.Options{SettleDelay: -1})
	require.NoError(t, sim.Start(ctx))
	t.Cleanup(sim.Close)
	o := sim.Options()
	log := slog.New(slog.DiscardHandler)
	psp, err := apipix.New(apipix.Config{APIURL: sim.URL(), ClientID: o.ClientID, ClientSecret: o.ClientSecret,
		CertPEM: o.PKI.ClientCertPEM, KeyPEM: o.PKI.ClientKeyPEM, CAPEM: o.PKI.CAPEM, PixKey: o.PixKey,
		WebhookURL: "https://pixgate.example/psp/webhook/unmatched-test-secret-0123456789", Log: log})
	require.NoError(t, err)
	db := open(t)
	clk := &testkit.Clock{}
	gw, err := gateway.New(gateway.Config{DB: db, Env: gateway.EnvProduction, ChargeTTL: time.Hour, Log: log, Provider: psp, Now: clk.Now, HoldUnmatched: hold})
	require.NoError(t, err)
	panel, bo := newPanel(t, db, gw, psp, clk, log)
	api, err := httpapi.New(httpapi.Options{Gateway: gw, Now: clk.Now, Log: log, Ready: db.Ping, Limiter: ratelimit.NewMemory(100000), Admin: panel})
	require.NoError(t, err)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	cred, err := bo.CreateClient(ctx, backoffice.ClientParams{Name: "Loja Exemplo"})
	require.NoError(t, err)
	return &pspBundle{bundle: &bundle{t: t, db: db, gw: gw, bo: bo, srv: srv, clock: clk, panel: panel, merchant: cred}, sim: sim}
}

// report has the gateway confirm the Pix e2e with the PSP, as a PSP
// webhook naming it does.
func (b *pspBundle) report(e2e string) {
	b.t.Helper()
	require.NoError(b.t, b.gw.Cashin().PSPReported(context.Background(), []cashin.ReportedPix{{EndToEndID: e2e}}))
}

// txid returns the txid (the cob at the PSP) of the merchant's charge id.
func (b *pspBundle) txid(id string) string {
	b.t.Helper()
	ctx := context.Background()
	c, err := b.gw.Authenticate(ctx, b.merchant.ClientID, b.merchant.ClientSecret)
	require.NoError(b.t, err)
	ch, err := b.gw.Charge(ctx, c, id)
	require.NoError(b.t, err)
	return ch.TxID
}

// pay has a payer pay the cob of charge id with valor centavos (0: the
// charge's amount); again pays a cob already paid.
func (b *pspBundle) pay(id string, valor int64, again bool) string {
	b.t.Helper()
	e2e, err := b.sim.PayWith(context.Background(), b.txid(id), pspsim.PayOptions{Valor: valor, Again: again})
	require.NoError(b.t, err)
	b.report(e2e)
	return e2e
}

// unmatchedRows returns the data-id of every row of the unmatched list, in order.
func unmatchedRows(body string) []string {
	var ids []string
	for _, m := range regexp.MustCompile(`data-testid="unmatched-row" data-id="([^"]+)"`).FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

// row returns the HTML of the unmatched list's row id.
func row(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `data-id="`+id+`"`)
	require.GreaterOrEqual(t, i, 0, "no row %s", id)
	end := strings.Index(body[i:], "</tr>")
	require.Positive(t, end)
	return body[i : i+end]
}

// TestUnmatchedReceiptsPage: money the PSP received that no open charge
// takes (a second Pix for a paid charge, a Pix for a txid no charge holds),
// kept by PIXGATE_PSP_UNMATCHED=hold, is listed for operators with what
// happened, its status and the suspense balance; an operator returns one
// to its payer with the form (CSRF required), which moves it to
// RETURNING; a failed return shows why and can be tried again. Merchant
// users see none of it.
func TestUnmatchedReceiptsPage(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setupPSP(t, open, true)
		ctx := context.Background()
		charge := b.charge(b.merchant, "pedido-1", "100.00")
		b.pay(charge, 0, false)
		second := b.pay(charge, 0, true)
		stray, err := b.sim.Receive(ctx, "nochargeholdsthistxid0000000000", 777)
		require.NoError(t, err)
		b.report(stray)
		list, err := b.bo.UnmatchedReceipts(ctx, "", 10)
		require.NoError(t, err)
		require.Len(t, list, 2)
		ids := map[string]pix.UnmatchedReceipt{}
		for _, u := range list {
			ids[u.PaymentEndToEndID] = u
			require.Equal(t, pix.UnmatchedHeld, u.Status)
		}
		dup, lost := ids[second], ids[stray]

		ops := b.web()
		tok := ops.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))
		p := ops.get("/admin/unmatched?lang=en")
		require.Equal(t, http.StatusOK, p.status)
		require.Contains(t, p.body, `data-testid="nav-unmatched"`)
		require.Equal(t, "R$ 107.77", field(t, p.body, "suspense-balance"))
		require.ElementsMatch(t, []string{dup.ID, lost.ID}, unmatchedRows(p.body))
		r := row(t, p.body, dup.ID)
		require.Contains(t, r, second)
		require.Contains(t, r, b.txid(charge))
		require.Equal(t, "R$ 100.00", field(t, r, "unmatched-amount"))
		require.Equal(t, "Second Pix for a paid charge", field(t, r, "unmatched-reason"))
		require.Equal(t, "/admin/c/"+b.merchant.ClientID+"/transactions/"+charge, attr(t, r, "unmatched-charge"))
		require.Equal(t, "Held", field(t, r, "unmatched-status"))
		require.Contains(t, r, `data-testid="unmatched-return"`)
		r = row(t, p.body, lost.ID)
		require.Contains(t, r, stray)
		require.Equal(t, "R$ 7.77", field(t, r, "unmatched-amount"))
		require.Equal(t, "Pix for no charge", field(t, r, "unmatched-reason"))
		require.NotContains(t, r, `data-testid="unmatched-charge"`)
		pt := ops.get("/admin/unmatched?lang=pt-BR")
		require.Contains(t, pt.body, "Segundo Pix de uma cobrança já paga")
		require.Contains(t, pt.body, "Pix sem cobrança")
		require.Equal(t, "R$ 107,77", field(t, pt.body, "suspense-balance"))

		// The operators' overview counts what waits in suspense.
		home := ops.get("/admin/?lang=en")
		require.Equal(t, http.StatusOK, home.status)
		require.Equal(t, "R$ 107.77", field(t, home.body, "suspense-balance"))
		require.Equal(t, "2 receipts · R$ 107.77", field(t, home.body, "suspense-held"))
		require.Equal(t, "/admin/unmatched?status=HELD", attr(t, home.body, "suspense-link"))

		// A merchant user sees none of it: not the page, not the overview's
		// count, and cannot return anything.
		shop := b.web()
		shopTok := shop.login("loja@example.com", b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID))
		require.Equal(t, http.StatusNotFound, shop.get("/admin/unmatched").status)
		mp := shop.get("/admin/c/" + b.merchant.ClientID + "/")
		require.Equal(t, http.StatusOK, mp.status)
		require.NotContains(t, mp.body, `data-testid="suspense`)
		require.NotContains(t, mp.body, `data-testid="nav-unmatched"`)
		require.Equal(t, http.StatusNotFound, shop.post("/admin/unmatched/"+dup.ID+"/return", url.Values{"csrf": {shopTok}}).status)

		// Without the form's token nothing happens.
		require.Equal(t, http.StatusForbidden, ops.post("/admin/unmatched/"+dup.ID+"/return", url.Values{}).status)
		require.Equal(t, http.StatusForbidden, ops.post("/admin/unmatched/"+dup.ID+"/return", url.Values{"csrf": {"wrong"}}).status)
		got, err := b.bo.UnmatchedReceipt(ctx, dup.ID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedHeld, got.Status, "refused forms change nothing")

		// Returned from the panel: RETURNING with a return id, back on the
		// list it was filtered on, saying so.
		p = ops.post("/admin/unmatched/"+dup.ID+"/return", url.Values{"csrf": {tok}, "status": {"HELD"}})
		require.Equal(t, http.StatusSeeOther, p.status, p.body)
		require.Equal(t, "/admin/unmatched?status=HELD&m=returning", p.header.Get("Location"))
		got, err = b.bo.UnmatchedReceipt(ctx, dup.ID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedReturning, got.Status)
		require.NotEmpty(t, got.ReturnID)
		p = ops.get("/admin/unmatched?status=HELD&m=returning&lang=en")
		require.Equal(t, "Return started: the money goes back to the payer once the PSP completes it.", field(t, p.body, "notice"))
		require.Equal(t, []string{lost.ID}, unmatchedRows(p.body), "the filter shows only held receipts")
		p = ops.get("/admin/unmatched?status=RETURNING&lang=en")
		require.Equal(t, []string{dup.ID}, unmatchedRows(p.body))
		require.Equal(t, "Returning", field(t, p.body, "unmatched-status"))
		require.NotContains(t, p.body, `data-testid="unmatched-return"`, "only a held receipt has the button")

		// Again: it is no longer held; an unknown receipt is 404.
		p = ops.post("/admin/unmatched/"+dup.ID+"/return", url.Values{"csrf": {tok}})
		require.Equal(t, http.StatusSeeOther, p.status)
		require.Equal(t, "/admin/unmatched?m=notheld", p.header.Get("Location"))
		p = ops.get("/admin/unmatched?m=notheld&lang=en")
		require.Equal(t, "This receipt is already being returned or was returned.", field(t, p.body, "alert"))
		require.Equal(t, http.StatusNotFound, ops.post("/admin/unmatched/8f7d3c1e-6a4b-4c2d-9e8f-7a6b5c4d3e2f/return", url.Values{"csrf": {tok}}).status)
		require.Equal(t, http.StatusNotFound, ops.post("/admin/unmatched/nope/return", url.Values{"csrf": {tok}}).status)

		// The PSP completes the return: RETURNED with its end-to-end id,
		// and the suspense balance drops by its amount.
		_, err = b.gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		b.sim.Settle(ctx)
		b.clock.Advance(time.Minute)
		_, err = b.gw.Transfers().StepDue(ctx, pix.TransferReturn, 10)
		require.NoError(t, err)
		got, err = b.bo.UnmatchedReceipt(ctx, dup.ID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedReturned, got.Status)
		p = ops.get("/admin/unmatched?status=RETURNED&lang=en")
		require.Equal(t, []string{dup.ID}, unmatchedRows(p.body))
		require.Equal(t, "Returned", field(t, p.body, "unmatched-status"))
		require.Equal(t, got.ReturnEndToEndID, field(t, p.body, "unmatched-return-e2e"))
		require.Equal(t, "R$ 7.77", field(t, p.body, "suspense-balance"))
		home = ops.get("/admin/?lang=en")
		require.Equal(t, "1 receipt · R$ 7.77", field(t, home.body, "suspense-held"))

		// A return the PSP did not complete is held again, with why, and
		// can be tried again.
		p = ops.post("/admin/unmatched/"+lost.ID+"/return", url.Values{"csrf": {tok}})
		require.Equal(t, http.StatusSeeOther, p.status)
		var failed bool
		require.NoError(t, b.db.Write(ctx, func(tx *store.Tx) error {
			var err error
			failed, err = tx.FinishUnmatchedReturn(ctx, lost.ID, b.clock.Now(), "", "the PSP did not complete the return")
			return err
		}))
		require.True(t, failed)
		p = ops.get("/admin/unmatched?lang=en")
		r = row(t, p.body, lost.ID)
		require.Equal(t, "Held", field(t, r, "unmatched-status"))
		require.Equal(t, "The last return failed: the PSP did not complete the return", field(t, r, "unmatched-error"))
		require.Contains(t, r, `data-testid="unmatched-return"`)
		p = ops.post("/admin/unmatched/"+lost.ID+"/return", url.Values{"csrf": {tok}})
		require.Equal(t, "/admin/unmatched?m=returning", p.header.Get("Location"))
		got, err = b.bo.UnmatchedReceipt(ctx, lost.ID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedReturning, got.Status)
		require.NoError(t, b.db.CheckLedger(ctx))
	})
}

// TestAmountMismatchMarked: a charge paid with another amount than it
// asked shows the paid amount and a mark on its detail page and in the
// transactions list, for operators and merchant users alike; a charge
// paid exactly shows its paid amount and no mark, an unpaid one neither.
func TestAmountMismatchMarked(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setupPSP(t, open, false)
		under := b.charge(b.merchant, "pedido-under", "100.00")
		b.pay(under, 1, false)
		exact := b.charge(b.merchant, "pedido-exact", "10.00")
		b.pay(exact, 0, false)
		unpaid := b.charge(b.merchant, "pedido-unpaid", "5.00")

		ops := b.web()
		ops.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))
		shop := b.web()
		shop.login("loja@example.com", b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID))
		base := "/admin/c/" + b.merchant.ClientID + "/transactions"
		for _, c := range []*webClient{ops, shop} {
			p := c.get(base + "/" + under + "?lang=en")
			require.Equal(t, http.StatusOK, p.status)
			require.Equal(t, "R$ 100.00", field(t, p.body, "tx-amount"))
			require.Equal(t, "R$ 0.01", field(t, p.body, "tx-paid-amount"))
			require.Equal(t, "amount differs", field(t, p.body, "amount-mismatch"))
			require.Contains(t, p.body, `data-testid="amount-mismatch-note"`)
			pt := c.get(base + "/" + under + "?lang=pt-BR")
			require.Equal(t, "valor divergente", field(t, pt.body, "amount-mismatch"))
			require.Equal(t, "R$ 0,01", field(t, pt.body, "tx-paid-amount"))

			p = c.get(base + "/" + exact + "?lang=en")
			require.Equal(t, "R$ 10.00", field(t, p.body, "tx-paid-amount"))
			require.NotContains(t, p.body, `data-testid="amount-mismatch`)
			p = c.get(base + "/" + unpaid + "?lang=en")
			require.NotContains(t, p.body, `data-testid="tx-paid-amount"`)
			require.NotContains(t, p.body, `data-testid="amount-mismatch`)

			// The list marks the mismatched row only.
			p = c.get(base + "?lang=en")
			require.Equal(t, 1, strings.Count(p.body, `data-testid="tx-mismatch"`))
			i := strings.Index(p.body, under)
			require.Positive(t, i)
			j := strings.Index(p.body[i:], "</tr>")
			require.Equal(t, "paid R$ 0.01", field(t, p.body[i:i+j], "tx-mismatch"))
		}
		ch, err := b.gw.Authenticate(context.Background(), b.merchant.ClientID, b.merchant.ClientSecret)
		require.NoError(t, err)
		bal, err := b.gw.Balance(context.Background(), ch)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(1001), bal.Available, "credited what was received")
	})
}
