package e2e

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// pspWebhookSecret is the <secret> of the webhook URL serve registers.
const pspWebhookSecret = "cli-test_webhook-SECRET-0123456789abcdef"

// pspRun is a simulated PSP and the environment that points `pixgate
// serve` at it with PIXGATE_PROVIDER=efi in production, on addr.
type pspRun struct {
	sim    *pspsim.Server
	env    map[string]string
	addr   string
	tokens *tokenLog
}

// tokenLog keeps the access tokens the simulator accepted.
type tokenLog struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (l *tokenLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.seen))
	for t := range l.seen {
		out = append(out, t)
	}
	return out
}

func startPSPSim(t *testing.T) *pspRun {
	t.Helper()
	tokens := &tokenLog{seen: map[string]bool{}}
	sim := pspsim.New(pspsim.Options{Wrap: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
				tokens.mu.Lock()
				tokens.seen[tok] = true
				tokens.mu.Unlock()
			}
			next.ServeHTTP(w, r)
		})
	}})
	require.NoError(t, sim.Start(t.Context()))
	t.Cleanup(sim.Close)
	opts := sim.Options()
	files, err := opts.PKI.WriteFiles(t.TempDir())
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return &pspRun{sim: sim, addr: addr, tokens: tokens, env: map[string]string{
		"PIXGATE_ENV":               "production",
		"PIXGATE_PROVIDER":          "efi",
		"PIXGATE_PSP_API_URL":       sim.URL(),
		"PIXGATE_PSP_CLIENT_ID":     opts.ClientID,
		"PIXGATE_PSP_CLIENT_SECRET": opts.ClientSecret,
		"PIXGATE_PSP_CERT_FILE":     files.ClientCert,
		"PIXGATE_PSP_KEY_FILE":      files.ClientKey,
		"PIXGATE_PSP_CA_FILE":       files.CA,
		"PIXGATE_PSP_PIX_KEY":       opts.PixKey,
		"PIXGATE_PSP_WEBHOOK_URL":   "http://" + addr + "/psp/webhook/" + pspWebhookSecret,
	}}
}

// command returns the pixgate binary running args with p's environment
// but for the variables in without, and no other PIXGATE_ variable.
func (p *pspRun) command(t *testing.T, dbURL string, without ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(buildPixgate(t), "serve", "--addr", p.addr, "--database-url", dbURL)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PIXGATE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range p.env {
		if !slices.Contains(without, k) {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	return cmd
}

// TestServeEfiRefusesMissingPSPSettings: without any one of the required
// PSP variables, serve stops at once with exit code 2 and one line naming
// it, opens no database, and prints no secret.
func TestServeEfiRefusesMissingPSPSettings(t *testing.T) {
	t.Parallel()
	p := startPSPSim(t)
	required := []string{"PIXGATE_PSP_API_URL", "PIXGATE_PSP_CLIENT_ID", "PIXGATE_PSP_CLIENT_SECRET", "PIXGATE_PSP_CERT_FILE",
		"PIXGATE_PSP_KEY_FILE", "PIXGATE_PSP_PIX_KEY", "PIXGATE_PSP_WEBHOOK_URL"}
	for _, env := range required {
		db := testkit.SQLiteURL(t)
		cmd := p.command(t, db, env)
		var stdout, stderr testkit.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%s unset: serve must stop; stderr:\n%s", env, stderr.String())
		require.Equal(t, 2, exit.ExitCode(), env)
		require.Empty(t, stdout.String(), env)
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		require.Len(t, lines, 1, "%s unset: one line; got:\n%s", env, stderr.String())
		require.Contains(t, lines[0], "invalid "+env+" (--", env)
		require.NotContains(t, stderr.String(), p.env["PIXGATE_PSP_CLIENT_SECRET"], env)
		require.NotContains(t, stderr.String(), pspWebhookSecret, env)
		require.NoFileExists(t, db, env)
	}
}

// TestServeEfiRegistersWebhook: serve with efi registers its webhook URL
// at start (PUT /webhook/{chave} with x-skip-mtls-checking: true), serves
// the PSP's notification at that URL + /pix, and never writes the PSP's
// client secret, an access token, the webhook secret or a private key to
// its output.
func TestServeEfiRegistersWebhook(t *testing.T) {
	t.Parallel()
	p := startPSPSim(t)
	db := testkit.SQLiteURL(t)
	code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja", "--env", "production")
	require.Equal(t, 0, code, errOut)
	c := testkit.DecodeOne(t, out, testkit.CredKeys...)

	cmd := p.command(t, db)
	proc := &proc{cmd: cmd, addr: p.addr, stdout: &testkit.Buffer{}, stderr: &testkit.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = proc.stdout, proc.stderr
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait(); close(proc.exited) }()
	t.Cleanup(proc.kill)
	waitFor(t, proc, "serve answers /healthz", func() bool {
		resp, err := http.Get("http://" + p.addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})

	webhookURL := p.env["PIXGATE_PSP_WEBHOOK_URL"]
	waitFor(t, proc, "the webhook is registered", func() bool { return p.sim.State().Webhook == webhookURL })
	require.True(t, p.sim.State().SkipMTLS, "efi registers with x-skip-mtls-checking: true")
	var puts int
	for _, r := range p.sim.Requests() {
		if r.Method == http.MethodPut && r.Path == "/v2/webhook/"+p.env["PIXGATE_PSP_PIX_KEY"] {
			puts++
			require.Equal(t, http.StatusOK, r.Status)
		}
	}
	require.Equal(t, 1, puts, "registered once")

	// A charge at the PSP, paid: the PSP's notification reaches serve at
	// the registered URL + /pix and is accepted.
	status, body := api(t, p.addr, c, "POST", "/api/v1/gateway/request-qrcode", charge("psp-1", 10))
	require.Equal(t, http.StatusCreated, status, "%v; stderr:\n%s", body, proc.stderr.String())
	cobs := p.sim.State().Cobs
	require.Len(t, cobs, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	_, err := p.sim.Pay(ctx, cobs[0].TxID)
	require.NoError(t, err)
	deliveries := p.sim.Deliveries()
	require.Len(t, deliveries, 1)
	require.Equal(t, webhookURL+"/pix", deliveries[0].URL)
	require.Equal(t, http.StatusOK, deliveries[0].Status, "%+v; stderr:\n%s", deliveries[0], proc.stderr.String())

	proc.kill()
	output := proc.stdout.String() + proc.stderr.String()
	require.Contains(t, output, `"msg":"listening"`)
	require.NotContains(t, output, p.env["PIXGATE_PSP_CLIENT_SECRET"])
	require.NotContains(t, output, pspWebhookSecret)
	require.NotContains(t, output, "PRIVATE KEY")
	tokens := p.tokens.all()
	require.NotEmpty(t, tokens, "serve called the PSP with a token")
	for _, tok := range tokens {
		require.NotContains(t, output, tok)
	}
}

// waitFor polls cond until it holds, failing if serve exits first or it
// does not hold within 20 s.
func waitFor(t *testing.T, p *proc, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		select {
		case <-p.exited:
			t.Fatalf("serve exited before %s; stderr:\n%s", what, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "%s: not within 20 s; stderr:\n%s", what, p.stderr.String())
	}
}
