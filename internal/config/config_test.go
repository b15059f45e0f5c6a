package config

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func defaults() Config {
	return Config{Addr: "127.0.0.1:8080", Env: "sandbox", DatabaseURL: "./data/pixgate.db", RateLimit: "100",
		PixKey: "pix@pixgate.dev", MerchantName: "PIXGATE", MerchantCity: "SAO PAULO", ChargeTTL: "24h",
		SandboxPayoutDelay: "2s", WebhookRetrySchedule: "5s,5m,30m,2h,5h,10h,10h", LogLevel: "info"}
}

func TestValidateDefaults(t *testing.T) {
	t.Parallel()
	s, err := defaults().Validate()
	require.NoError(t, err)
	require.False(t, s.Postgres)
	require.Equal(t, 100, s.RateLimitN)
	require.Equal(t, 24*time.Hour, s.ChargeTTLD)
	require.Equal(t, 2*time.Second, s.PayoutDelay)
	require.Len(t, s.RetrySchedule, 7)
	require.True(t, s.AllowPrivateWebhook, "sandbox allows private webhooks by default")
	p := defaults()
	p.Env, p.DatabaseURL = "production", "postgres://u@h/db"
	s, err = p.Validate()
	require.NoError(t, err)
	require.True(t, s.Postgres)
	require.False(t, s.AllowPrivateWebhook)
}

func TestValidateNamesEachBadSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env    string
		mutate func(*Config)
	}{
		{"PIXGATE_ADDR", func(c *Config) { c.Addr = "nope" }},
		{"PIXGATE_ENV", func(c *Config) { c.Env = "staging" }},
		{"PIXGATE_DATABASE_URL", func(c *Config) { c.DatabaseURL = "mysql://x" }},
		{"PIXGATE_REDIS_URL", func(c *Config) { c.RedisURL = "http://x" }},
		{"PIXGATE_RATE_LIMIT", func(c *Config) { c.RateLimit = "0" }},
		{"PIXGATE_RATE_LIMIT", func(c *Config) { c.RateLimit = "ten" }},
		{"PIXGATE_PIX_KEY", func(c *Config) { c.PixKey = "not a key" }},
		{"PIXGATE_MERCHANT_NAME", func(c *Config) { c.MerchantName = " " }},
		{"PIXGATE_MERCHANT_CITY", func(c *Config) { c.MerchantCity = "\t" }}, // blank; empty means unset
		{"PIXGATE_CHARGE_TTL", func(c *Config) { c.ChargeTTL = "soon" }},
		{"PIXGATE_CHARGE_TTL", func(c *Config) { c.ChargeTTL = "-1h" }},
		{"PIXGATE_SANDBOX_PAYOUT_DELAY", func(c *Config) { c.SandboxPayoutDelay = "x" }},
		{"PIXGATE_WEBHOOK_RETRY_SCHEDULE", func(c *Config) { c.WebhookRetrySchedule = "5s,,5m" }},
		{"PIXGATE_WEBHOOK_ALLOW_PRIVATE", func(c *Config) { c.WebhookAllowPrivate = "maybe" }},
		{"PIXGATE_TLS_CERT", func(c *Config) { c.TLSCert = "cert.pem" }},
		{"PIXGATE_LOG_LEVEL", func(c *Config) { c.LogLevel = "loud" }},
	} {
		c := defaults()
		tc.mutate(&c)
		_, err := c.Validate()
		require.Error(t, err, tc.env)
		lines := strings.Split(err.Error(), "\n")
		require.Len(t, lines, 1, "one line per problem")
		require.Contains(t, lines[0], tc.env)
	}
	c := defaults()
	c.Env, c.RateLimit = "x", "y"
	_, err := c.Validate()
	require.Len(t, strings.Split(err.Error(), "\n"), 2, "every problem is listed")
}

// TestSandboxFillsDefaults: unset, the provider and the BR Code's receiving
// side take sandbox values in sandbox only; production keeps them empty so
// that ValidateServe can refuse to start.
func TestSandboxFillsDefaults(t *testing.T) {
	t.Parallel()
	c := defaults()
	c.PixKey, c.MerchantName, c.MerchantCity = "", "", ""
	s, err := c.Validate()
	require.NoError(t, err)
	require.Equal(t, ProviderSandbox, s.Provider)
	require.Equal(t, "pix@pixgate.dev", s.PixKey)
	require.Equal(t, "PIXGATE SANDBOX", s.MerchantName)
	require.Equal(t, "SAO PAULO", s.MerchantCity)
	require.NoError(t, s.ValidateServe())

	c.Env = Production
	s, err = c.Validate()
	require.NoError(t, err, "other commands run without them")
	require.Empty(t, s.Provider)
	require.Empty(t, s.PixKey)
	require.Empty(t, s.MerchantName)
	require.Empty(t, s.MerchantCity)
}

func TestValidateServe(t *testing.T) {
	t.Parallel()
	prod := defaults()
	prod.Env, prod.Provider = Production, ProviderSandbox
	for _, tc := range []struct {
		mutate func(*Config)
		lines  []string // the settings named, one per line; none: serve starts
	}{
		{func(*Config) {}, nil},
		{func(c *Config) { c.Provider = "" }, []string{"PIXGATE_PROVIDER"}},
		{func(c *Config) { c.Provider = ProviderAPIPix }, []string{"PIXGATE_PROVIDER"}},
		{func(c *Config) { c.Provider = ProviderEfi }, []string{"PIXGATE_PROVIDER"}},
		{func(c *Config) { c.PixKey = "" }, []string{"PIXGATE_PIX_KEY"}},
		{func(c *Config) { c.MerchantName = "" }, []string{"PIXGATE_MERCHANT_NAME"}},
		{func(c *Config) { c.MerchantCity = "" }, []string{"PIXGATE_MERCHANT_CITY"}},
		{func(c *Config) { c.PixKey, c.MerchantCity = "", "" }, []string{"PIXGATE_PIX_KEY", "PIXGATE_MERCHANT_CITY"}},
		{func(c *Config) { c.Env = Sandbox; c.Provider = ProviderEfi }, []string{"PIXGATE_PROVIDER"}},
	} {
		c := prod
		tc.mutate(&c)
		s, err := c.Validate()
		require.NoError(t, err)
		err = s.ValidateServe()
		if tc.lines == nil {
			require.NoError(t, err)
			continue
		}
		require.Error(t, err)
		lines := strings.Split(err.Error(), "\n")
		require.Len(t, lines, len(tc.lines), err.Error())
		for i, env := range tc.lines {
			require.Contains(t, lines[i], env)
		}
	}
	c := prod
	c.Provider = "bank"
	_, err := c.Validate()
	require.ErrorContains(t, err, "PIXGATE_PROVIDER")
}
