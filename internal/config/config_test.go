package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

func defaults() Config {
	return Config{Addr: "127.0.0.1:8080", Env: "sandbox", DatabaseURL: "./data/pixgate.db", RateLimit: "100",
		PixKey: "pix@pixgate.dev", MerchantName: "PIXGATE", MerchantCity: "SAO PAULO", ChargeTTL: "24h",
		SandboxPayoutDelay: "2s", WebhookRetrySchedule: "5s,5m,30m,2h,5h,10h,10h", LogLevel: "info", PSPUnmatched: "return"}
}

func TestValidateDefaults(t *testing.T) {
	t.Parallel()
	s, err := defaults().Validate()
	require.NoError(t, err)
	require.False(t, s.Postgres)
	require.Equal(t, 100, s.RateLimitN)
	require.Equal(t, 24*time.Hour, s.ChargeTTLD)
	require.Equal(t, 10*time.Minute, s.ReturnsEvery)
	require.Equal(t, 5*time.Minute, s.DisputesEvery)
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
		{"PIXGATE_PSP_UNMATCHED", func(c *Config) { c.PSPUnmatched = "keep" }},
		{"PIXGATE_PSP_RETURNS_INTERVAL", func(c *Config) { c.PSPReturnsInterval = "0s" }},
		{"PIXGATE_PSP_DISPUTES_INTERVAL", func(c *Config) { c.PSPDisputesInterval = "often" }},
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
		{func(c *Config) { c.PixKey = "" }, []string{"PIXGATE_PIX_KEY"}},
		{func(c *Config) { c.MerchantName = "" }, []string{"PIXGATE_MERCHANT_NAME"}},
		{func(c *Config) { c.MerchantCity = "" }, []string{"PIXGATE_MERCHANT_CITY"}},
		{func(c *Config) { c.PixKey, c.MerchantCity = "", "" }, []string{"PIXGATE_PIX_KEY", "PIXGATE_MERCHANT_CITY"}},
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

// pspFiles writes a client certificate and its key, a second key that does
// not match it, a CA bundle and a file that is no PEM, and returns a
// production configuration with provider efi that serve accepts.
func pspFiles(t *testing.T) (Config, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	a, b := testkit.SelfSignedTLS(t), testkit.SelfSignedTLS(t)
	files := map[string]string{}
	for name, data := range map[string][]byte{
		"cert.pem": a.CertPEM, "key.pem": a.KeyPEM, "other-key.pem": b.KeyPEM, "ca.pem": b.CertPEM,
		"junk.pem": []byte("not a PEM file\n"),
	} {
		files[name] = filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(files[name], data, 0o600))
	}
	files["missing.pem"] = filepath.Join(dir, "missing.pem")
	c := defaults()
	c.Env, c.Provider = Production, ProviderEfi
	c.PixKey, c.MerchantName, c.MerchantCity = "", "", ""
	c.PSPAPIURL = "https://pix.example.com/v2"
	c.PSPClientID, c.PSPClientSecret = "Client_Id_1", "Client_Secret_do-not-print"
	c.PSPCertFile, c.PSPKeyFile, c.PSPCAFile = files["cert.pem"], files["key.pem"], files["ca.pem"]
	c.PSPPixKey = "recebimentos@example.com"
	c.PSPWebhookURL = "https://pixgate.example.com/hooks/psp/webhook/" + testSecret
	return c, files
}

// testSecret is a webhook secret of the required form (32 characters).
const testSecret = "s3cr3t-Webhook_path-0123456789ab"

// TestValidateServePSP: with apipix or efi, every PIXGATE_PSP_* rule stops
// serve with one line naming its setting, never quoting the client secret,
// the webhook secret or a file's contents; a good configuration carries
// the files' bytes and the webhook secret to serve.
func TestValidateServePSP(t *testing.T) {
	t.Parallel()
	good, files := pspFiles(t)
	s, err := good.Validate()
	require.NoError(t, err)
	require.NoError(t, s.ValidateServe())
	a, err := os.ReadFile(files["cert.pem"])
	require.NoError(t, err)
	k, err := os.ReadFile(files["key.pem"])
	require.NoError(t, err)
	ca, err := os.ReadFile(files["ca.pem"])
	require.NoError(t, err)
	require.Equal(t, a, s.CertPEM)
	require.Equal(t, k, s.KeyPEM)
	require.Equal(t, ca, s.CAPEM)
	require.Equal(t, testSecret, s.PSPWebhookSecret)
	require.Equal(t, "https://pix.example.com/oauth/token", s.PSPTokenURL, "default: the API URL's origin")

	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		lines  []string // the settings named, one per line; none: serve starts
	}{
		{"apipix", func(c *Config) { c.Provider = ProviderAPIPix }, nil},
		{"sandbox env", func(c *Config) { c.Env = Sandbox }, nil},
		{"no CA: system roots", func(c *Config) { c.PSPCAFile = "" }, nil},
		{"token URL set", func(c *Config) { c.PSPTokenURL = "https://auth.example.com/oauth/token" }, nil},
		{"http webhook on loopback", func(c *Config) { c.PSPWebhookURL = "http://127.0.0.1:8080/psp/webhook/" + testSecret }, nil},
		{"http webhook in sandbox", func(c *Config) {
			c.Env, c.PSPWebhookURL = Sandbox, "http://10.0.0.1:8080/psp/webhook/"+testSecret
		}, nil},
		{"http webhook in production", func(c *Config) { c.PSPWebhookURL = "http://10.0.0.1:8080/psp/webhook/" + testSecret }, []string{"PIXGATE_PSP_WEBHOOK_URL"}},
		{"long secret", func(c *Config) { c.PSPWebhookURL = "https://h/psp/webhook/" + testSecret + testSecret }, nil},

		{"API URL missing", func(c *Config) { c.PSPAPIURL = "" }, []string{"PIXGATE_PSP_API_URL"}},
		{"API URL http", func(c *Config) { c.PSPAPIURL = "http://127.0.0.1/v2" }, []string{"PIXGATE_PSP_API_URL"}},
		{"API URL relative", func(c *Config) { c.PSPAPIURL = "pix.example.com/v2" }, []string{"PIXGATE_PSP_API_URL"}},
		{"API URL query", func(c *Config) { c.PSPAPIURL = "https://pix.example.com/v2?x=1" }, []string{"PIXGATE_PSP_API_URL"}},
		{"token URL http", func(c *Config) { c.PSPTokenURL = "http://pix.example.com/oauth/token" }, []string{"PIXGATE_PSP_TOKEN_URL"}},
		{"client id missing", func(c *Config) { c.PSPClientID = "" }, []string{"PIXGATE_PSP_CLIENT_ID"}},
		{"client secret missing", func(c *Config) { c.PSPClientSecret = "" }, []string{"PIXGATE_PSP_CLIENT_SECRET"}},
		{"cert missing", func(c *Config) { c.PSPCertFile = "" }, []string{"PIXGATE_PSP_CERT_FILE"}},
		{"cert unreadable", func(c *Config) { c.PSPCertFile = files["missing.pem"] }, []string{"PIXGATE_PSP_CERT_FILE"}},
		{"cert not PEM", func(c *Config) { c.PSPCertFile = files["junk.pem"] }, []string{"PIXGATE_PSP_CERT_FILE"}},
		{"cert is a key", func(c *Config) { c.PSPCertFile = files["key.pem"] }, []string{"PIXGATE_PSP_CERT_FILE"}},
		{"key missing", func(c *Config) { c.PSPKeyFile = "" }, []string{"PIXGATE_PSP_KEY_FILE"}},
		{"key unreadable", func(c *Config) { c.PSPKeyFile = files["missing.pem"] }, []string{"PIXGATE_PSP_KEY_FILE"}},
		{"key not PEM", func(c *Config) { c.PSPKeyFile = files["junk.pem"] }, []string{"PIXGATE_PSP_KEY_FILE"}},
		{"key is a cert", func(c *Config) { c.PSPKeyFile = files["cert.pem"] }, []string{"PIXGATE_PSP_KEY_FILE"}},
		{"key of another cert", func(c *Config) { c.PSPKeyFile = files["other-key.pem"] }, []string{"PIXGATE_PSP_KEY_FILE"}},
		{"CA unreadable", func(c *Config) { c.PSPCAFile = files["missing.pem"] }, []string{"PIXGATE_PSP_CA_FILE"}},
		{"CA not PEM", func(c *Config) { c.PSPCAFile = files["junk.pem"] }, []string{"PIXGATE_PSP_CA_FILE"}},
		{"CA is a key", func(c *Config) { c.PSPCAFile = files["key.pem"] }, []string{"PIXGATE_PSP_CA_FILE"}},
		{"pix key missing", func(c *Config) { c.PSPPixKey = "" }, []string{"PIXGATE_PSP_PIX_KEY"}},
		{"pix key invalid", func(c *Config) { c.PSPPixKey = "12345678900" }, []string{"PIXGATE_PSP_PIX_KEY"}},
		{"webhook missing", func(c *Config) { c.PSPWebhookURL = "" }, []string{"PIXGATE_PSP_WEBHOOK_URL"}},
		{"webhook relative", func(c *Config) { c.PSPWebhookURL = "/psp/webhook/" + testSecret }, []string{"PIXGATE_PSP_WEBHOOK_URL"}},
		{"webhook ftp", func(c *Config) { c.PSPWebhookURL = "ftp://h/psp/webhook/" + testSecret }, []string{"PIXGATE_PSP_WEBHOOK_URL"}},
		{"webhook short secret", func(c *Config) { c.PSPWebhookURL = "https://h/psp/webhook/" + testSecret[1:] }, []string{"PIXGATE_PSP_WEBHOOK_URL"}},
		{"webhook secret charset", func(c *Config) { c.PSPWebhookURL = "https://h/psp/webhook/" + testSecret[1:] + "." }, []string{"PIXGATE_PSP_WEBHOOK_URL"}},
		{"webhook trailing slash", func(c *Config) { c.PSPWebhookURL = "https://h/psp/webhook/" + testSecret + "/" }, []string{"PIXGATE_PSP_WEBHOOK_URL"}},
		{"webhook wrong path", func(c *Config) { c.PSPWebhookURL = "https://h/webhook/" + testSecret }, []string{"PIXGATE_PSP_WEBHOOK_URL"}},
		{"webhook query", func(c *Config) { c.PSPWebhookURL = "https://h/psp/webhook/" + testSecret + "?ignorar=" }, []string{"PIXGATE_PSP_WEBHOOK_URL"}},
		{"every one missing", func(c *Config) {
			c.PSPAPIURL, c.PSPClientID, c.PSPClientSecret, c.PSPCertFile, c.PSPKeyFile = "", "", "", "", ""
			c.PSPCAFile, c.PSPPixKey, c.PSPWebhookURL = "", "", ""
		}, []string{"PIXGATE_PSP_API_URL", "PIXGATE_PSP_CLIENT_ID", "PIXGATE_PSP_CLIENT_SECRET", "PIXGATE_PSP_CERT_FILE",
			"PIXGATE_PSP_KEY_FILE", "PIXGATE_PSP_PIX_KEY", "PIXGATE_PSP_WEBHOOK_URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := good
			tc.mutate(&c)
			s, err := c.Validate()
			require.NoError(t, err, "other commands run without them")
			err = s.ValidateServe()
			if tc.lines == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			lines := strings.Split(err.Error(), "\n")
			require.Len(t, lines, len(tc.lines), err.Error())
			for i, env := range tc.lines {
				require.Contains(t, lines[i], env)
				require.Regexp(t, `^invalid `+env+` \(--[a-z-]+\): `, lines[i])
			}
			require.NotContains(t, err.Error(), good.PSPClientSecret)
			require.NotContains(t, err.Error(), testSecret[1:20], "no part of the webhook secret")
			require.NotContains(t, err.Error(), "BEGIN", "no file contents")
		})
	}
}

// TestPSPSettingsAreFlagsAndVariables: every PSP setting is read from its
// PIXGATE_PSP_* variable and from the flag of the same name.
func TestPSPSettingsAreFlagsAndVariables(t *testing.T) {
	t.Parallel()
	got := map[string]string{}
	typ := reflect.TypeFor[Config]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		got[f.Tag.Get("env")] = f.Tag.Get("name")
	}
	for _, env := range []string{"PIXGATE_PSP_API_URL", "PIXGATE_PSP_TOKEN_URL", "PIXGATE_PSP_CLIENT_ID", "PIXGATE_PSP_CLIENT_SECRET",
		"PIXGATE_PSP_CERT_FILE", "PIXGATE_PSP_KEY_FILE", "PIXGATE_PSP_CA_FILE", "PIXGATE_PSP_PIX_KEY", "PIXGATE_PSP_WEBHOOK_URL"} {
		want := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "PIXGATE_")), "_", "-")
		require.Equal(t, want, got[env], env)
	}
}
