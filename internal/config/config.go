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
)

// Environments.
const (
	Sandbox    = "sandbox"
	Production = "production"
)

// Providers: which PIX network moves the money (PIXGATE_PROVIDER).
const (
	ProviderSandbox = "sandbox"
	ProviderAPIPix  = "apipix"
	ProviderEfi     = "efi"
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
	Env                  string `name:"env" env:"PIXGATE_ENV" default:"sandbox" help:"sandbox or production."`
	DatabaseURL          string `name:"database-url" env:"PIXGATE_DATABASE_URL" default:"./data/pixgate.db" help:"SQLite file path or sqlite://…, or postgres://…"`
	RedisURL             string `name:"redis-url" env:"PIXGATE_REDIS_URL" help:"Redis for shared rate limits (redis://, rediss://, unix://)."`
	RateLimit            string `name:"rate-limit" env:"PIXGATE_RATE_LIMIT" default:"100" help:"Requests per rolling 60 s per client."`
	Provider             string `name:"provider" env:"PIXGATE_PROVIDER" help:"PIX network: sandbox (simulated), apipix or efi (default: sandbox in sandbox; required in production)."`
	PixKey               string `name:"pix-key" env:"PIXGATE_PIX_KEY" help:"Receiving PIX key written into BR Codes (default in sandbox: pix@pixgate.dev; required in production)."`
	MerchantName         string `name:"merchant-name" env:"PIXGATE_MERCHANT_NAME" help:"Merchant name in BR Codes, 25 characters kept (default in sandbox: PIXGATE SANDBOX; required in production)."`
	MerchantCity         string `name:"merchant-city" env:"PIXGATE_MERCHANT_CITY" help:"Merchant city in BR Codes, 15 characters kept (default in sandbox: SAO PAULO; required in production)."`
	ChargeTTL            string `name:"charge-ttl" env:"PIXGATE_CHARGE_TTL" default:"24h" help:"A charge not paid by then becomes CANCELLED."`
	SandboxPayoutDelay   string `name:"sandbox-payout-delay" env:"PIXGATE_SANDBOX_PAYOUT_DELAY" default:"2s" help:"Sandbox: time until a payout or refund settles."`
	WebhookRetrySchedule string `name:"webhook-retry-schedule" env:"PIXGATE_WEBHOOK_RETRY_SCHEDULE" default:"5s,5m,30m,2h,5h,10h,10h" help:"Waits between webhook attempts after the first."`
	WebhookAllowPrivate  string `name:"webhook-allow-private" env:"PIXGATE_WEBHOOK_ALLOW_PRIVATE" help:"Allow webhook URLs that resolve to private addresses (default: true in sandbox, false in production)."`
	TLSCert              string `name:"tls-cert" env:"PIXGATE_TLS_CERT" help:"TLS certificate file (PEM)."`
	TLSKey               string `name:"tls-key" env:"PIXGATE_TLS_KEY" help:"TLS private key file (PEM)."`
	LogLevel             string `name:"log-level" env:"PIXGATE_LOG_LEVEL" default:"info" help:"debug, info, warn or error."`
}

// Settings is a validated Config with its values parsed.
type Settings struct {
	Config
	Postgres            bool
	RateLimitN          int
	ChargeTTLD          time.Duration
	PayoutDelay         time.Duration
	RetrySchedule       []time.Duration
	AllowPrivateWebhook bool
}

// Sandbox reports whether this is the sandbox environment.
func (s Settings) Sandbox() bool { return s.Env == Sandbox }

// Validate parses every setting and returns all problems at once, each one
// line naming its environment variable and flag.
func (c Config) Validate() (Settings, error) {
	s := Settings{Config: c}
	var errs []error
	bad := func(env, flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("invalid %s (--%s): %s", env, flag, fmt.Sprintf(format, args...)))
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("PIXGATE_ADDR", "addr", "%q is not host:port", c.Addr)
	}
	if c.Env != Sandbox && c.Env != Production {
		bad("PIXGATE_ENV", "env", "%q must be sandbox or production", c.Env)
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
	if c.Env == Sandbox {
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
	if k := s.PixKey; k != "" && !(pix.ValidPixKey(pix.KeyEmail, k) || pix.ValidPixKey(pix.KeyEVP, k) ||
		pix.ValidPixKey(pix.KeyPhone, k) || pix.ValidPixKey(pix.KeyCPF, k) || pix.ValidPixKey(pix.KeyCNPJ, k)) {
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
		s.AllowPrivateWebhook = c.Env == Sandbox
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
	if len(errs) > 0 {
		return Settings{}, errors.Join(errs...)
	}
	return s, nil
}

// ValidateServe returns what stops serve (and only serve: other commands
// write no BR Code and move no money) from starting, one line per setting:
// in production PIXGATE_PROVIDER must be set, to a provider this build has,
// and with provider sandbox (pixgate writes the BR Codes itself) the
// receiving key and merchant name and city must be set explicitly, so that
// no sandbox default ever reaches a payer (CONTRACT §1, §4a). Only the
// sandbox provider exists in this build; apipix and efi stop serve in every
// environment rather than run on the simulator under a real PSP's name.
func (s Settings) ValidateServe() error {
	var errs []error
	bad := func(env, flag, format string, args ...any) {
		errs = append(errs, fmt.Errorf("invalid %s (--%s): %s", env, flag, fmt.Sprintf(format, args...)))
	}
	switch s.Provider {
	case "":
		bad("PIXGATE_PROVIDER", "provider", "must be set in production (sandbox, apipix or efi)")
	case ProviderAPIPix, ProviderEfi:
		bad("PIXGATE_PROVIDER", "provider", "%q is not available in this build (only sandbox is)", s.Provider)
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

func positiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration such as 24h", v)
	}
	return d, nil
}
