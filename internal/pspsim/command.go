package pspsim

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
)

// CommandConfig configures Run, the body of `pixgate psp-sim`.
type CommandConfig struct {
	// Addr and ControlAddr are where the API (mutual TLS) and the control
	// API (plain HTTP) listen.
	Addr, ControlAddr string
	// Dir receives the PEM files; a new temporary directory when empty.
	Dir string
	// PixKey, ClientID and ClientSecret: generated when empty.
	PixKey, ClientID, ClientSecret string
	// SettleDelay: see Options.SettleDelay.
	SettleDelay time.Duration
	// Latency and LatencyJitter: see Options.Latency.
	Latency, LatencyJitter time.Duration
	// RateLimit: see Options.RateLimit.
	RateLimit int
	// WebhookBase is the origin of pixgate in the hint for
	// PIXGATE_PSP_WEBHOOK_URL; default "http://127.0.0.1:8080".
	WebhookBase string
	Log         *slog.Logger
}

// Run writes a new PKI into c.Dir, starts a simulator, prints once to
// stdout the environment that points pixgate at it, and serves until ctx
// ends.
func Run(ctx context.Context, c CommandConfig, stdout io.Writer) error {
	dir := c.Dir
	var err error
	if dir == "" {
		if dir, err = os.MkdirTemp("", "pixgate-psp-sim-"); err != nil {
			return fmt.Errorf("psp-sim: %w", err)
		}
	} else if err = os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("psp-sim: %w", err)
	}
	pki, err := NewPKI(365 * 24 * time.Hour)
	if err != nil {
		return fmt.Errorf("psp-sim: %w", err)
	}
	files, err := pki.WriteFiles(dir)
	if err != nil {
		return fmt.Errorf("psp-sim: %w", err)
	}
	s := New(Options{PKI: pki, Addr: c.Addr, ControlAddr: c.ControlAddr, PixKey: c.PixKey,
		ClientID: c.ClientID, ClientSecret: c.ClientSecret, SettleDelay: c.SettleDelay, Latency: c.Latency, LatencyJitter: c.LatencyJitter, RateLimit: c.RateLimit, Log: c.Log})
	if err := s.Start(ctx); err != nil {
		return fmt.Errorf("psp-sim: %w", err)
	}
	defer s.Close()
	o := s.Options()
	base := c.WebhookBase
	if base == "" {
		base = "http://127.0.0.1:8080"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# pixgate psp-sim: a simulated PSP (API Pix v2 and Efí's Pix send) at %s\n", s.URL())
	if u := s.ControlURL(); u != "" {
		fmt.Fprintf(&b, "# control API: %s (POST /sim/pay/{txid}, POST /sim/paycobv, POST /sim/pix/{e2eid}/med, POST /sim/infracoes, POST /sim/faults, POST /sim/settle, GET /sim/state)\n", u)
	}
	b.WriteString("# Run pixgate against it with this environment:\n")
	for _, kv := range [][2]string{
		{"PIXGATE_ENV", pix.EnvProduction}, // a PSP provider never runs on the sandbox default
		{"PIXGATE_PROVIDER", provider.NameEfi},
		{"PIXGATE_PSP_API_URL", s.URL()},
		{"PIXGATE_PSP_CLIENT_ID", o.ClientID},
		{"PIXGATE_PSP_CLIENT_SECRET", o.ClientSecret},
		{"PIXGATE_PSP_CERT_FILE", files.ClientCert},
		{"PIXGATE_PSP_KEY_FILE", files.ClientKey},
		{"PIXGATE_PSP_CA_FILE", files.CA},
		{"PIXGATE_PSP_PIX_KEY", o.PixKey},
	} {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], shellQuote(kv[1]))
	}
	fmt.Fprintf(&b, "# and where the simulator reaches pixgate, at %s (psp-sim's --addr or PIXGATE_ADDR: serve's address), with a secret of 32 or more of [A-Za-z0-9_-] you keep:\n", base)
	fmt.Fprintf(&b, "export PIXGATE_PSP_WEBHOOK_URL=%s\n", shellQuote(base+"/psp/webhook/"+randomAlnum(40)))
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return fmt.Errorf("psp-sim: %w", err)
	}
	<-ctx.Done()
	return nil
}

// shellQuote quotes v for a POSIX shell when it holds anything but plain
// characters.
func shellQuote(v string) string {
	plain := v != ""
	for _, c := range v {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("-_./:@+=,", c)) {
			plain = false
			break
		}
	}
	if plain {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}
