package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/webhook"
	"github.com/pixgate/pixgate/webhooksig"
)

// sendsWebhooks gives the bundle's gateway a webhook dispatcher to send
// test events with, guarded as serve guards it in the bundle's environment.
func (b *bundle) sendsWebhooks(production bool) {
	guard := webhook.Guard{AllowPrivate: !production, RequireHTTPS: production}
	d := &webhook.Dispatcher{DB: b.db, Client: guard.Client(webhook.DefaultTimeout), Log: slog.New(slog.DiscardHandler)}
	b.gw.SendWebhook = d.Send
}

// signedReceiver is a real receiver on loopback that checks each request's
// signature with the webhooksig package and answers status.
type signedReceiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	bodies   []map[string]any
	ids      []string
	verified []error
}

func newSignedReceiver(t *testing.T, secret string, status int) *signedReceiver {
	v, err := webhooksig.NewVerifier(secret)
	require.NoError(t, err)
	rec := &signedReceiver{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		rec.mu.Lock()
		rec.bodies = append(rec.bodies, body)
		rec.ids = append(rec.ids, r.Header.Get("webhook-id"))
		rec.verified = append(rec.verified, v.Verify(r.Header, raw))
		rec.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

// TestWebhookTestEndpoint: POST /api/v1/webhooks/test sends a signed
// webhook.test event to the URL given and answers with the attempt,
// whatever the receiver answered; the event is not stored. A bad URL is a
// 400 naming url, in production the SSRF guard refuses an internal
// destination, and each call counts against the rate limit.
func TestWebhookTestEndpoint(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.sendsWebhooks(false)
		const path = "/api/v1/webhooks/test"

		ok := newSignedReceiver(t, b.cred.WebhookSecret, http.StatusNoContent)
		r := b.do("POST", path, map[string]any{"url": ok.srv.URL + "/hook"})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, json.Number("200"), r.json["statusCode"])
		require.Equal(t, "Webhook test sent", r.json["message"])
		data := r.json["data"].(map[string]any)
		require.Equal(t, json.Number("204"), data["status_code"])
		require.Nil(t, data["error"])
		require.Contains(t, data, "latency_ms")
		ok.mu.Lock()
		require.Len(t, ok.bodies, 1)
		require.NoError(t, ok.verified[0], "signed with the client's webhook secret")
		body := ok.bodies[0]
		require.Equal(t, "webhook.test", body["event"])
		require.Equal(t, ok.ids[0], body["id"], "webhook-id is the body's id")
		require.Regexp(t, `^evt_`, body["id"])
		require.Contains(t, body, "occurred_at")
		ok.mu.Unlock()

		failing := newSignedReceiver(t, b.cred.WebhookSecret, http.StatusInternalServerError)
		r = b.do("POST", path, map[string]any{"url": failing.srv.URL})
		require.Equal(t, http.StatusOK, r.status, "the receiver's answer is reported, not retried: %s", r.body)
		data = r.json["data"].(map[string]any)
		require.Equal(t, json.Number("500"), data["status_code"])
		require.Equal(t, webhook.ClassHTTP5xx, data["error"])

		closed := httptest.NewServer(http.NotFoundHandler())
		closed.Close()
		r = b.do("POST", path, map[string]any{"url": closed.URL})
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		data = r.json["data"].(map[string]any)
		require.Nil(t, data["status_code"], "no answer came")
		require.Equal(t, webhook.ClassRefused, data["error"])

		for _, bad := range []any{map[string]any{}, map[string]any{"url": ""}, map[string]any{"url": "ftp://example.com/hook"},
			map[string]any{"url": "hook"}, map[string]any{"url": 42}} {
			r = b.do("POST", path, bad)
			require.Equal(t, http.StatusBadRequest, r.status, "%v: %s", bad, r.body)
			details := r.json["details"].([]any)
			require.Equal(t, "url", details[0].(map[string]any)["field"], string(r.body))
		}

		// Nothing of the test events is stored: no outbox row, no attempt.
		evs, err := b.db.Events(context.Background(), "")
		require.NoError(t, err)
		require.Empty(t, evs)
		pending, err := b.db.PendingEvents(context.Background(), []string{b.cred.ClientID})
		require.NoError(t, err)
		require.Zero(t, pending)
		ok.mu.Lock()
		require.Len(t, ok.bodies, 1, "a test event is never retried")
		ok.mu.Unlock()
	})
}

// TestWebhookTestEndpointGuardAndLimit: in production the destination
// guard refuses a loopback or private receiver with 400 before anything is
// sent; every call, refused ones included, counts as a request.
func TestWebhookTestEndpointGuardAndLimit(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{env: gateway.EnvProduction, rateLimit: 3})
		b.sendsWebhooks(true)
		rec := newSignedReceiver(t, b.cred.WebhookSecret, http.StatusNoContent)
		const path = "/api/v1/webhooks/test"
		// Both a receiver on loopback (over http) and an internal address
		// over https are refused.
		for _, u := range []string{rec.srv.URL, "https://127.0.0.1:1/hook"} {
			r := b.do("POST", path, map[string]any{"url": u})
			require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
			require.Equal(t, []any{map[string]any{"field": "url", "issue": gateway.IssueWebhookDestination}}, r.json["details"], u)
		}
		r := b.do("POST", path, map[string]any{"url": "https://10.0.0.1/hook"})
		require.Equal(t, http.StatusBadRequest, r.status, string(r.body))
		require.Equal(t, "0", r.header.Get("X-RateLimit-Remaining"))
		r = b.do("POST", path, map[string]any{"url": "https://10.0.0.1/hook"})
		require.Equal(t, http.StatusTooManyRequests, r.status, "each test counts as a request")
		rec.mu.Lock()
		require.Empty(t, rec.bodies)
		rec.mu.Unlock()
	})
}
