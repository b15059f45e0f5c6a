// Package httpapi is pixgate's HTTP API: the one route table, authentication,
// request decoding, and the mapping of domain errors to the error bodies of docs/api.md.
// Handlers return errors; writing and logging them happens in one place.
package httpapi

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/pixgate/pixgate/internal/ratelimit"
	"github.com/pixgate/pixgate/internal/recurrence"
)

// Server serves the API.
type Server struct {
	gw      Gateway
	now     func() time.Time
	log     *slog.Logger
	sandbox bool
	loc     *time.Location
	// Ready reports whether dependencies answer (for /readyz).
	ready func(ctx context.Context) error
	// metrics, when set, observes each finished request.
	metrics func(r *http.Request, status int, d time.Duration)
	limiter ratelimit.Limiter
	// limited and limiterFailed, when set, count refusals and limiter outages.
	limited, limiterFailed func()
	rateLimit              int
	metricsHandler         http.Handler
	admin                  http.Handler
	// pspEnabled is whether the PSP's webhook is served; pspSecret is the
	// SHA-256 of the secret in its path (pspwebhook.go).
	pspEnabled bool
	pspSecret  [32]byte
	// outage and readyLog keep the lines of a database outage to one a
	// minute (unavailable.go).
	outage, readyLog outageLog
}

// Options configure a Server.
type Options struct {
	Gateway Gateway
	Log     *slog.Logger
	// Now returns the current time (rate-limit windows, the balance's
	// timestamp); nil means time.Now. Tests pass the gateway's clock.
	Now func() time.Time
	// Ready reports whether dependencies answer; nil means always ready.
	Ready func(ctx context.Context) error
	// Observe, when set, is called once per finished request.
	Observe func(r *http.Request, status int, d time.Duration)
	// Limiter limits /api/v1/ requests; nil means no limit.
	Limiter ratelimit.Limiter
	// Limited and LimiterFailed, when set, count 429s and limiter outages.
	Limited, LimiterFailed func()
	// RateLimit is the configured limit, shown when the limiter is down.
	RateLimit int
	// LimiterBudget is how long a request waits for a shared limiter;
	// zero means ratelimit.DefaultBudget (50 ms).
	LimiterBudget time.Duration
	// Metrics, when set, is served at /metrics.
	Metrics http.Handler
	// Admin, when set, is the administration panel, served at /admin/.
	Admin http.Handler
	// PSPWebhookSecret, when set, is the <secret> of the PSP's webhook
	// URL: POST /psp/webhook/<secret>/pix is served (docs/psp.md). Unset,
	// everything under /psp/webhook/ is 404.
	PSPWebhookSecret string
}

// New returns the API server for the gateway's environment.
func New(o Options) (*Server, error) {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		return nil, err
	}
	ready := o.Ready
	if ready == nil {
		ready = func(context.Context) error { return nil }
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	limiter, limiterFailed := o.Limiter, o.LimiterFailed
	if _, local := limiter.(*ratelimit.Memory); limiter != nil && !local && o.RateLimit > 0 {
		// A shared limiter gets 50 ms per request; while it fails, this
		// node limits on its own (ratelimit.FailOpen counts and logs it).
		limiter = &ratelimit.FailOpen{Shared: limiter, Local: ratelimit.NewMemory(o.RateLimit), Budget: o.LimiterBudget,
			Failed: limiterFailed, Log: o.Log}
		limiterFailed = nil
	}
	return &Server{gw: o.Gateway, now: now, log: o.Log, sandbox: o.Gateway.Sandbox() != nil, loc: loc, ready: ready, metrics: o.Observe,
		limiter: limiter, limited: o.Limited, limiterFailed: limiterFailed, rateLimit: o.RateLimit, metricsHandler: o.Metrics, admin: o.Admin,
		pspEnabled: o.PSPWebhookSecret != "", pspSecret: pspWebhookSecretSum(o.PSPWebhookSecret)}, nil
}

type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handler that returns an error.
func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// Handler returns the whole HTTP handler: every route of pixgate is here.
func (s *Server) Handler() http.Handler {
	api := http.NewServeMux()
	api.Handle("POST /api/v1/gateway/request-qrcode", s.handle(s.createCharge))
	api.Handle("POST /api/v1/gateway/pix-payment", s.handle(s.createPayout))
	api.Handle("POST /api/v1/gateway/pix-payment/{transaction_id}/cancel", s.handle(s.cancelPayout))
	api.Handle("POST /api/v1/gateway/pix-payments/batch", s.handle(s.createBatch))
	api.Handle("GET /api/v1/gateway/pix-payments/batch/{batch_id}", s.handle(s.getBatch))
	api.Handle("POST /api/v1/gateway/refund", s.handle(s.createRefund))
	api.Handle("GET /api/v1/gateway/refunds/{refund_id}", s.handle(s.getRefund))
	api.Handle("GET /api/v1/gateway/refunds", s.handle(s.listRefunds))
	api.Handle("POST /api/v1/gateway/charges/{payment_id}/cancel", s.handle(s.cancelCharge))
	api.Handle("POST /api/v1/gateway/recurrences", s.handle(s.createRecurrence))
	api.Handle("GET /api/v1/gateway/recurrences", s.handle(s.listRecurrences))
	api.Handle("GET /api/v1/gateway/recurrences/{recurrence_id}", s.handle(s.getRecurrence))
	api.Handle("POST /api/v1/gateway/recurrences/{recurrence_id}/cancel", s.handle(s.cancelRecurrence))
	api.Handle("GET /api/v1/gateway/disputes", s.handle(s.listDisputes))
	api.Handle("GET /api/v1/gateway/disputes/{dispute_id}", s.handle(s.getDispute))
	api.Handle("POST /api/v1/gateway/disputes/{dispute_id}/defense", s.handle(s.defendDispute))
	api.Handle("GET /api/v1/wallet/balance", s.handle(s.balance))
	api.Handle("POST /api/v1/wallet/transaction", s.handle(s.lookup))
	api.Handle("GET /api/v1/wallet/transactions", s.handle(s.history))
	api.Handle("GET /api/v1/wallet/statement", s.handle(s.statement))
	api.Handle("POST /api/v1/wallet/transfers", s.handle(s.createTransfer))
	api.Handle("GET /api/v1/accounts/me", s.handle(s.accountMe))
	api.Handle("POST /api/v1/accounts", s.handle(s.createAccount))
	api.Handle("GET /api/v1/accounts", s.handle(s.listAccounts))
	api.Handle("GET /api/v1/accounts/{account_id}", s.handle(s.getAccount))
	api.Handle("POST /api/v1/accounts/{account_id}/rotate-secret", s.handle(s.rotateAccountSecret))
	api.Handle("GET /api/v1/webhooks/deliveries", s.handle(s.deliveries))
	api.Handle("POST /api/v1/webhooks/deliveries/{event_id}/retry", s.handle(s.retryDelivery))
	api.Handle("POST /api/v1/webhooks/test", s.handle(s.testWebhook))
	if s.sandbox {
		api.Handle("POST /api/v1/sandbox/charges/{payment_id}/pay", s.handle(s.sandboxPay))
		api.Handle("POST /api/v1/sandbox/charges/{payment_id}/expire", s.handle(s.sandboxExpire))
		api.Handle("POST /api/v1/sandbox/charges/{payment_id}/fail", s.handle(s.sandboxFail))
		api.Handle("POST /api/v1/sandbox/charges/{payment_id}/dispute", s.handle(s.sandboxDispute))
		api.Handle("POST /api/v1/sandbox/charges/{payment_id}/med-return", s.handle(s.sandboxMedReturn))
		api.Handle("POST /api/v1/sandbox/disputes/{dispute_id}/resolve", s.handle(s.sandboxResolveDispute))
		for _, action := range []string{recurrence.SandboxApprove, recurrence.SandboxReject, recurrence.SandboxCancelByPayer} {
			api.Handle("POST /api/v1/sandbox/recurrences/{recurrence_id}/"+action, s.handle(s.sandboxRecurrence(action)))
		}
		api.Handle("POST /api/v1/sandbox/recurrences/{recurrence_id}/next-cycle", s.handle(s.sandboxNextCycle))
		api.Handle("POST /api/v1/sandbox/payouts/{transaction_id}/run-schedule", s.handle(s.sandboxRunSchedule))
		api.Handle("GET /api/v1/sandbox/clock", s.handle(s.sandboxClock))
		api.Handle("POST /api/v1/sandbox/clock", s.handle(s.sandboxAdvanceClock))
	}

	root := http.NewServeMux()
	root.Handle("GET /healthz", s.handle(s.healthz))
	root.Handle("GET /readyz", s.handle(s.readyz))
	root.Handle("GET /openapi.yaml", s.handle(s.openapi))
	if s.metricsHandler != nil {
		root.Handle("GET /metrics", s.metricsHandler)
	}
	root.Handle("GET /pay/{payment_id}", s.handle(s.payPage))
	root.Handle("GET /pay/{payment_id}/status", s.handle(s.payStatus))
	root.Handle("GET /assets/", s.assets())
	if s.sandbox {
		root.Handle("POST /pay/{payment_id}/sandbox-pay", s.handle(s.payPageSandboxPay))
	}
	if s.admin != nil {
		root.Handle("/admin/", s.admin)
		root.Handle("GET /admin", http.RedirectHandler("/admin/", http.StatusMovedPermanently))
	}
	if s.pspEnabled {
		// The PSP authenticates by the secret in the path, not as a client:
		// no client authentication and no per-client rate limit.
		root.Handle(pspWebhookSubtree, s.pspWebhook())
	}
	root.Handle("/api/v1/", s.authenticate(s.routed(api)))
	return s.observe(s.routed(root))
}

func mustSub(fsys embed.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic(err)
	}
	return sub
}
