package admin_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/testkit/chromium"
)

// payoutItem is a payout body with its own external_id.
func payoutItem(ext, amount string) map[string]any {
	return map[string]any{"amount": json.Number(amount), "description": "Fornecedor",
		"creditParty": map[string]any{"keyType": "EMAIL", "key": "f@example.com"},
		"callbackUrl": "https://merchant.example.com/webhooks/pix", "external_id": ext}
}

// seedPayouts funds cred's client and creates, through the API, a batch of
// two payouts (one refused for want of balance) and a payout scheduled for
// tomorrow; it returns the batch id and the scheduled payout's id.
func (b *bundle) seedPayouts(cred backoffice.Credentials, prefix string) (string, string) {
	b.t.Helper()
	paid := b.charge(cred, prefix+"-fund", "10.00")
	status, body := b.api(cred, "POST", "/api/v1/sandbox/charges/"+paid+"/pay", nil)
	require.Equal(b.t, http.StatusOK, status, "%v", body)
	status, body = b.api(cred, "POST", "/api/v1/gateway/pix-payments/batch", map[string]any{
		"external_id": prefix + "-batch", "callbackUrl": "https://merchant.example.com/webhooks/pix",
		"items": []any{payoutItem(prefix+"-1", "4.00"), payoutItem(prefix+"-2", "99.00")}})
	require.Equal(b.t, http.StatusAccepted, status, "%v", body)
	batchID := body["data"].(map[string]any)["batch_id"].(string)
	p := payoutItem(prefix+"-later", "1.00")
	p["scheduled_date"] = b.clock.Now().In(saoPauloZone).AddDate(0, 0, 1).Format(pix.DateLayout)
	status, body = b.api(cred, "POST", "/api/v1/gateway/pix-payment", p)
	require.Equal(b.t, http.StatusOK, status, "%v", body)
	return batchID, body["transaction_id"].(string)
}

var saoPauloZone = time.FixedZone("BRT", -3*60*60)

// TestBatchPages: operators see every client's batches and scheduled
// payouts, merchant users only their own; a batch's page lists its items
// with their status and error; the scheduled list filters by state.
func TestBatchPages(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open opener) {
		b := setup(t, open, "sandbox")
		other, err := b.bo.CreateClient(t.Context(), backoffice.ClientParams{Name: "Outra Loja"})
		require.NoError(t, err)
		own, ownSched := b.seedPayouts(b.merchant, "own")
		theirs, _ := b.seedPayouts(other, "theirs")

		ops := b.web()
		ops.login("ops@example.com", b.user("ops@example.com", pix.RoleOperator, ""))
		p := ops.get("/admin/batches")
		require.Equal(t, http.StatusOK, p.status)
		require.ElementsMatch(t, []string{own, theirs}, attrs(p.body, "batch-row", "data-id"))
		p = ops.get("/admin/batches?client=" + url.QueryEscape(other.ClientID))
		require.Equal(t, []string{theirs}, attrs(p.body, "batch-row", "data-id"))
		p = ops.get("/admin/scheduled?state=scheduled")
		require.Equal(t, http.StatusOK, p.status)
		require.Len(t, attrs(p.body, "scheduled-row", "data-id"), 2)
		require.Empty(t, attrs(ops.get("/admin/scheduled?state=cancelled").body, "scheduled-row", "data-id"))

		m := b.web()
		m.login("loja@example.com", b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID))
		p = m.get("/admin/batches")
		require.Equal(t, []string{own}, attrs(p.body, "batch-row", "data-id"))
		require.NotContains(t, p.body, "Outra Loja")
		p = m.get("/admin/scheduled")
		require.Equal(t, []string{ownSched}, attrs(p.body, "scheduled-row", "data-id"))
		p = m.get("/admin/c/" + b.merchant.ClientID + "/batches/" + own)
		require.Equal(t, http.StatusOK, p.status)
		require.Len(t, fields(p.body, "item-row"), 2)
		require.Equal(t, []string{"Insufficient balance"}, nonEmpty(fields(p.body, "item-error")))
		require.Equal(t, http.StatusNotFound, m.get("/admin/c/"+b.merchant.ClientID+"/batches/"+theirs).status)
		require.Equal(t, http.StatusNotFound, m.get("/admin/batches?client="+url.QueryEscape(other.ClientID)).status)
		require.Equal(t, http.StatusNotFound, m.get("/admin/scheduled?client="+url.QueryEscape(other.ClientID)).status)
	})
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// TestBrowserBatch: a merchant user finds a batch, opens it, follows an
// item to its payout, and finds the scheduled payout, in Portuguese.
func TestBrowserBatch(t *testing.T) {
	t.Parallel()
	b := setup(t, openSQLite, "sandbox")
	pw := b.user("loja@example.com", pix.RoleMerchant, b.merchant.ClientID)
	_, sched := b.seedPayouts(b.merchant, "br")
	br := &browser{t: t, ctx: chromium.Launch(t, 90*time.Second), base: b.srv.URL}
	br.login("loja@example.com", pw)
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-transactions]"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-batches]"))
	require.Equal(t, 1, br.count("[data-testid=batch-row]"))
	require.Equal(t, "Em andamento", br.text("[data-testid=batch-state]"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=batch-link]"))
	require.Equal(t, 2, br.count("[data-testid=item-row]"))
	require.Equal(t, "Recusado", br.text("[data-testid=item-row]:nth-child(2) [data-testid=item-status]"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=item-link]"))
	require.Equal(t, "Pendente", br.text("[data-testid=tx-status]"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-transactions]"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=nav-scheduled]"))
	require.Equal(t, 1, br.count("[data-testid=scheduled-row]"))
	require.Equal(t, "Aguardando o dia", br.text("[data-testid=scheduled-state]"))
	require.EqualValues(t, http.StatusOK, br.click("[data-testid=scheduled-link]"))
	require.Equal(t, sched, br.text("[data-testid=tx-id]"))
	tomorrow := b.clock.Now().In(saoPauloZone).AddDate(0, 0, 1)
	require.Equal(t, tomorrow.Format("02/01/2006"), br.text("[data-testid=tx-scheduled-date]"))
	require.Equal(t, "Pendente", br.text("[data-testid=tx-status]"), "PENDING, as the lookup shows it, until its day")
}
