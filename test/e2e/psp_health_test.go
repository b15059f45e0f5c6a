package e2e

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// pspRunWith is startPSPSim with the simulator's certificates made by pki.
func pspRunWith(t *testing.T, pki *pspsim.PKI) *pspRun {
	t.Helper()
	sim := pspsim.New(pspsim.Options{PKI: pki})
	require.NoError(t, sim.Start(t.Context()))
	t.Cleanup(sim.Close)
	opts := sim.Options()
	files, err := pki.WriteFiles(t.TempDir())
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return &pspRun{sim: sim, addr: addr, tokens: &tokenLog{seen: map[string]bool{}}, env: map[string]string{
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

// refused runs cmd, which must stop at once with exit code 2 and one line
// on stderr, and returns that line.
func refused(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var stdout, stderr testkit.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "serve must stop; stderr:\n%s", stderr.String())
	require.Equal(t, 2, exit.ExitCode())
	require.Empty(t, stdout.String())
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	require.Len(t, lines, 1, "one line; got:\n%s", stderr.String())
	require.NotContains(t, stderr.String(), pspWebhookSecret)
	return lines[0]
}

// startPSPProc starts the binary of cmd and waits until it answers
// /healthz.
func startPSPProc(t *testing.T, p *pspRun, cmd *exec.Cmd) *proc {
	t.Helper()
	pr := &proc{cmd: cmd, addr: p.addr, stdout: &testkit.Buffer{}, stderr: &testkit.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = pr.stdout, pr.stderr
	require.NoError(t, cmd.Start())
	go func() { _ = cmd.Wait(); close(pr.exited) }()
	t.Cleanup(pr.kill)
	waitFor(t, pr, "serve answers /healthz", func() bool {
		resp, err := http.Get("http://" + p.addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return pr
}

// TestServePSPNeedsEnv: with a PSP provider and every PIXGATE_PSP_*
// setting but PIXGATE_ENV unset, serve refuses to start with one line
// naming PIXGATE_ENV, and opens no database.
func TestServePSPNeedsEnv(t *testing.T) {
	t.Parallel()
	p := startPSPSim(t)
	for _, prov := range []string{"efi", "apipix"} {
		p.env["PIXGATE_PROVIDER"] = prov
		db := testkit.SQLiteURL(t)
		line := refused(t, p.command(t, db, "PIXGATE_ENV"))
		require.Equal(t, "pixgate: invalid PIXGATE_ENV (--env): must be set with PIXGATE_PROVIDER="+prov+
			": production for real money, sandbox only for the PSP's own test environment", line)
		require.NoFileExists(t, db)
	}
}

// TestServeSandboxPSPWarns: PIXGATE_ENV=sandbox with a PSP provider (a
// PSP's test environment) starts, with a warning at every start that says
// so and which sandbox rules apply.
func TestServeSandboxPSPWarns(t *testing.T) {
	t.Parallel()
	p := startPSPSim(t)
	p.env["PIXGATE_ENV"] = "sandbox"
	db := testkit.SQLiteURL(t)
	for start := range 2 {
		pr := startPSPProc(t, p, p.command(t, db))
		waitFor(t, pr, "the listening line", func() bool { return strings.Contains(pr.stderr.String(), `"msg":"listening"`) })
		pr.kill()
		var warned bool
		for line := range strings.Lines(pr.stderr.String()) {
			var e struct{ Level, Msg string }
			if json.Unmarshal([]byte(line), &e) == nil && strings.HasPrefix(e.Msg, "PIXGATE_ENV=sandbox with PIXGATE_PROVIDER=efi") {
				require.Equal(t, "WARN", e.Level)
				require.Contains(t, e.Msg, "only for a PSP's test environment (such as Efí's homologação)")
				require.Contains(t, e.Msg, "may resolve to private addresses")
				warned = true
			}
		}
		require.True(t, warned, "start %d: no warning; stderr:\n%s", start+1, pr.stderr.String())
	}
}

// TestServePSPWebhookURLMustBeHTTPS: in production an http webhook URL on
// a public host stops serve with one line naming it, without its secret;
// on loopback it is accepted (startPSPSim's URL is http://127.0.0.1:…).
func TestServePSPWebhookURLMustBeHTTPS(t *testing.T) {
	t.Parallel()
	p := startPSPSim(t)
	p.env["PIXGATE_PSP_WEBHOOK_URL"] = "http://pixgate.example.com/psp/webhook/" + pspWebhookSecret
	db := testkit.SQLiteURL(t)
	line := refused(t, p.command(t, db))
	require.Equal(t, "pixgate: invalid PIXGATE_PSP_WEBHOOK_URL (--psp-webhook-url): must be an https URL in production (http only for a loopback host such as 127.0.0.1)", line)
	require.NoFileExists(t, db)
}

// TestServeRefusesExpiredPSPCertificate: an expired client certificate
// stops serve with one line naming the setting and the file.
func TestServeRefusesExpiredPSPCertificate(t *testing.T) {
	t.Parallel()
	p := startPSPSim(t)
	expired, err := pspsim.NewPKI(-time.Minute)
	require.NoError(t, err)
	files, err := expired.WriteFiles(t.TempDir())
	require.NoError(t, err)
	p.env["PIXGATE_PSP_CERT_FILE"], p.env["PIXGATE_PSP_KEY_FILE"] = files.ClientCert, files.ClientKey
	db := testkit.SQLiteURL(t)
	line := refused(t, p.command(t, db))
	require.True(t, strings.HasPrefix(line, "pixgate: invalid PIXGATE_PSP_CERT_FILE (--psp-cert-file): "+files.ClientCert+" expired at "), line)
	require.NoFileExists(t, db)
}

// metricValue scrapes addr's /metrics and returns the value of series, or
// "" when absent.
func metricValue(t *testing.T, addr, series string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			return v
		}
	}
	return ""
}

// TestServePSPHealthMetrics: a client certificate that expires within 30
// days starts with a warning; /metrics shows its expiry, the webhook
// registration read back as ours, and pixgate_psp_up following the last
// call (0 after a failed one, 1 after one answered).
func TestServePSPHealthMetrics(t *testing.T) {
	t.Parallel()
	pki, err := pspsim.NewPKI(10 * 24 * time.Hour)
	require.NoError(t, err)
	p := pspRunWith(t, pki)
	db := testkit.SQLiteURL(t)
	code, out, errOut := run(t, "clients", "create", "--database-url", db, "--name", "Loja", "--env", "production")
	require.Equal(t, 0, code, errOut)
	c := testkit.DecodeOne(t, out, testkit.CredKeys...)
	pr := startPSPProc(t, p, p.command(t, db))

	waitFor(t, pr, "the expiry warning", func() bool {
		return strings.Contains(pr.stderr.String(), `"msg":"the PSP client certificate expires soon: renew it with the PSP before then"`)
	})
	require.Contains(t, pr.stderr.String(), `"file":"`+p.env["PIXGATE_PSP_CERT_FILE"]+`"`)
	require.Equal(t, strconv.FormatFloat(float64(pki.Client.Leaf.NotAfter.Unix()), 'g', -1, 64),
		metricValue(t, p.addr, "pixgate_psp_certificate_expiry_timestamp_seconds"))
	waitFor(t, pr, "the webhook read back as ours", func() bool {
		return metricValue(t, p.addr, "pixgate_psp_webhook_registered") == "1"
	})
	require.Contains(t, pr.stderr.String(), `"msg":"the PSP's webhook registration is this deployment's"`)
	require.Equal(t, "1", metricValue(t, p.addr, "pixgate_psp_up"))

	p.sim.SetDown(true)
	status, body := api(t, p.addr, c, "POST", "/api/v1/gateway/request-qrcode", charge("health-1", 10))
	require.Equal(t, http.StatusBadGateway, status, "%v", body)
	require.Equal(t, "0", metricValue(t, p.addr, "pixgate_psp_up"))
	p.sim.SetDown(false)
	status, body = api(t, p.addr, c, "POST", "/api/v1/gateway/request-qrcode", charge("health-2", 10))
	require.Equal(t, http.StatusCreated, status, "%v", body)
	require.Equal(t, "1", metricValue(t, p.addr, "pixgate_psp_up"))
	pr.kill()
	require.NotContains(t, pr.stdout.String()+pr.stderr.String(), pspWebhookSecret)
}
