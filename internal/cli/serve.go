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
	"sync"
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

func (a *app) serve(ctx context.Context) error {
	tuneGC()
	db, err := a.open(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	guard := webhook.Guard{AllowPrivate: a.settings.AllowPrivateWebhook, RequireHTTPS: !a.settings.Sandbox()}
	dispatcher := &webhook.Dispatcher{DB: db, Client: guard.Client(webhook.DefaultTimeout), Schedule: a.settings.RetrySchedule, Log: a.log,
		Grace: ShutdownGrace - time.Second}
	psp, err := a.provider()
	if err != nil {
		return err
	}
	cfg := a.gatewayConfig(db, psp)
	cfg.CheckWebhookURL = guard.CheckURL
	cfg.Wake = dispatcher.Wake
	cfg.Courier = dispatcher
	cfg.SendWebhook = dispatcher.Send
	gw, err := gateway.New(cfg)
	if err != nil {
		return err
	}
	bo, err := backoffice.New(backoffice.Config{DB: db, Env: a.settings.Env, Provider: psp})
	if err != nil {
		return err
	}
	if cred, created, err := bo.BootstrapSandbox(ctx); err != nil {
		return fmt.Errorf("create sandbox client: %w", err)
	} else if created {
		if err := a.printSandboxBootstrap(ctx, bo, cred); err != nil {
			return err
		}
	}
	m := metrics.New()
	db.OnPosting = m.Posting
	dispatcher.Outcome = m.Delivery
	m.SetStatusCounts(db.StatusCounts)
	m.SetOutboxLag(func(ctx context.Context) (int64, float64, error) {
		n, age, err := db.OutboxLag(ctx, time.Now())
		return n, age.Seconds(), err
	})
	if state, ok := a.pspState(psp); ok {
		if err := m.SetPSP(state); err != nil {
			return err
		}
	}
	var limiter ratelimit.Limiter = ratelimit.NewMemory(a.settings.RateLimitN)
	if a.settings.RedisURL != "" {
		redislimit.SetDriverLogger(a.log)
		rl, err := redislimit.New(a.settings.RedisURL, a.settings.RateLimitN)
		if err != nil {
			return fmt.Errorf("redis: %w", err)
		}
		defer rl.Close()
		if err := rl.Ping(ctx); err != nil {
			a.log.Warn("redis unreachable at start; serving without the shared rate limit until it answers", "error", err.Error())
		}
		limiter = rl
	}
	panel, err := admin.New(admin.Options{Gateway: gw, Backoffice: bo, Log: a.log})
	if err != nil {
		return err
	}
	api, err := httpapi.New(httpapi.Options{Gateway: gw, Log: a.log, Ready: db.Ping, Limiter: limiter, RateLimit: a.settings.RateLimitN, Admin: panel,
		Limited: m.RateLimited, LimiterFailed: m.RateLimiterError, Metrics: m.Handler(), PSPWebhookSecret: a.settings.PSPWebhookSecret,
		Observe: func(r *http.Request, status int, d time.Duration) { m.ObserveRequest(metrics.RouteLabel(r), status, d) }})
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           api.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	ln, err := net.Listen("tcp", a.settings.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", a.settings.Addr, err)
	}
	if a.settings.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(a.settings.TLSCert, a.settings.TLSKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("load TLS certificate: %w", err)
		}
		ln = api.TLSListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}})
	} else {
		ln = api.Listener(ln) // net/http's own error responses get the JSON body
	}
	if !a.settings.Sandbox() && a.settings.Provider == config.ProviderSandbox {
		// Allowed only when set explicitly (config.Settings.ValidateServe);
		// the operator must know that no real money moves.
		a.log.Warn("PIXGATE_PROVIDER=sandbox in production: the PIX network is simulated, no real money moves: " +
			"no real payer can pay a charge, and payouts and refunds are settled by the simulator")
	}
	a.warnSandboxPSP()
	a.log.Info("listening", "addr", ln.Addr().String(), "env", a.settings.Env, "provider", psp.Name(), "database", db.Dialect(), "tls", a.settings.TLSCert != "")

	jobsCtx, stopJobs := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	tasks := []job.Task{
		{Name: "expire-charges", Run: gw.ExpireDue},
		// Webhooks get lost: the PSP's list of received Pix is read too
		// (the gateway spaces the readings and runs them on one node).
		{Name: "psp-reconcile", Run: gw.ReconcileReceived},
		// A PSP that lists its sent payouts settles many of them per call.
		{Name: "psp-sent-reading", Run: gw.ReadSent},
		// Cobs left behind by a crash are withdrawn.
		{Name: "psp-orphan-cobs", Run: gw.SweepOrphanCobs},
		// Recurrences: each cycle's charge, retries, approvals left
		// unanswered; and the PSP's changes, read without waiting on webhooks.
		{Name: "recurrence-cycles", Run: gw.RunRecurrences},
		{Name: "psp-recurrences-reading", Run: gw.ReadRecurrences},
	}
	interval := jobInterval(a.settings.PayoutDelay)
	runner := &job.Runner{Log: a.log, Interval: interval, Tasks: tasks, Unavailable: db.Unavailable}
	wg.Add(6)
	// Payouts, refunds and the returns of money that matched no open
	// charge go to the PSP as they are committed, many at once.
	go func() { defer wg.Done(); gw.RunSender(jobsCtx, interval) }()
	go func() {
		defer wg.Done()
		a.startPSP(jobsCtx, psp, pspStartRetry)
		// Read back the registration Start made, then watch it: another
		// deployment on the same PSP account may take it over.
		if w, ok := psp.(provider.WebhookChecker); ok {
			a.watchWebhook(jobsCtx, w, webhookCheckEvery)
		}
	}()
	go func() { defer wg.Done(); a.watchCertificate(jobsCtx, certCheckEvery) }()
	go func() { defer wg.Done(); runner.Run(jobsCtx) }()
	go func() { defer wg.Done(); dispatcher.Run(jobsCtx) }()
	// PostgreSQL: authenticate from memory, kept in step with every
	// process's changes of clients (store.ClientChanges).
	go func() { defer wg.Done(); db.WatchClients(jobsCtx, a.log) }()

	errc := make(chan error, 1)
	if a.settings.PprofAddr != "" {
		stopPprof, err := a.servePprof()
		if err != nil {
			stopJobs()
			wg.Wait()
			ln.Close()
			return err
		}
		defer stopPprof()
	}
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		stopJobs()
		wg.Wait()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down", "grace", ShutdownGrace.String())
	// One deadline for everything: stop claiming background work at once,
	// let requests and webhook attempts in flight finish within the grace.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	stopJobs()
	err = srv.Shutdown(sctx)
	wg.Wait()
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

// pspStartRetry is how long serve waits before it tries again to start a
// PSP provider (register its webhook URL) that failed to start.
const pspStartRetry = 30 * time.Second

// startPSP starts psp (apipix and efi register pixgate's webhook URL with
// the PSP), trying again every retry until it succeeds or ctx ends. serve
// does not wait for it: until the webhook is registered, the reading of
// the PSP's received Pix (psp-reconcile) still credits every payment.
func (a *app) startPSP(ctx context.Context, psp provider.Provider, retry time.Duration) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := psp.Start(ctx)
		if rec, ok := psp.(provider.Recurrer); ok && err == nil {
			err = rec.StartRecurrences(ctx)
		}
		if err == nil || ctx.Err() != nil {
			return
		}
		// The provider's errors carry the PSP's own text, never its
		// credentials or tokens (provider/apipix scrubs them).
		a.log.Error("PSP start failed (webhook not registered); retrying in the background",
			"provider", psp.Name(), "retry_in", retry.String(), "error", err.Error())
		t.Reset(retry)
	}
}

// jobInterval polls often enough that a sandbox payout settles close to its
// delay and a charge expires within 5 s of expires_at: 100 ms at the default
// 2 s delay, so that each tick's settlements and webhooks are too small to
// stall the requests behind them (docs/decisions.md).
func jobInterval(payoutDelay time.Duration) time.Duration {
	return min(time.Second, max(50*time.Millisecond, payoutDelay/20))
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
