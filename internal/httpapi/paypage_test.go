package httpapi_test

import (
	"context"
	"encoding/json"
	stdhtml "html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
	"github.com/pixgate/pixgate/internal/testkit/chromium"
)

// TestPayStatus reads GET /pay/{payment_id}/status, which the payer's page
// polls: without credentials and without counting against any limit, it
// tells the status and nothing else; a payout's or an unknown id is 404 in
// the general error shape; an id that is not text is 400, never a 500.
func TestPayStatus(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{rateLimit: 3})
		id := b.createCharge("status-1", "10.00").json["payment_id"].(string)
		none := backoffice.Credentials{}
		for range 5 { // more than the client's limit: not counted
			r := b.send(b.raw, "GET", "/pay/"+id+"/status", nil, "", none)
			require.Equal(t, http.StatusOK, r.status, string(r.body))
			require.Equal(t, "application/json", r.header.Get("Content-Type"))
			require.Equal(t, "no-store", r.header.Get("Cache-Control"))
			require.Equal(t, map[string]any{"status": "PENDING"}, r.json, "the status alone")
		}
		r := b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		r = b.send(b.raw, "GET", "/pay/"+id+"/status", nil, "", none)
		require.Equal(t, http.StatusOK, r.status)
		require.Equal(t, map[string]any{"status": "PAID"}, r.json)

		// A payout is not a charge: its id is unknown here.
		r = b.do("POST", "/api/v1/gateway/pix-payment", payout("1", "CPF", "52998224725"))
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		for _, unknown := range []string{"0b7c3a52-2222-4222-8222-222222222222", r.json["transaction_id"].(string), "not-an-id"} {
			r := b.send(b.raw, "GET", "/pay/"+unknown+"/status", nil, "", none)
			require.Equal(t, http.StatusNotFound, r.status, unknown)
			require.Equal(t, map[string]any{"statusCode": json.Number("404"), "message": "Charge not found", "error": "Not Found"}, r.json, unknown)
			require.NotEmpty(t, r.header.Get("X-Request-Id"))
		}
		for _, bad := range []string{"%00", id + "%00", "%FF", "caf%C3"} {
			for _, path := range []string{"/pay/" + bad + "/status", "/pay/" + bad} {
				r := b.send(b.raw, "GET", path, nil, "", none)
				require.Equal(t, http.StatusBadRequest, r.status, path)
			}
		}
	})
}

// TestPayPageShowsSaoPauloTime checks the page's times are São Paulo's, its
// policy lets its script read the status, and a pending charge's page
// refreshes itself without JavaScript.
func TestPayPageShowsSaoPauloTime(t *testing.T) {
	t.Parallel()
	b := setup(t, testkit.OpenSQLite, options{})
	id := b.createCharge("time-1", "10.00").json["payment_id"].(string)
	tx, err := b.db.TransactionByID(context.Background(), id)
	require.NoError(t, err)
	sp, err := time.LoadLocation("America/Sao_Paulo")
	require.NoError(t, err)
	r := b.send(b.raw, "GET", "/pay/"+id, nil, "", backoffice.Credentials{})
	require.Equal(t, http.StatusOK, r.status)
	page := stdhtml.UnescapeString(string(r.body))
	require.Contains(t, page, `<span data-testid="expires-at">`+tx.ExpiresAt.In(sp).Format("02/01/2006 15:04")+`</span> (horário de Brasília)`)
	require.NotContains(t, page, "UTC")
	require.Contains(t, page, `<noscript><meta http-equiv="refresh" content="15"></noscript>`)
	csp := r.header.Get("Content-Security-Policy")
	require.Contains(t, csp, "connect-src 'self'")
	require.Contains(t, csp, "script-src 'self'")

	require.Equal(t, http.StatusOK, b.do("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil).status)
	tx, err = b.db.TransactionByID(context.Background(), id)
	require.NoError(t, err)
	r = b.send(b.raw, "GET", "/pay/"+id, nil, "", backoffice.Credentials{})
	page = stdhtml.UnescapeString(string(r.body))
	require.Contains(t, page, `<span data-testid="confirmed-at">`+tx.ConfirmedAt.In(sp).Format("02/01/2006 15:04")+`</span> (horário de Brasília)`)
	require.Len(t, tx.EndToEndID, 32)
	require.Contains(t, page, `<span data-testid="end-to-end-id">`+tx.EndToEndID+`</span>`, "the payment's end-to-end id")
	require.NotContains(t, page, `http-equiv="refresh"`, "a paid charge's page stays still")
}

// TestPayPageUpdatesItself opens the payer's page in Chromium, pays the
// charge through the sandbox API, and waits for the page, untouched by the
// test, to show it paid; then the same for a charge that expires.
func TestPayPageUpdatesItself(t *testing.T) {
	t.Parallel()
	b := setup(t, testkit.OpenSQLite, options{})
	paid := b.createCharge("live-1", "25.00").json["payment_id"].(string)
	expired := b.createCharge("live-2", "5.00").json["payment_id"].(string)
	root := chromium.Launch(t, 90*time.Second)
	other := chromium.Isolated(t, root)

	open := func(ctx context.Context, id string) {
		t.Helper()
		step, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		resp, err := chromedp.Run(step, chromedp.NavigateResponse(b.srv.URL+"/pay/"+id))
		require.NoError(t, err)
		require.EqualValues(t, http.StatusOK, resp.Status)
		s, err := chromedp.Run(step, chromedp.Text(chromedp.CSS("[data-testid=status]")))
		require.NoError(t, err)
		require.Contains(t, s, "PENDING")
	}
	waitFor := func(ctx context.Context, want string) {
		t.Helper()
		step, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		js := `document.querySelector('[data-testid=status]') && document.querySelector('[data-testid=status]').textContent.includes(` + "'" + want + "'" + `)`
		for {
			ok, err := chromedp.Run(step, chromedp.Evaluate[bool](js))
			if err == nil && ok {
				return
			}
			select {
			case <-step.Done():
				s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
				t.Fatalf("the page never showed %s; it shows: %s", want, s)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	open(root, paid)
	open(other, expired)

	r := b.do("POST", "/api/v1/sandbox/charges/"+paid+"/pay", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	r = b.do("POST", "/api/v1/sandbox/charges/"+expired+"/expire", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	waitFor(root, "PAID")
	waitFor(other, "CANCELLED")
	s, err := chromedp.Run(root, chromedp.Text(chromedp.CSS("main")))
	require.NoError(t, err)
	require.Contains(t, s, "Pagamento confirmado em")
	require.False(t, strings.Contains(s, "Copiar código"), "the QR code is gone")
}
