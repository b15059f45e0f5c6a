// Package pspsim is a faithful simulator of a PSP for pixgate's apipix and
// efi providers: BACEN's API Pix v2 (cob, received Pix, devoluções,
// webhook) and Efí's Pix-send API, behind mutual TLS and OAuth 2.0 client
// credentials, with payers, settlement and injectable faults. Tests start
// it in-process; `pixgate psp-sim` runs it for people.
package pspsim

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Options configure a Server. The zero value works: a fresh PKI, random
// credentials and key, a listener on 127.0.0.1 at a free port.
type Options struct {
	// PKI holds the certificates of the mutual TLS; nil: Start makes one.
	PKI *PKI
	// Addr is where the API listens; default "127.0.0.1:0".
	Addr string
	// ControlAddr, when set, is where the plain-HTTP control API (/sim/…)
	// listens; keep it on loopback, it has no authentication.
	ControlAddr string
	// ClientID and ClientSecret are the OAuth 2.0 client credentials;
	// random when empty (read them back with Options()).
	ClientID, ClientSecret string
	// PixKey is the merchant's receiving key: every cob and every send
	// (pagador.chave) must use it. A random EVP key when empty.
	PixKey string
	// CNPJ is the merchant's CNPJ reported with the webhook; default
	// "12345678000195".
	CNPJ string
	// MerchantName and MerchantCity go into the BR Codes.
	MerchantName, MerchantCity string
	// TokenLifetime is the expires_in of access tokens; default one hour.
	TokenLifetime time.Duration
	// SettleDelay is how long a send or a devolução stays EM_PROCESSAMENTO.
	// Zero settles it at the next look; negative: only Settle settles.
	SettleDelay time.Duration
	// Latency is how long every API request, token requests included,
	// waits before it is handled (a real PSP is slow everywhere), uniformly
	// within Latency ± LatencyJitter; the wait ends early, without an
	// answer, when the client gives up. SetLatency changes it at run time.
	// Answers while down (SetDown) are not delayed.
	Latency, LatencyJitter time.Duration
	// RateLimit, when above 0, is how many API requests a second the
	// simulator handles; beyond it a request is answered 429 with
	// Retry-After and not handled. Token requests are neither limited
	// nor counted. SetRateLimit changes it at run time.
	RateLimit int
	// WebhookClient delivers webhooks; default a client with a 5 s timeout.
	// Give it a TLS configuration to deliver to an https test server.
	WebhookClient *http.Client
	// Log receives one line per request and per delivery; nil: discarded.
	Log *slog.Logger
	// Now is the clock of every timestamp, expiry and settlement; default
	// time.Now.
	Now func() time.Time
	// Wrap, when set, wraps the API handler beneath the injected faults and
	// the token check: it sees what the simulated PSP itself answers (for
	// example testkit's OpenAPI conformance check).
	Wrap func(http.Handler) http.Handler
}

// Server is a running (after Start) simulated PSP. Its methods are safe for
// concurrent use.
type Server struct {
	opts Options
	log  *slog.Logger

	mu         sync.Mutex
	st         state
	faults     []*activeFault
	down       bool
	loseHooks  int
	limiter    rateLimiter
	requests   []Request
	deliveries []Delivery

	ln, ctlLn   net.Listener
	srv, ctlSrv *http.Server
	closing     chan struct{}
	closeOnce   sync.Once
	wg          sync.WaitGroup
	started     bool
}

// maxLogged bounds the request and delivery logs of a long-running simulator.
const maxLogged = 10000

// New returns a simulator configured by opts; Start runs it.
func New(opts Options) *Server {
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.ClientID == "" {
		opts.ClientID = "sim-" + randomAlnum(16)
	}
	if opts.ClientSecret == "" {
		opts.ClientSecret = randomAlnum(40)
	}
	if opts.PixKey == "" {
		opts.PixKey = randomEVP()
	}
	if opts.CNPJ == "" {
		opts.CNPJ = "12345678000195"
	}
	if opts.MerchantName == "" {
		opts.MerchantName = "PIXGATE SIMULATOR"
	}
	if opts.MerchantCity == "" {
		opts.MerchantCity = "SAO PAULO"
	}
	if opts.TokenLifetime <= 0 {
		opts.TokenLifetime = time.Hour
	}
	opts.Latency, opts.LatencyJitter = max(opts.Latency, 0), max(opts.LatencyJitter, 0)
	opts.RateLimit = max(opts.RateLimit, 0)
	if opts.WebhookClient == nil {
		opts.WebhookClient = &http.Client{Timeout: 5 * time.Second}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, log: log, st: newState(), closing: make(chan struct{})}
}

// Options returns the options in effect, defaults and generated
// credentials filled in (PKI too, after Start).
func (s *Server) Options() Options {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opts
}

// Start listens on Addr (and ControlAddr) and serves until ctx ends or
// Close is called. It returns once the listeners are open.
func (s *Server) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started {
		s.mu.Unlock()
		return errors.New("pspsim: already started")
	}
	s.started = true
	s.mu.Unlock()
	if s.opts.PKI == nil {
		pki, err := NewPKI(365 * 24 * time.Hour)
		if err != nil {
			return fmt.Errorf("pspsim: %w", err)
		}
		s.mu.Lock()
		s.opts.PKI = pki
		s.mu.Unlock()
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.opts.Addr)
	if err != nil {
		return fmt.Errorf("pspsim: listen on %s: %w", s.opts.Addr, err)
	}
	tlsConf := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{s.opts.PKI.Server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    s.opts.PKI.CA,
	}
	errLog := slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)
	s.srv = &http.Server{Handler: s.handler(), TLSConfig: tlsConf, ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog}
	s.ln = ln
	if s.opts.ControlAddr != "" {
		cln, err := lc.Listen(ctx, "tcp", s.opts.ControlAddr)
		if err != nil {
			_ = ln.Close()
			return fmt.Errorf("pspsim: listen on %s: %w", s.opts.ControlAddr, err)
		}
		s.ctlLn = cln
		s.ctlSrv = &http.Server{Handler: s.controlHandler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: errLog}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.ctlSrv.Serve(cln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.log.Error("pspsim: control API stopped", "err", err)
			}
		}()
	}
	s.wg.Add(3)
	go func() {
		defer s.wg.Done()
		if err := s.srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("pspsim: API stopped", "err", err)
		}
	}()
	go func() {
		defer s.wg.Done()
		s.settleLoop()
	}()
	go func() {
		defer s.wg.Done()
		select {
		case <-ctx.Done():
			go s.Close()
		case <-s.closing:
		}
	}()
	return nil
}

// settleLoop settles due transfers without waiting for a client to look,
// so that refund webhooks go out on time.
func (s *Server) settleLoop() {
	tick := s.opts.SettleDelay / 4
	tick = min(max(tick, 10*time.Millisecond), 250*time.Millisecond)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-s.closing:
			return
		case <-t.C:
			s.settleDue(false)
		}
	}
}

// Close stops the listeners, ends hanging requests and waits for the
// webhook deliveries in flight.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if s.srv != nil {
			_ = s.srv.Shutdown(ctx)
		}
		if s.ctlSrv != nil {
			_ = s.ctlSrv.Shutdown(ctx)
		}
		s.wg.Wait()
	})
}

// origin is "https://host:port" of the API listener.
func (s *Server) origin() string {
	if s.ln == nil {
		return ""
	}
	return "https://" + s.ln.Addr().String()
}

// URL is the API Pix base, "https://127.0.0.1:PORT/v2" (what
// PIXGATE_PSP_API_URL takes).
func (s *Server) URL() string { return s.origin() + "/v2" }

// TokenURL is the OAuth 2.0 token endpoint, origin + "/oauth/token".
func (s *Server) TokenURL() string { return s.origin() + "/oauth/token" }

// ControlURL is the base of the control API ("http://127.0.0.1:PORT"), or
// "" when ControlAddr was not set.
func (s *Server) ControlURL() string {
	if s.ctlLn == nil {
		return ""
	}
	return "http://" + s.ctlLn.Addr().String()
}

// ClientTLS is a TLS configuration that presents the PKI's client
// certificate and trusts its CA: what pixgate's PSP client uses.
func (s *Server) ClientTLS() *tls.Config {
	p := s.Options().PKI
	if p == nil {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{p.Client}, RootCAs: p.CA}
}

// HTTPClient is an http.Client with ClientTLS, for tests that call the
// simulator directly.
func (s *Server) HTTPClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: s.ClientTLS()}}
}

func (s *Server) now() time.Time { return s.opts.Now() }

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomAlnum returns n random characters of [A-Za-z0-9].
func randomAlnum(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(b)
}

// randomEVP returns a random key in the form of a DICT random key (a UUID).
func randomEVP() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
