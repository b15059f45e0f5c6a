package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/testkit"
	"github.com/pixgate/pixgate/internal/webhook"
)

// issueOf returns the issue err reports for field ("" when none).
func issueOf(t *testing.T, err error, field string) string {
	t.Helper()
	if err == nil {
		return ""
	}
	pe := pix.AsError(err)
	require.NotNil(t, pe, "%v", err)
	for _, d := range pe.Details {
		if d.Field == field {
			return d.Issue
		}
	}
	return ""
}

// TestWebhookURLIssues: the gateway, wired to the guard as serve wires it,
// answers a refused destination with "destination not allowed" and a URL
// that is not acceptable as written with "must be an absolute … URL", for
// postbackUrl and callbackUrl alike (docs/api.md, Input rules).
func TestWebhookURLIssues(t *testing.T) {
	t.Parallel()
	f := setup(t, testkit.OpenSQLite(t))
	ctx := context.Background()
	const (
		notAllowed = gateway.IssueWebhookDestination
		needHTTPS  = "must be an absolute https URL"
		needHTTP   = "must be an absolute http or https URL"
	)
	production := webhook.Guard{RequireHTTPS: true}
	internal := webhook.Guard{RequireHTTPS: true, AllowPrivate: true}
	sandbox := webhook.Guard{AllowPrivate: true}
	for i, tc := range []struct {
		env   string
		guard webhook.Guard
		url   string
		want  string
	}{
		{"production", production, "https://merchant.example.com/hook", ""},
		{"production", production, "http://merchant.example.com/hook", needHTTPS},
		{"production", production, "ftp://merchant.example.com/hook", needHTTPS},
		{"production", production, "/hook", needHTTPS},
		{"production", production, "https://user:pw@merchant.example.com/hook", needHTTPS},
		{"production", production, "https://127.0.0.1/hook", notAllowed},
		{"production", production, "https://127\u30020\u30020\u30021/hook", notAllowed},
		{"production", production, "https://localhost/hook", notAllowed},
		{"production", production, "https://169.254.169.254/latest/meta-data", notAllowed},
		{"production", production, "http://10.0.0.1/hook", notAllowed},
		{"production", internal, "http://127.0.0.1:9000/hook", ""},
		{"production", internal, "http://localhost:9000/hook", ""},
		{"production", internal, "http://127\u30020\u30020\u30021/hook", ""},
		{"production", internal, "https://10.0.0.1/hook", ""},
		{"production", internal, "http://8.8.8.8/hook", needHTTPS},
		{"production", internal, "http://nonexistent.invalid/hook", notAllowed},
		{"sandbox", sandbox, "http://127.0.0.1:9000/hook", ""},
		{"sandbox", sandbox, "ftp://merchant.example.com/hook", needHTTP},
		{"sandbox", webhook.Guard{}, "http://127.0.0.1:9000/hook", notAllowed},
	} {
		ext := fmt.Sprintf("x%d", i)
		gw := *f.gw
		gw.Env = tc.env
		gw.CheckWebhookURL = tc.guard.CheckURL
		_, _, err := gw.CreateCharge(ctx, f.c, gateway.Keyed(chargeReq(ext, tc.url), "", []byte(`{}`)))
		if tc.want == "" {
			require.NoError(t, err, tc.url)
			continue
		}
		require.Equal(t, tc.want, issueOf(t, err, "postbackUrl"), "%s %s", tc.env, tc.url)
		_, _, err = gw.CreatePayout(ctx, f.c, gateway.Keyed(&gateway.PayoutRequest{Amount: json.RawMessage("1"), Description: "d", CallbackURL: tc.url,
			ExternalID: &ext, CreditParty: &pix.CreditParty{Name: "n", KeyType: "EMAIL", Key: "a@example.com"}}, "", []byte(`{}`)))

		require.Equal(t, tc.want, issueOf(t, err, "callbackUrl"), "%s %s", tc.env, tc.url)
	}
}

// TestProductionDeliversToInternalReceiver: with PIXGATE_WEBHOOK_ALLOW_PRIVATE
// in production, a charge with an http postbackUrl on loopback is created and
// its webhook delivered, over the same guard serve uses; without it the
// dispatcher still refuses the private destination.
func TestProductionDeliversToInternalReceiver(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		f := setup(t, open(t))
		ctx := context.Background()
		guard := webhook.Guard{AllowPrivate: true, RequireHTTPS: true}
		f.gw.Env = "production"
		f.gw.CheckWebhookURL = guard.CheckURL
		f.disp.Client = guard.Client(webhook.DefaultTimeout)
		rec := newReceiver(t, nil, 0)
		id := f.paidCharge(t, "a", rec.srv.URL+"/hook")
		_, err := f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rec.count())
		d := f.deliveries(t, id)[0]
		require.Equal(t, "delivered", d.Status)
		require.Equal(t, http.StatusNoContent, *d.Attempts[0].StatusCode)

		// The same URL, dispatched by a production guard without private
		// destinations (the setting changed after creation): refused.
		id = f.paidCharge(t, "b", rec.srv.URL+"/hook")
		f.disp.Client = webhook.Guard{RequireHTTPS: true}.Client(webhook.DefaultTimeout)
		_, err = f.disp.DeliverDue(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, rec.count(), "never dialed")
		d = f.deliveries(t, id)[0]
		require.Equal(t, "failed", d.Status)
		require.Equal(t, webhook.ClassNotAllowed, *d.Attempts[0].Error)
	})
}
