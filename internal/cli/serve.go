package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime/debug"
	"time"

	"github.com/pixgate/pixgate/internal/admin"
	"github.com/pixgate/pixgate/internal/backoffice"
	"github.com/pixgate/pixgate/internal/config"
	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/job"
	"github.com/pixgate/pixgate/internal/metrics"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/provider/apipix"
	"github.com/pixgate/pixgate/internal/provider/efi"
	"github.com/pixgate/pixgate/internal/provider/sandbox"
	"github.com/pixgate/pixgate/internal/ratelimit"
	redislimit "github.com/pixgate/pixgate/internal/ratelimit/redis"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/webhook"
)

// ShutdownGrace is how long in-flight requests may run after SIGTERM.
const ShutdownGrace = 15 * time.Second

// gcPercent is the garbage collector's target for `pixgate serve` (and
// pixgate-bench's own) when the GOGC environment variable does not set one:
// requests allocate short-lived kilobytes over a small live heap, so Go's
// default of 100 collects too often (docs/decisions.md). Set GOGC (and
// GOMEMLIMIT) to override.
const gcPercent = 400

// tuneGC applies gcPercent unless GOGC is set.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}

// serve runs `pixgate serve`: the API and the panel on one listener, and
// the background work beside them (background), until ctx ends.
func (a *app) serve(ctx context.Context) error {
	tuneGC()
	db, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	dispatcher := a.dispatcher(db)
	psp, err := a.provider()
	if err != nil {
		return err
	}
	gw, bo, err := a.services(ctx, db, psp, dispatcher)
	if err != nil {
		return err
	}
	m, err := a.metrics(db, psp, dispatcher)
	if err != nil {
		return err
	}
	limiter, closeLimiter, err := a.limiter(ctx)
	if err != nil {
		return err
	}
	defer closeLimiter()
	api, err := a.api(gw, bo, db, m, limiter)
	if err != nil {
		return err
	}
	ln, err := a.listen(api)
	if err != nil {
		return err
	}
	a.warnSandboxProvider()
	a.warnSandboxPSP()
	a.log.Info("listening", "addr", ln.Addr().String(), "env", a.settings.Env, "provider", psp.Name(), "database", db.Dialect(), "tls", a.settings.TLSCert != "")
	return a.serveUntilShutdown(ctx, a.httpServer(api), ln, a.background(db, psp, gw.Cashin(), gw.Recurrences(), gw.Transfers(), gw.Payouts(), dispatcher))
}

// dispatcher is the webhook dispatcher of db's outbox: its attempts may
// run on after SIGTERM, a second short of ShutdownGrace.
func (a *app) dispatcher(db *store.DB) *webhook.Dispatcher {
	return &webhook.Dispatcher{DB: db, Client: a.webhookGuard().Client(webhook.DefaultTimeout), Schedule: a.settings.RetrySchedule, Log: a.log,
		Grace: ShutdownGrace - time.Second}
}

// webhookGuard is what the clients' webhook URLs may be: private
// addresses only where the settings allow them, https outside the sandbox.
func (a *app) webhookGuard() webhook.Guard {
	return webhook.Guard{AllowPrivate: a.settings.AllowPrivateWebhook, RequireHTTPS: !a.settings.Sandbox()}
}

// services builds the gateway, whose webhooks go through dispatcher, and
// the back office over db; on an empty sandbox database it creates the
// sandbox client and prints its credentials.
func (a *app) services(ctx context.Context, db *store.DB, psp provider.Provider, dispatcher *webhook.Dispatcher) (*gateway.Service, *backoffice.Service, error) {
	cfg := a.gatewayConfig(db, psp)
	cfg.CheckWebhookURL = a.webhookGuard().CheckURL
	cfg.Wake = dispatcher.Wake
	cfg.Courier = dispatcher
	cfg.SendWebhook = dispatcher.Send
	gw, err := gateway.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	bo, err := backoffice.New(backoffice.Config{DB: db, Env: a.settings.Env, Provider: psp})
	if err != nil {
		return nil, nil, err
	}
	if cred, created, err := bo.BootstrapSandbox(ctx); err != nil {
		return nil, nil, fmt.Errorf("create sandbox client: %w", err)
	} else if created {
		if err := a.printSandboxBootstrap(ctx, bo, cred); err != nil {
			return nil, nil, err
		}
	}
	return gw, bo, nil
}

// metrics is the Prometheus registry, fed by db's postings and counts,
// dispatcher's deliveries and, with a real PSP, its health.
func (a *app) metrics(db *store.DB, psp provider.Provider, dispatcher *webhook.Dispatcher) (*metrics.Metrics, error) {
	m := metrics.New()
	db.OnPosting = m.Posting
	dispatcher.Outcome = m.Delivery
	m.SetStatusCounts(db.StatusCounts)
	m.SetDisputesOpen(func(ctx context.Context) (int64, error) {
		n, err := db.OpenDisputes(ctx)
		return int64(n), err
	})
	m.SetOutboxLag(func(ctx context.Context) (int64, float64, error) {
		n, age, err := db.OutboxLag(ctx, time.Now())
		return n, age.Seconds(), err
	})
	if state, ok := a.pspState(psp); ok {
		if err := m.SetPSP(state); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// limiter is the API's rate limiter: shared through Redis when the
// settings name one (and closed by the returned func), else this node's.
func (a *app) limiter(ctx context.Context) (ratelimit.Limiter, func(), error) {
	if a.settings.RedisURL == "" {
		return ratelimit.NewMemory(a.settings.RateLimitN), func() {}, nil
	}
	redislimit.SetDriverLogger(a.log)
	rl, err := redislimit.New(a.settings.RedisURL, a.settings.RateLimitN)
	if err != nil {
		return nil, nil, fmt.Errorf("redis: %w", err)
	}
	if err := rl.Ping(ctx); err != nil {
		a.log.Warn("redis unreachable at start; serving without the shared rate limit until it answers", "error", err.Error())
	}
	return rl, func() { _ = rl.Close() }, nil
}

// api is the HTTP API with the panel mounted in it.
func (a *app) api(gw *gateway.Service, bo *backoffice.Service, db *store.DB, m *metrics.Metrics, limiter ratelimit.Limiter) (*httpapi.Server, error) {
	panel, err := admin.New(admin.Options{Gateway: gw, Backoffice: bo, Log: a.log})
	if err != nil {
		return nil, err
	}
	return httpapi.New(httpapi.Options{Gateway: gw, Log: a.log, Ready: db.Ping, Limiter: limiter, RateLimit: a.settings.RateLimitN, Admin: panel,
		Limited: m.RateLimited, LimiterFailed: m.RateLimiterError, Metrics: m.Handler(), PSPWebhookSecret: a.settings.PSPWebhookSecret,
		Observe: func(r *http.Request, status int, d time.Duration) { m.ObserveRequest(metrics.RouteLabel(r), status, d) }})
}

// httpServer serves api's handler with the timeouts and header limit of
// a server facing the Internet.
func (a *app) httpServer(api *httpapi.Server) *http.Server {
	return &http.Server{
		Handler:           api.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
}

// listen opens the settings' address, with TLS when they name a
// certificate, through api's listener.
func (a *app) listen(api *httpapi.Server) (net.Listener, error) {
	ln, err := net.Listen("tcp", a.settings.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", a.settings.Addr, err)
	}
	if a.settings.TLSCert == "" {
		return api.Listener(ln), nil // net/http's own error responses get the JSON body
	}
	cert, err := tls.LoadX509KeyPair(a.settings.TLSCert, a.settings.TLSKey)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("load TLS certificate: %w", err)
	}
	return api.TLSListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}), nil
}

// warnSandboxProvider warns that the simulated PSP moves no real money,
// in production, where it is allowed only when set explicitly
// (config.Settings.ValidateServe).
func (a *app) warnSandboxProvider() {
	if !a.settings.Sandbox() && a.settings.Provider == config.ProviderSandbox {
		a.log.Warn("PIXGATE_PROVIDER=sandbox in production: the PIX network is simulated, no real money moves: " +
			"no real payer can pay a charge, and payouts and refunds are settled by the simulator")
	}
}

// serveUntilShutdown serves srv on ln, with runner's background work beside it, until
// ctx ends or serving fails. At shutdown, one deadline for everything:
// background work stops claiming at once, and the requests and webhook
// attempts in flight finish within ShutdownGrace.
func (a *app) serveUntilShutdown(ctx context.Context, srv *http.Server, ln net.Listener, runner *job.Runner) error {
	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	jobsDone := make(chan struct{})
	go func() { defer close(jobsDone); runner.Run(jobsCtx) }()
	if a.settings.PprofAddr != "" {
		stopPprof, err := a.servePprof()
		if err != nil {
			stopJobs()
			<-jobsDone
			ln.Close()
			return err
		}
		defer stopPprof()
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		stopJobs()
		<-jobsDone
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down", "grace", ShutdownGrace.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	stopJobs()
	err := srv.Shutdown(sctx)
	<-jobsDone
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	a.log.Info("stopped")
	return nil
}

// provider returns the PSP the settings name, built from the settings that
// config.Settings.ValidateServe checked (and whose files it read).
func (a *app) provider() (provider.Provider, error) {
	s := a.settings
	switch s.Provider {
	case config.ProviderSandbox:
		return sandbox.New(sandbox.Config{PixKey: s.PixKey, MerchantName: s.MerchantName, MerchantCity: s.MerchantCity,
			Delay: s.PayoutDelay}), nil
	case config.ProviderAPIPix, config.ProviderEfi:
		cfg := apipix.Config{APIURL: s.PSPAPIURL, TokenURL: s.PSPTokenURL, ClientID: s.PSPClientID, ClientSecret: s.PSPClientSecret,
			CertPEM: s.CertPEM, KeyPEM: s.KeyPEM, CAPEM: s.CAPEM, PixKey: s.PSPPixKey, WebhookURL: s.PSPWebhookURL, Log: a.log}
		if s.PSPAccountNumber != "" {
			cfg.Account = apipix.Account{Number: s.PSPAccountNumber, Branch: s.PSPAccountBranch, Type: s.PSPAccountType}
		}
		var (
			p   provider.Provider
			err error
		)
		if s.Provider == config.ProviderEfi {
			p, err = efi.New(cfg)
		} else {
			p, err = apipix.New(cfg)
		}
		if err != nil {
			return nil, fmt.Errorf("provider %s: %w", s.Provider, err)
		}
		return p, nil
	}
	return nil, fmt.Errorf("provider %q is not available in this build", s.Provider)
}

// servePprof serves Go's profiler on the loopback address the settings
// name (config checks it is loopback) and returns what stops it.
// /debug/pprof/cmdline is not served: it would show secrets given as
// flags (--psp-client-secret, --psp-webhook-url).
func (a *app) servePprof() (stop func(), err error) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", http.NotFound)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", a.settings.PprofAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on PIXGATE_PPROF_ADDR %s: %w", a.settings.PprofAddr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
	a.log.Info("profiler listening", "addr", ln.Addr().String())
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }, nil
}
