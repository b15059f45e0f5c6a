// Package config owns pixgate's configuration: one struct read from flags
// and PIXGATE_* environment variables (kong does the reading), with defaults
// and a Validate that names every bad setting.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// Environments (PIXGATE_ENV).
const (
	Sandbox    = pix.EnvSandbox
	Production = pix.EnvProduction
)

// Providers: which PIX network moves the money (PIXGATE_PROVIDER).
const (
	ProviderSandbox = provider.NameSandbox
	ProviderAPIPix  = provider.NameAPIPix
	ProviderEfi     = provider.NameEfi
)

// Sandbox defaults of the receiving side of BR Codes. Production never uses
// them: serve refuses to start there without explicit values.
const (
	SandboxPixKey       = "pix@pixgate.dev"
	SandboxMerchantName = "PIXGATE SANDBOX"
	SandboxMerchantCity = "SAO PAULO"
)

// Config is the configuration shared by every command. Fields are strings
// where pixgate parses them itself, so a bad value yields one line that names
// the setting rather than a parser's message.
type Config struct {
	Addr                 string `name:"addr" env:"PIXGATE_ADDR" default:"127.0.0.1:8080" help:"Listen address."`
	Env                  string `name:"env" env:"PIXGATE_ENV" help:"sandbox or production (default: sandbox; must be set with PIXGATE_PROVIDER=apipix or efi)."`
	DatabaseURL          string `name:"database-url" env:"PIXGATE_DATABASE_URL" default:"./data/pixgate.db" help:"SQLite file path or sqlite://…, or postgres://…"`
	RedisURL             string `name:"redis-url" env:"PIXGATE_REDIS_URL" help:"Redis for shared rate limits (redis://, rediss://, unix://)."`
	RateLimit            string `name:"rate-limit" env:"PIXGATE_RATE_LIMIT" default:"100" help:"Requests per rolling 60 s per client."`
	Provider             string `name:"provider" env:"PIXGATE_PROVIDER" help:"PIX network: sandbox (simulated), apipix or efi (default: sandbox in sandbox; required in production)."`
	PixKey               string `name:"pix-key" env:"PIXGATE_PIX_KEY" help:"Receiving PIX key written into BR Codes (default in sandbox: pix@pixgate.dev; in production required with PIXGATE_PROVIDER=sandbox, unused with a PSP)."`
	MerchantName         string `name:"merchant-name" env:"PIXGATE_MERCHANT_NAME" help:"Merchant name in BR Codes, 25 characters kept (default in sandbox: PIXGATE SANDBOX; in production required with PIXGATE_PROVIDER=sandbox, unused with a PSP)."`
	MerchantCity         string `name:"merchant-city" env:"PIXGATE_MERCHANT_CITY" help:"Merchant city in BR Codes, 15 characters kept (default in sandbox: SAO PAULO; in production required with PIXGATE_PROVIDER=sandbox, unused with a PSP)."`
	ChargeTTL            string `name:"charge-ttl" env:"PIXGATE_CHARGE_TTL" default:"24h" help:"A charge not paid by then becomes CANCELLED."`
	SandboxPayoutDelay   string `name:"sandbox-payout-delay" env:"PIXGATE_SANDBOX_PAYOUT_DELAY" default:"2s" help:"Sandbox: time until a payout or refund settles."`
	WebhookRetrySchedule string `name:"webhook-retry-schedule" env:"PIXGATE_WEBHOOK_RETRY_SCHEDULE" default:"5s,5m,30m,2h,5h,10h,10h" help:"Waits between webhook attempts after the first."`
	WebhookAllowPrivate  string `name:"webhook-allow-private" env:"PIXGATE_WEBHOOK_ALLOW_PRIVATE" help:"Allow webhook URLs that resolve to private addresses (default: true in sandbox, false in production)."`
	TLSCert              string `name:"tls-cert" env:"PIXGATE_TLS_CERT" help:"TLS certificate file (PEM)."`
	TLSKey               string `name:"tls-key" env:"PIXGATE_TLS_KEY" help:"TLS private key file (PEM)."`
	LogLevel             string `name:"log-level" env:"PIXGATE_LOG_LEVEL" default:"info" help:"debug, info, warn or error."`
	PprofAddr            string `name:"pprof-addr" env:"PIXGATE_PPROF_ADDR" help:"Serve Go's profiler (net/http/pprof) on this loopback address, e.g. 127.0.0.1:6060 (default: off)."`
	// A real PSP (PIXGATE_PROVIDER=apipix or efi, docs/psp.md#settings): required
	// with those providers except the token URL (defaulted from the API
	// URL) and the CA file (default: the system roots).
	PSPAPIURL           string `name:"psp-api-url" env:"PIXGATE_PSP_API_URL" help:"PSP: API Pix base URL including its version (https://…/v2)."`
	PSPTokenURL         string `name:"psp-token-url" env:"PIXGATE_PSP_TOKEN_URL" help:"PSP: OAuth 2.0 token endpoint (default: <origin of the API URL>/oauth/token)."`
	PSPClientID         string `name:"psp-client-id" env:"PIXGATE_PSP_CLIENT_ID" help:"PSP: OAuth 2.0 client id."`
	PSPClientSecret     string `name:"psp-client-secret" env:"PIXGATE_PSP_CLIENT_SECRET" help:"PSP: OAuth 2.0 client secret."`
	PSPCertFile         string `name:"psp-cert-file" env:"PIXGATE_PSP_CERT_FILE" help:"PSP: mutual-TLS client certificate file (PEM)."`
	PSPKeyFile          string `name:"psp-key-file" env:"PIXGATE_PSP_KEY_FILE" help:"PSP: mutual-TLS client private key file (PEM)."`
	PSPCAFile           string `name:"psp-ca-file" env:"PIXGATE_PSP_CA_FILE" help:"PSP: PEM bundle that signs the PSP's server certificate (default: the system roots)."`
	PSPPixKey           string `name:"psp-pix-key" env:"PIXGATE_PSP_PIX_KEY" help:"PSP: the merchant's receiving PIX key at the PSP."`
	PSPWebhookURL       string `name:"psp-webhook-url" env:"PIXGATE_PSP_WEBHOOK_URL" help:"PSP: public URL at which the PSP reaches pixgate, ending in /psp/webhook/<secret: 32 or more of [A-Za-z0-9_-]>."`
	PSPAccountNumber    string `name:"psp-account-number" env:"PIXGATE_PSP_ACCOUNT_NUMBER" help:"PSP: the merchant's account number (conta) at the PSP, which receives the cycle charges of recurrences; without it recurrences are refused."`
	PSPAccountBranch    string `name:"psp-account-branch" env:"PIXGATE_PSP_ACCOUNT_BRANCH" help:"PSP: the account's branch (agência), optional."`
	PSPAccountType      string `name:"psp-account-type" env:"PIXGATE_PSP_ACCOUNT_TYPE" default:"CORRENTE" help:"PSP: the account's type: CORRENTE, POUPANCA or PAGAMENTO."`
	PSPUnmatched        string `name:"psp-unmatched" env:"PIXGATE_PSP_UNMATCHED" default:"return" help:"PSP: what happens to a confirmed Pix that matches no open charge: return (to the payer, by devolução) or hold (for an operator, who returns it from the panel)."`
	PSPReturnsInterval  string `name:"psp-returns-interval" env:"PIXGATE_PSP_RETURNS_INTERVAL" default:"10m" help:"PSP: how often the received Pix of the last 90 days that have a devolução are read, to learn of MED returns nobody announced."`
	PSPDisputesInterval string `name:"psp-disputes-interval" env:"PIXGATE_PSP_DISPUTES_INTERVAL" default:"5m" help:"PSP (efi): how often the infractions (MED contests) opened since the last reading are read."`
}

// Settings is a validated Config with its values parsed.
type Settings struct {
	Config
	Postgres      bool
	RateLimitN    int
	ChargeTTLD    time.Duration
	PayoutDelay   time.Duration
	RetrySchedule []time.Duration
	// ReturnsEvery and DisputesEvery space the readings of MED returns and
	// infractions at the PSP.
	ReturnsEvery        time.Duration
	DisputesEvery       time.Duration
	AllowPrivateWebhook bool
	// Filled by ValidateServe for apipix and efi (PSPTokenURL gets its
	// default there too), so that serve need not read the files again: the
	// PEM contents of PIXGATE_PSP_CERT_FILE, _KEY_FILE and _CA_FILE (CAPEM
	// nil when unset) and the <secret> path element of the webhook URL.
	CertPEM, KeyPEM, CAPEM []byte
	PSPWebhookSecret       string
	// CertNotAfter is when the PSP client certificate expires (filled with
	// CertPEM), for the warnings and the metric of serve.
	CertNotAfter time.Time
	// EnvSet reports that PIXGATE_ENV (or --env) was given: a PSP provider
	// does not run on the sandbox default, since sandbox rules (private
	// webhook addresses, printed credentials) must never reach real money
	// unnoticed.
	EnvSet bool
}

// Sandbox reports whether this is the sandbox environment.
func (s Settings) Sandbox() bool { return s.Env == Sandbox }

// Validate parses every setting and returns all problems at once, each one
// line naming its environment variable and flag.
func (c Config) Validate() (Settings, error) {
	// Env has no kong default so that "not given" stays visible: the
	// sandbox fills it here, and EnvSet remembers it was given.
	s := Settings{Config: c, EnvSet: c.Env != ""}
	s.Env = cmp.Or(c.Env, Sandbox)
	var errs []error
	bad := func(env, flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("invalid %s (--%s): %s", env, flag, fmt.Sprintf(format, args...)))
	}
	if c.PSPUnmatched != "return" && c.PSPUnmatched != "hold" {
		bad("PIXGATE_PSP_UNMATCHED", "psp-unmatched", "%q must be return or hold", c.PSPUnmatched)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("PIXGATE_ADDR", "addr", "%q is not host:port", c.Addr)
	}
	if s.Env != Sandbox && s.Env != Production {
		bad("PIXGATE_ENV", "env", "%q must be sandbox or production", s.Env)
	}
	switch {
	case c.DatabaseURL == "":
		bad("PIXGATE_DATABASE_URL", "database-url", "must not be empty")
	case strings.HasPrefix(c.DatabaseURL, "postgres://") || strings.HasPrefix(c.DatabaseURL, "postgresql://"):
		s.Postgres = true
	case strings.Contains(c.DatabaseURL, "://") && !strings.HasPrefix(c.DatabaseURL, "sqlite://"):
		bad("PIXGATE_DATABASE_URL", "database-url", "unsupported scheme (use a file path, sqlite://… or postgres://…)")
	}
	if c.RedisURL != "" && !(strings.HasPrefix(c.RedisURL, "redis://") || strings.HasPrefix(c.RedisURL, "rediss://") || strings.HasPrefix(c.RedisURL, "unix://")) {
		bad("PIXGATE_REDIS_URL", "redis-url", "must start with redis://, rediss:// or unix://")
	}
	if n, err := strconv.Atoi(c.RateLimit); err != nil || n < 1 || n > 1_000_000_000 {
		bad("PIXGATE_RATE_LIMIT", "rate-limit", "%q must be a positive integer", c.RateLimit)
	} else {
		s.RateLimitN = n
	}
	// The sandbox fills what is unset; production keeps it empty, so that
	// ValidateServe can tell it was not set (kong defaults cannot).
	if s.Env == Sandbox {
		s.Provider = cmp.Or(s.Provider, ProviderSandbox)
		s.PixKey = cmp.Or(s.PixKey, SandboxPixKey)
		s.MerchantName = cmp.Or(s.MerchantName, SandboxMerchantName)
		s.MerchantCity = cmp.Or(s.MerchantCity, SandboxMerchantCity)
	}
	switch s.Provider {
	case "", ProviderSandbox, ProviderAPIPix, ProviderEfi:
	default:
		bad("PIXGATE_PROVIDER", "provider", "%q must be sandbox, apipix or efi", c.Provider)
	}
	if k := s.PixKey; k != "" && !validPixKey(k) {
		bad("PIXGATE_PIX_KEY", "pix-key", "must be a valid PIX key (e-mail, +55 phone, CPF, CNPJ or EVP)")
	}
	if s.MerchantName != "" && strings.TrimSpace(s.MerchantName) == "" {
		bad("PIXGATE_MERCHANT_NAME", "merchant-name", "must not be blank")
	}
	if s.MerchantCity != "" && strings.TrimSpace(s.MerchantCity) == "" {
		bad("PIXGATE_MERCHANT_CITY", "merchant-city", "must not be blank")
	}
	var err error
	if s.ChargeTTLD, err = positiveDuration(c.ChargeTTL); err != nil {
		bad("PIXGATE_CHARGE_TTL", "charge-ttl", "%v", err)
	}
	c.medIntervals(&s, bad)
	if s.PayoutDelay, err = time.ParseDuration(c.SandboxPayoutDelay); err != nil || s.PayoutDelay < 0 {
		bad("PIXGATE_SANDBOX_PAYOUT_DELAY", "sandbox-payout-delay", "%q is not a non-negative duration such as 2s", c.SandboxPayoutDelay)
	}
	for _, part := range strings.Split(c.WebhookRetrySchedule, ",") {
		d, err := positiveDuration(strings.TrimSpace(part))
		if err != nil {
			bad("PIXGATE_WEBHOOK_RETRY_SCHEDULE", "webhook-retry-schedule", "%v (want durations separated by commas, e.g. 5s,5m)", err)
			break
		}
		s.RetrySchedule = append(s.RetrySchedule, d)
	}
	switch strings.ToLower(c.WebhookAllowPrivate) {
	case "":
		s.AllowPrivateWebhook = s.Env == Sandbox
	case "true", "1", "yes":
		s.AllowPrivateWebhook = true
	case "false", "0", "no":
		s.AllowPrivateWebhook = false
	default:
		bad("PIXGATE_WEBHOOK_ALLOW_PRIVATE", "webhook-allow-private", "%q must be true or false", c.WebhookAllowPrivate)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		bad("PIXGATE_TLS_CERT", "tls-cert", "PIXGATE_TLS_CERT and PIXGATE_TLS_KEY must be set together")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("PIXGATE_LOG_LEVEL", "log-level", "%q must be debug, info, warn or error", c.LogLevel)
	}
	if c.PprofAddr != "" && !loopbackAddr(c.PprofAddr) {
		// The profiler shows the process's internals: never on a public address.
		bad("PIXGATE_PPROF_ADDR", "pprof-addr", "%q must be a loopback host:port such as 127.0.0.1:6060", c.PprofAddr)
	}
	if len(errs) > 0 {
		return Settings{}, errors.Join(errs...)
	}
	return s, nil
}

// ValidateServe returns what stops serve (and only serve: other commands
// write no BR Code and move no money) from starting, one line per setting:
// in production PIXGATE_PROVIDER must be set; with provider sandbox there
// (pixgate writes the BR Codes itself) the receiving key and merchant name
// and city must be set explicitly, so that no sandbox default ever reaches
// a payer; with apipix or efi every PIXGATE_PSP_*
// setting must be present and well formed and its files readable
// (docs/psp.md#settings). For those it fills s.CertPEM, s.KeyPEM, s.CAPEM,
// s.PSPWebhookSecret and the default s.PSPTokenURL. No line quotes a
// secret or a file's contents.
func (s *Settings) ValidateServe() error {
	var errs []error
	bad := func(env, flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("invalid %s (--%s): %s", env, flag, fmt.Sprintf(format, args...)))
	}
	switch s.Provider {
	case "":
		bad("PIXGATE_PROVIDER", "provider", "must be set in production (sandbox, apipix or efi)")
	case ProviderAPIPix, ProviderEfi:
		if !s.EnvSet {
			bad("PIXGATE_ENV", "env", "must be set with PIXGATE_PROVIDER=%s: production for real money, sandbox only for the PSP's own test environment", s.Provider)
		}
		s.validatePSP(bad)
	}
	if s.Env == Production && s.Provider == ProviderSandbox {
		for _, v := range []struct{ value, env, flag string }{
			{s.PixKey, "PIXGATE_PIX_KEY", "pix-key"},
			{s.MerchantName, "PIXGATE_MERCHANT_NAME", "merchant-name"},
			{s.MerchantCity, "PIXGATE_MERCHANT_CITY", "merchant-city"},
		} {
			if v.value == "" {
				bad(v.env, v.flag, "must be set in production with PIXGATE_PROVIDER=sandbox (it is written into every BR Code)")
			}
		}
	}
	return errors.Join(errs...)
}

// validPixKey reports whether k is a PIX key of any type.
func validPixKey(k string) bool {
	return pix.ValidPixKey(pix.KeyEmail, k) || pix.ValidPixKey(pix.KeyEVP, k) ||
		pix.ValidPixKey(pix.KeyPhone, k) || pix.ValidPixKey(pix.KeyCPF, k) || pix.ValidPixKey(pix.KeyCNPJ, k)
}

// medIntervals parses the intervals of the MED readings into s (empty:
// their defaults), reporting each bad one to bad.
func (c Config) medIntervals(s *Settings, bad func(env, flag, format string, args ...any)) {
	var err error
	if s.ReturnsEvery, err = positiveDuration(cmp.Or(c.PSPReturnsInterval, "10m")); err != nil {
		bad("PIXGATE_PSP_RETURNS_INTERVAL", "psp-returns-interval", "%v", err)
	}
	if s.DisputesEvery, err = positiveDuration(cmp.Or(c.PSPDisputesInterval, "5m")); err != nil {
		bad("PIXGATE_PSP_DISPUTES_INTERVAL", "psp-disputes-interval", "%v", err)
	}
}

func positiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration such as 24h", v)
	}
	return d, nil
}

// loopbackAddr reports whether hostport is host:port with host localhost or
// a loopback IP address.
func loopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	return err == nil && loopbackHost(host)
}

// loopbackHost reports whether host is localhost or a loopback IP address
// (127.0.0.0/8, ::1).
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
