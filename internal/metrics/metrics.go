// Package metrics holds pixgate's Prometheus metrics on a registry of its
// own (never the global one), served by Handler at /metrics.
//
// Every method is safe for concurrent use, and safe on a nil *Metrics (it
// then records nothing), so components can take an optional *Metrics.
package metrics

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// UnmatchedRoute is the route label of requests that matched no pattern
// (404, 405), so raw paths never become label values.
const UnmatchedRoute = "unmatched"

// Delivery outcomes of webhook attempts.
const (
	DeliveryDelivered = "delivered"
	DeliveryRetry     = "retry"
	DeliveryFailed    = "failed"
	DeliveryRefused   = "refused"
)

// CallbackTimeout bounds each scrape-time callback; a callback that errs or
// takes longer is skipped for that scrape.
const CallbackTimeout = 2 * time.Second

// DurationBuckets are the request duration histogram buckets, in seconds:
// 1 ms to 2 s.
var DurationBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2}

// StatusCountsFunc returns transaction counts by type, then status
// (counts["cashin"]["PAID"]).
type StatusCountsFunc func(ctx context.Context) (map[string]map[string]int64, error)

// OutboxLagFunc returns the number of webhook events not yet delivered and
// the age in seconds of the oldest of them (0 when none).
type OutboxLagFunc func(ctx context.Context) (pendingEvents int64, oldestAgeSeconds float64, err error)

// Metrics is pixgate's set of metrics and the registry that exposes them.
type Metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	duration      *prometheus.HistogramVec
	rateLimited   prometheus.Counter
	limiterErrors prometheus.Counter
	postings      *prometheus.CounterVec
	deliveries    *prometheus.CounterVec
	callbacks     *callbackCollector
}

// New returns a Metrics on a fresh registry that also holds the Go runtime
// and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pixgate_http_requests_total",
			Help: "HTTP requests served, by route pattern and status code.",
		}, []string{"route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "pixgate_http_request_duration_seconds",
			Help:    "HTTP request duration in seconds, by route pattern.",
			Buckets: DurationBuckets,
		}, []string{"route"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pixgate_rate_limit_rejections_total",
			Help: "Requests refused with 429 by the rate limiter.",
		}),
		limiterErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "pixgate_rate_limiter_errors_total",
			Help: "Requests decided without the shared rate limiter (Redis unreachable, or no answer within 50 ms), under this node's own limit.",
		}),
		postings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pixgate_ledger_postings_total",
			Help: "Ledger postings committed, by kind.",
		}, []string{"kind"}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "pixgate_webhook_deliveries_total",
			Help: "Webhook delivery attempts, by outcome (delivered, retry, failed, refused).",
		}, []string{"outcome"}),
		callbacks: newCallbackCollector(),
	}
	for _, o := range []string{DeliveryDelivered, DeliveryRetry, DeliveryFailed, DeliveryRefused} {
		m.deliveries.WithLabelValues(o)
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration, m.rateLimited, m.limiterErrors, m.postings, m.deliveries,
		m.callbacks,
	)
	return m
}

// Registry returns the registry, for components that bring collectors of
// their own (e.g. database pool statistics).
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Handler serves the registry in the Prometheus exposition formats. A
// failing collector does not fail the scrape: the other metrics are served.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		Registry:      m.reg, // counts its own scrapes as promhttp_metric_handler_errors_total
	})
}

// RouteLabel returns the route label of r: its ServeMux pattern (r.Pattern,
// e.g. "GET /pay/{payment_id}"), or UnmatchedRoute when it has none. Read
// it after the mux has served r.
func RouteLabel(r *http.Request) string {
	return routeLabel(r.Pattern)
}

func routeLabel(pattern string) string {
	if pattern == "" {
		return UnmatchedRoute
	}
	return pattern
}

// ObserveRequest counts one served request and its duration. route must be
// the matched pattern (r.Pattern), never the raw path, so ids stay out of
// labels; "" becomes UnmatchedRoute. A status of 0 (nothing written) counts
// as 200, as net/http sends it.
func (m *Metrics) ObserveRequest(route string, status int, d time.Duration) {
	if m == nil {
		return
	}
	route = routeLabel(route)
	if status == 0 {
		status = http.StatusOK
	}
	m.requests.WithLabelValues(route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

// RateLimited counts one request refused with 429.
func (m *Metrics) RateLimited() {
	if m == nil {
		return
	}
	m.rateLimited.Inc()
}

// RateLimiterError counts one request decided without the shared rate
// limiter (it failed or was late), under this node's own limit.
func (m *Metrics) RateLimiterError() {
	if m == nil {
		return
	}
	m.limiterErrors.Inc()
}

// Posting counts one committed ledger posting of kind (e.g. "cashin",
// "payout_reserve"); kinds must come from a fixed set.
func (m *Metrics) Posting(kind string) {
	if m == nil {
		return
	}
	m.postings.WithLabelValues(kind).Inc()
}

// Delivery counts one webhook delivery attempt by outcome: DeliveryDelivered,
// DeliveryRetry, DeliveryFailed or DeliveryRefused.
func (m *Metrics) Delivery(outcome string) {
	if m == nil {
		return
	}
	m.deliveries.WithLabelValues(outcome).Inc()
}

// SetStatusCounts installs the callback behind pixgate_transactions{type,status},
// called at every scrape (nil removes it).
func (m *Metrics) SetStatusCounts(f StatusCountsFunc) {
	if m == nil {
		return
	}
	m.callbacks.mu.Lock()
	m.callbacks.statusCounts = f
	m.callbacks.mu.Unlock()
}

// SetOutboxLag installs the callback behind pixgate_outbox_pending_events
// and pixgate_outbox_oldest_pending_seconds, called at every scrape (nil
// removes it).
func (m *Metrics) SetOutboxLag(f OutboxLagFunc) {
	if m == nil {
		return
	}
	m.callbacks.mu.Lock()
	m.callbacks.outboxLag = f
	m.callbacks.mu.Unlock()
}

// DisputesOpenFunc counts the OPEN MED disputes, behind pixgate_disputes_open.
type DisputesOpenFunc func(ctx context.Context) (int64, error)

// SetDisputesOpen installs the callback behind pixgate_disputes_open,
// called at every scrape (nil removes it).
func (m *Metrics) SetDisputesOpen(f DisputesOpenFunc) {
	if m == nil {
		return
	}
	m.callbacks.mu.Lock()
	m.callbacks.disputesOpen = f
	m.callbacks.mu.Unlock()
}

// callbackCollector exports gauges whose values come from callbacks run at
// scrape time. A callback that fails or times out is skipped (its series
// are absent from that scrape) and counted in
// pixgate_metrics_callback_errors_total.
type callbackCollector struct {
	mu           sync.RWMutex
	statusCounts StatusCountsFunc
	outboxLag    OutboxLagFunc
	disputesOpen DisputesOpenFunc
	timeout      time.Duration

	statusErrors, outboxErrors, disputeErrors atomic.Uint64

	transactions, pending, oldest, disputes, errors *prometheus.Desc
}

func newCallbackCollector() *callbackCollector {
	return &callbackCollector{
		timeout: CallbackTimeout,
		transactions: prometheus.NewDesc("pixgate_transactions",
			"Transactions by type and status.", []string{"type", "status"}, nil),
		pending: prometheus.NewDesc("pixgate_outbox_pending_events",
			"Webhook events not yet delivered.", nil, nil),
		oldest: prometheus.NewDesc("pixgate_outbox_oldest_pending_seconds",
			"Age in seconds of the oldest webhook event not yet delivered (0 when none).", nil, nil),
		disputes: prometheus.NewDesc("pixgate_disputes_open",
			"MED disputes still OPEN, whose money is blocked until the PSP decides them.", nil, nil),
		errors: prometheus.NewDesc("pixgate_metrics_callback_errors_total",
			"Scrape-time metric callbacks that failed or timed out, by callback.", []string{"callback"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *callbackCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.transactions
	ch <- c.pending
	ch <- c.oldest
	ch <- c.disputes
	ch <- c.errors
}

// Collect implements prometheus.Collector.
func (c *callbackCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.RLock()
	statusCounts, outboxLag, disputesOpen := c.statusCounts, c.outboxLag, c.disputesOpen
	c.mu.RUnlock()

	if statusCounts != nil {
		type result struct {
			counts map[string]map[string]int64
			err    error
		}
		r, ok := call(c.timeout, func(ctx context.Context) result {
			counts, err := statusCounts(ctx)
			return result{counts, err}
		})
		if ok && r.err == nil {
			for typ, byStatus := range r.counts {
				for status, n := range byStatus {
					// NewConstMetric only fails on label values that are not
					// valid UTF-8; such a series is skipped.
					if m, err := prometheus.NewConstMetric(c.transactions, prometheus.GaugeValue, float64(n), typ, status); err == nil {
						ch <- m
					}
				}
			}
		} else {
			c.statusErrors.Add(1)
		}
	}
	if outboxLag != nil {
		type result struct {
			pending int64
			oldest  float64
			err     error
		}
		r, ok := call(c.timeout, func(ctx context.Context) result {
			p, o, err := outboxLag(ctx)
			return result{p, o, err}
		})
		if ok && r.err == nil {
			ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(r.pending))
			ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, r.oldest)
		} else {
			c.outboxErrors.Add(1)
		}
	}
	if disputesOpen != nil {
		type result struct {
			n   int64
			err error
		}
		r, ok := call(c.timeout, func(ctx context.Context) result {
			n, err := disputesOpen(ctx)
			return result{n, err}
		})
		if ok && r.err == nil {
			ch <- prometheus.MustNewConstMetric(c.disputes, prometheus.GaugeValue, float64(r.n))
		} else {
			c.disputeErrors.Add(1)
		}
	}
	ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(c.disputeErrors.Load()), "disputes_open")
	ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(c.statusErrors.Load()), "status_counts")
	ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(c.outboxErrors.Load()), "outbox_lag")
}

// call runs f with a context that expires after timeout and waits for it at
// most that long: a callback that ignores its context cannot stall the
// scrape (it finishes in the background). ok is false on timeout or panic.
func call[T any](timeout time.Duration, f func(context.Context) T) (res T, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	done := make(chan T, 1)
	go func() {
		defer func() {
			if recover() != nil {
				close(done)
			}
		}()
		done <- f(ctx)
	}()
	select {
	case res, ok = <-done:
		return res, ok
	case <-ctx.Done():
		var zero T
		return zero, false
	}
}
