package metrics

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// scrape fetches m's exposition text through Handler.
func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// requireSeries asserts that the exposition holds the line "series value".
func requireSeries(t *testing.T, body, series, value string) {
	t.Helper()
	line := series + " " + value
	if !strings.Contains(body, "\n"+line+"\n") {
		var got []string
		name, _, _ := strings.Cut(series, "{")
		for l := range strings.Lines(body) {
			if strings.HasPrefix(l, name) {
				got = append(got, strings.TrimSpace(l))
			}
		}
		t.Fatalf("want %s; %s series:\n%s", line, name, strings.Join(got, "\n"))
	}
}

func TestCountersAndHistogram(t *testing.T) {
	t.Parallel()
	m := New()
	m.ObserveRequest("POST /api/v1/gateway/request-qrcode", 201, 3*time.Millisecond)
	m.ObserveRequest("POST /api/v1/gateway/request-qrcode", 201, 40*time.Millisecond)
	m.ObserveRequest("POST /api/v1/gateway/request-qrcode", 400, time.Millisecond)
	m.ObserveRequest("", 404, 500*time.Microsecond)
	m.ObserveRequest("GET /healthz", 0, time.Millisecond)
	m.RateLimited()
	m.RateLimited()
	m.RateLimiterError()
	m.Posting("cashin")
	m.Posting("cashin")
	m.Posting("payout_reserve")
	m.Delivery(DeliveryDelivered)
	m.Delivery(DeliveryRetry)
	m.Delivery(DeliveryRetry)

	body := scrape(t, m)
	requireSeries(t, body, `pixgate_http_requests_total{route="POST /api/v1/gateway/request-qrcode",status="201"}`, "2")
	requireSeries(t, body, `pixgate_http_requests_total{route="POST /api/v1/gateway/request-qrcode",status="400"}`, "1")
	requireSeries(t, body, `pixgate_http_requests_total{route="unmatched",status="404"}`, "1")
	requireSeries(t, body, `pixgate_http_requests_total{route="GET /healthz",status="200"}`, "1")
	requireSeries(t, body, `pixgate_http_request_duration_seconds_count{route="POST /api/v1/gateway/request-qrcode"}`, "3")
	requireSeries(t, body, `pixgate_http_request_duration_seconds_bucket{route="POST /api/v1/gateway/request-qrcode",le="0.001"}`, "1")
	requireSeries(t, body, `pixgate_http_request_duration_seconds_bucket{route="POST /api/v1/gateway/request-qrcode",le="0.005"}`, "2")
	requireSeries(t, body, `pixgate_http_request_duration_seconds_bucket{route="POST /api/v1/gateway/request-qrcode",le="0.05"}`, "3")
	requireSeries(t, body, `pixgate_http_request_duration_seconds_bucket{route="POST /api/v1/gateway/request-qrcode",le="2"}`, "3")
	require.Regexp(t, `\npixgate_http_request_duration_seconds_sum\{route="POST /api/v1/gateway/request-qrcode"\} 0\.0440*\d?\n`, body)
	requireSeries(t, body, `pixgate_rate_limit_rejections_total`, "2")
	requireSeries(t, body, `pixgate_rate_limiter_errors_total`, "1")
	requireSeries(t, body, `pixgate_ledger_postings_total{kind="cashin"}`, "2")
	requireSeries(t, body, `pixgate_ledger_postings_total{kind="payout_reserve"}`, "1")
	requireSeries(t, body, `pixgate_webhook_deliveries_total{outcome="delivered"}`, "1")
	requireSeries(t, body, `pixgate_webhook_deliveries_total{outcome="retry"}`, "2")
	// Known outcomes exist from the start, at zero.
	requireSeries(t, body, `pixgate_webhook_deliveries_total{outcome="failed"}`, "0")
	requireSeries(t, body, `pixgate_webhook_deliveries_total{outcome="refused"}`, "0")
	// Go and process collectors are on the registry.
	require.Contains(t, body, "\ngo_goroutines ")
	require.Contains(t, body, "\nprocess_start_time_seconds ")
}

func TestNotTheGlobalRegistry(t *testing.T) {
	t.Parallel()
	a, b := New(), New() // would panic with duplicate registrations on one registry
	a.RateLimited()
	requireSeries(t, scrape(t, a), "pixgate_rate_limit_rejections_total", "1")
	requireSeries(t, scrape(t, b), "pixgate_rate_limit_rejections_total", "0")
	mfs, err := prometheus.DefaultGatherer.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		require.False(t, strings.HasPrefix(mf.GetName(), "pixgate_"), mf.GetName())
	}
	require.NotSame(t, prometheus.DefaultRegisterer, a.Registry())
}

func TestGaugeCallbacks(t *testing.T) {
	t.Parallel()
	m := New()
	body := scrape(t, m)
	require.NotContains(t, body, "pixgate_transactions{", "no callback, no series")

	var sawDeadline bool
	m.SetStatusCounts(func(ctx context.Context) (map[string]map[string]int64, error) {
		dl, ok := ctx.Deadline()
		sawDeadline = ok && time.Until(dl) <= CallbackTimeout
		return map[string]map[string]int64{
			"cashin":  {"PENDING": 3, "PAID": 7},
			"cashout": {"COMPLETED": 2},
		}, nil
	})
	m.SetOutboxLag(func(context.Context) (int64, float64, error) { return 4, 12.5, nil })
	m.SetDisputesOpen(func(context.Context) (int64, error) { return 2, nil })
	body = scrape(t, m)
	requireSeries(t, body, `pixgate_disputes_open`, "2")
	require.True(t, sawDeadline, "callbacks get a context with the timeout")
	requireSeries(t, body, `pixgate_transactions{status="PENDING",type="cashin"}`, "3")
	requireSeries(t, body, `pixgate_transactions{status="PAID",type="cashin"}`, "7")
	requireSeries(t, body, `pixgate_transactions{status="COMPLETED",type="cashout"}`, "2")
	requireSeries(t, body, `pixgate_outbox_pending_events`, "4")
	requireSeries(t, body, `pixgate_outbox_oldest_pending_seconds`, "12.5")
	requireSeries(t, body, `pixgate_metrics_callback_errors_total{callback="status_counts"}`, "0")

	// A failing callback is skipped; the rest of the scrape is served.
	m.SetStatusCounts(func(context.Context) (map[string]map[string]int64, error) {
		return nil, errors.New("database is down")
	})
	body = scrape(t, m)
	require.NotContains(t, body, "pixgate_transactions{")
	requireSeries(t, body, `pixgate_outbox_pending_events`, "4")
	requireSeries(t, body, `pixgate_metrics_callback_errors_total{callback="status_counts"}`, "1")
	requireSeries(t, body, `pixgate_metrics_callback_errors_total{callback="outbox_lag"}`, "0")

	m.SetDisputesOpen(func(context.Context) (int64, error) { return 0, errors.New("database is down") })
	body = scrape(t, m)
	require.NotContains(t, body, "pixgate_disputes_open ")
	requireSeries(t, body, `pixgate_metrics_callback_errors_total{callback="disputes_open"}`, "1")

	// A panicking callback is skipped too.
	m.SetOutboxLag(func(context.Context) (int64, float64, error) { panic("boom") })
	body = scrape(t, m)
	require.NotContains(t, body, "pixgate_outbox_pending_events ")
	requireSeries(t, body, `pixgate_metrics_callback_errors_total{callback="outbox_lag"}`, "1")

	// Removing a callback removes its series.
	m.SetStatusCounts(nil)
	m.SetOutboxLag(nil)
	body = scrape(t, m)
	require.NotContains(t, body, "pixgate_outbox_pending_events ")
}

func TestSlowCallbackDoesNotStallScrape(t *testing.T) {
	t.Parallel()
	c := newCallbackCollector()
	c.timeout = 50 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	c.outboxLag = func(ctx context.Context) (int64, float64, error) {
		<-release // ignores ctx
		return 1, 1, nil
	}
	c.statusCounts = func(ctx context.Context) (map[string]map[string]int64, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	start := time.Now()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	require.Less(t, time.Since(start), time.Second)
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	require.Equal(t, map[string]bool{"pixgate_metrics_callback_errors_total": true}, names)
}

func TestRouteLabelNeverHoldsRawIDs(t *testing.T) {
	t.Parallel()
	m := New()
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }
	mux.HandleFunc("GET /pay/{payment_id}", ok)
	mux.HandleFunc("POST /api/v1/sandbox/charges/{payment_id}/pay", ok)
	mux.HandleFunc("POST /api/v1/webhooks/deliveries/{event_id}/retry", ok)
	// The middleware reads the pattern after the mux has set it on r.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		start := time.Now()
		mux.ServeHTTP(rec, r)
		m.ObserveRequest(r.Pattern, rec.Code, time.Since(start))
		require.Equal(t, routeLabel(r.Pattern), RouteLabel(r))
	})
	const id = "3f0c8c9e-9b1a-4c1e-8f7a-2d6b5e4a1c00"
	for _, req := range []*http.Request{
		httptest.NewRequest("GET", "/pay/"+id, nil),
		httptest.NewRequest("GET", "/pay/"+id+"?x="+id, nil),
		httptest.NewRequest("POST", "/api/v1/sandbox/charges/"+id+"/pay", nil),
		httptest.NewRequest("POST", "/api/v1/webhooks/deliveries/evt_"+id+"/retry", nil),
		httptest.NewRequest("GET", "/api/v1/nope/"+id, nil),                // 404
		httptest.NewRequest("DELETE", "/pay/"+id, nil),                     // 405
		httptest.NewRequest("GET", "/api/v1/wallet/transactions/"+id, nil), // 404
	} {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	body := scrape(t, m)
	requireSeries(t, body, `pixgate_http_requests_total{route="GET /pay/{payment_id}",status="200"}`, "2")
	requireSeries(t, body, `pixgate_http_requests_total{route="POST /api/v1/sandbox/charges/{payment_id}/pay",status="200"}`, "1")
	requireSeries(t, body, `pixgate_http_requests_total{route="POST /api/v1/webhooks/deliveries/{event_id}/retry",status="200"}`, "1")
	requireSeries(t, body, `pixgate_http_requests_total{route="unmatched",status="404"}`, "2")
	requireSeries(t, body, `pixgate_http_requests_total{route="unmatched",status="405"}`, "1")
	require.NotContains(t, body, id)
	require.False(t, regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}`).MatchString(body), "no UUID in any label")
}

func TestNilMetricsIsANoOp(t *testing.T) {
	t.Parallel()
	var m *Metrics
	m.ObserveRequest("x", 200, time.Second)
	m.RateLimited()
	m.RateLimiterError()
	m.Posting("cashin")
	m.Delivery(DeliveryFailed)
	m.SetStatusCounts(nil)
	m.SetOutboxLag(nil)
	require.Nil(t, m.Registry())
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	require.Equal(t, http.StatusNotFound, rec.Code)
}
