// Package apipix is the provider for any PSP that implements BACEN's API Pix
// (v2): charges (cob), received Pix, refunds (devolução) and the webhook
// registration, over OAuth 2.0 client credentials and mutual TLS. It moves
// money in and refunds it; payouts need a PSP-specific API (see
// provider/efi, which is built on this client).
package apipix

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/pixgate/pixgate/internal/provider"
)

// Config is what a Client needs to reach the PSP.
type Config struct {
	// APIURL is the API Pix base including its version, such as
	// https://pix.example/v2; paths like /cob/{txid} are appended to it.
	APIURL string
	// TokenURL is the OAuth 2.0 token endpoint; "" means
	// <origin of APIURL>/oauth/token.
	TokenURL string
	// ClientID and ClientSecret are the OAuth 2.0 client credentials, sent
	// with HTTP Basic.
	ClientID, ClientSecret string
	// CertPEM and KeyPEM are the client certificate and its key, presented
	// on every connection to the PSP (the token endpoint's included).
	CertPEM, KeyPEM []byte
	// CAPEM optionally holds the CAs that sign the PSP's server
	// certificate; nil means the system roots.
	CAPEM []byte
	// PixKey is the merchant's receiving key: the chave of every cob and
	// the pagador.chave of every efi send.
	PixKey string
	// WebhookURL is registered at Start with PUT /webhook/{PixKey}, and
	// by StartRecurrences with PUT /webhookrec and PUT /webhookcobr.
	WebhookURL string
	// Account is the merchant's account at the PSP, the recebedor of every
	// cycle charge of a recurrence (cobr); without it no cycle charge can
	// be created.
	Account Account
	// Log receives the PSP's errors and retries; nil discards them.
	Log *slog.Logger
	// Now is the clock used to judge the access token's expiry; nil is
	// time.Now.
	Now func() time.Time
}

// Timeouts and limits of the calls to the PSP.
const (
	// DefaultChargeTimeout bounds CreateCharge, retries included: a payer
	// is waiting for the BR Code.
	DefaultChargeTimeout = 5 * time.Second
	// DefaultCallTimeout bounds every other call, retries included.
	DefaultCallTimeout = 10 * time.Second
	// tokenEarly is how long before its expires_in a token is replaced, so
	// that a call never leaves with a token about to lapse.
	tokenEarly = 60 * time.Second
	// maxBody caps what is read of a PSP response.
	maxBody = 1 << 20
	// maxText is the longest solicitacaoPagador, descricao or infoPagador
	// the API accepts.
	maxText = 140
	// maxPixKey is the longest DICT key.
	maxPixKey = 77
)

// Client talks to an API Pix PSP. It is safe for concurrent use; its only
// mutable state is the access token cache.
type Client struct {
	name          string
	api           string // APIURL without a trailing slash
	origin        string // scheme://host of APIURL
	pixKey        string
	webhookURL    string
	account       Account
	secret        string // only to scrub it from PSP texts put in errors
	hookSecret    string // the webhook URL's secret, scrubbed likewise
	health        *health
	http          *http.Client
	tokens        *tokenCache
	log           *slog.Logger
	chargeTimeout time.Duration
	callTimeout   time.Duration
	backoff       []time.Duration
	webhookHeader http.Header
}

// Option adjusts a Client at construction, for the providers built on it.
type Option func(*Client)

// WithName sets the provider name used by Name, log lines and errors
// (efi reuses this client under its own name).
func WithName(name string) Option { return func(c *Client) { c.name = name } }

// WithWebhookHeader adds a header to the PUT /webhook request of Start
// (efi needs x-skip-mtls-checking: true).
func WithWebhookHeader(name, value string) Option {
	return func(c *Client) { c.webhookHeader.Set(name, value) }
}

// WithTimeouts replaces DefaultChargeTimeout and DefaultCallTimeout; zero
// keeps a default. Tests shorten them so that a timeout costs little.
func WithTimeouts(charge, call time.Duration) Option {
	return func(c *Client) {
		if charge > 0 {
			c.chargeTimeout = charge
		}
		if call > 0 {
			c.callTimeout = call
		}
	}
}

// New validates cfg and returns a Client for it. No call is made until a
// method needs one.
func New(cfg Config, opts ...Option) (*Client, error) {
	checked, err := cfg.check()
	if err != nil {
		return nil, err
	}
	hc := mutualTLSClient(checked.cert, checked.roots)
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		name:       provider.NameAPIPix,
		api:        strings.TrimRight(checked.api.String(), "/"),
		origin:     checked.origin,
		pixKey:     cfg.PixKey,
		webhookURL: cfg.WebhookURL,
		account:    cfg.Account,
		secret:     cfg.ClientSecret,
		hookSecret: webhookSecret(cfg.WebhookURL),
		health:     &health{now: now},
		http:       hc,
		tokens: &tokenCache{
			conf: &clientcredentials.Config{
				ClientID:     cfg.ClientID,
				ClientSecret: cfg.ClientSecret,
				TokenURL:     checked.tokenURL,
				AuthStyle:    oauth2.AuthStyleInHeader,
			},
			http:  hc,
			now:   now,
			early: tokenEarly,
		},
		chargeTimeout: DefaultChargeTimeout,
		callTimeout:   DefaultCallTimeout,
		backoff:       []time.Duration{100 * time.Millisecond, 300 * time.Millisecond},
		webhookHeader: http.Header{},
	}
	for _, o := range opts {
		o(c)
	}
	c.log = log.With("provider", c.name)
	return c, nil
}

// checkedConfig is what New takes from a Config once checked.
type checkedConfig struct {
	api      *url.URL
	origin   string // the API's scheme and host
	tokenURL string
	cert     tls.Certificate
	roots    *x509.CertPool // nil: the system's
}

// check validates cfg, field by field; the token URL defaults to
// /oauth/token on the API's host.
func (cfg Config) check() (checkedConfig, error) {
	var out checkedConfig
	api, err := parseHTTPS("API URL", cfg.APIURL)
	if err != nil {
		return out, err
	}
	out.api, out.origin = api, api.Scheme+"://"+api.Host
	out.tokenURL = cfg.TokenURL
	if out.tokenURL == "" {
		out.tokenURL = out.origin + "/oauth/token"
	}
	if _, err := parseHTTPS("token URL", out.tokenURL); err != nil {
		return out, err
	}
	if cfg.ClientID == "" {
		return out, errors.New("apipix: client ID: missing")
	}
	if cfg.ClientSecret == "" {
		return out, errors.New("apipix: client secret: missing")
	}
	if out.cert, out.roots, err = cfg.certificates(); err != nil {
		return out, err
	}
	if cfg.PixKey == "" || len(cfg.PixKey) > maxPixKey {
		return out, fmt.Errorf("apipix: pix key: must be 1 to %d characters", maxPixKey)
	}
	if err := cfg.Account.check(); err != nil {
		return out, err
	}
	if cfg.WebhookURL != "" {
		u, err := url.Parse(cfg.WebhookURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return out, errors.New("apipix: webhook URL: must be an absolute http(s) URL")
		}
	}
	return out, nil
}

// certificates parses the client certificate with its key, and the CA
// bundle the PSP's server is checked against when cfg has one.
func (cfg Config) certificates() (tls.Certificate, *x509.CertPool, error) {
	if len(cfg.CertPEM) == 0 || len(cfg.KeyPEM) == 0 {
		return tls.Certificate{}, nil, errors.New("apipix: client certificate: certificate and key are both required")
	}
	cert, err := tls.X509KeyPair(cfg.CertPEM, cfg.KeyPEM)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("apipix: client certificate: %w", err)
	}
	if len(cfg.CAPEM) == 0 {
		return cert, nil, nil
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(cfg.CAPEM) {
		return tls.Certificate{}, nil, errors.New("apipix: CA bundle: no PEM certificate found")
	}
	return cert, roots, nil
}

// mutualTLSClient is the HTTP client of every call to the PSP: it
// presents cert and trusts roots (nil: the system's).
func mutualTLSClient(cert tls.Certificate, roots *x509.CertPool) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{cert},
		RootCAs:      roots,
	}
	transport.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	transport.TLSHandshakeTimeout = 5 * time.Second
	// Sends run concurrently, and DefaultTransport keeps only 2 idle
	// connections per host: the rest would each pay a new mutual-TLS
	// handshake per call.
	transport.MaxIdleConns, transport.MaxIdleConnsPerHost = 1024, 512 // the gateway's send workers, and the rest
	return &http.Client{
		Transport: transport,
		// A redirect would resend a PUT somewhere we did not choose; the
		// API Pix never redirects, so a 3xx is reported as it is.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// parseHTTPS parses an absolute https URL without query or fragment.
func parseHTTPS(what, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("apipix: %s: must be an absolute https URL without query or credentials", what)
	}
	return u, nil
}

// Name is provider.NameAPIPix (or the name given with WithName).
func (c *Client) Name() string { return c.name }

// Capabilities: cash-in and refunds only; 32-character txids.
func (c *Client) Capabilities() provider.Capabilities {
	return provider.Capabilities{Payouts: false, TxIDLength: 32}
}

// Origin is the scheme and host of the API URL, where PSP-specific APIs
// (efi's /v3/gn/…) live.
func (c *Client) Origin() string { return c.origin }

// Log is the client's logger (named by the provider), for the providers
// built on it: what they skip of a PSP's answer is logged alike.
func (c *Client) Log() *slog.Logger { return c.log }

// PixKey is the merchant's receiving key from the Config.
func (c *Client) PixKey() string { return c.pixKey }

// truncate cuts s to at most n runes, since the API counts characters and
// refuses a longer text outright.
func truncate(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}
