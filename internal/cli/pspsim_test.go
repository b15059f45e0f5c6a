package cli

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// TestPSPSimCommand runs `pixgate psp-sim` in-process, reads the
// environment it prints and uses it as pixgate would: mutual TLS with the
// written files, a token, one API call, each at least --latency slow.
func TestPSPSimCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	r, w := io.Pipe()
	var errOut testkit.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"psp-sim", "--api-addr", "127.0.0.1:0", "--control-addr", "127.0.0.1:0",
			"--dir", dir, "--key", "loja@example.com", "--addr", "0.0.0.0:9090", "--latency", "150ms", "--latency-jitter", "50ms", "--rate-limit", "7"}, w, &errOut)
		_ = w.Close()
	}()

	env := map[string]string{}
	control := ""
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	deadline := time.After(20 * time.Second)
	for env["PIXGATE_PSP_WEBHOOK_URL"] == "" {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "output ended early; stderr: %s", errOut.String())
			if rest, ok := strings.CutPrefix(line, "# control API: "); ok {
				control, _, _ = strings.Cut(rest, " ")
			}
			if kv, ok := strings.CutPrefix(line, "export "); ok {
				k, v, _ := strings.Cut(kv, "=")
				_, dup := env[k]
				require.False(t, dup, "%s printed twice", k)
				env[k] = v
			}
		case <-deadline:
			t.Fatal("psp-sim printed no environment within 20 s")
		}
	}
	go func() {
		for range lines { // keep the writer unblocked
		}
	}()

	assert.Equal(t, "efi", env["PIXGATE_PROVIDER"])
	assert.Equal(t, "loja@example.com", env["PIXGATE_PSP_PIX_KEY"])
	assert.Regexp(t, `^http://127\.0\.0\.1:9090/psp/webhook/[A-Za-z0-9_-]{32,}$`, env["PIXGATE_PSP_WEBHOOK_URL"],
		"the hint points at pixgate's own --addr, on loopback")
	for _, k := range []string{"PIXGATE_PSP_CERT_FILE", "PIXGATE_PSP_KEY_FILE", "PIXGATE_PSP_CA_FILE"} {
		assert.True(t, strings.HasPrefix(env[k], dir), "%s is in --dir", k)
	}

	cert, err := tls.LoadX509KeyPair(env["PIXGATE_PSP_CERT_FILE"], env["PIXGATE_PSP_KEY_FILE"])
	require.NoError(t, err)
	caPEM, err := os.ReadFile(env["PIXGATE_PSP_CA_FILE"])
	require.NoError(t, err)
	roots := x509.NewCertPool()
	require.True(t, roots.AppendCertsFromPEM(caPEM))
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}, RootCAs: roots}}}
	api, err := url.Parse(env["PIXGATE_PSP_API_URL"])
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, api.Scheme+"://"+api.Host+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
	require.NoError(t, err)
	req.SetBasicAuth(env["PIXGATE_PSP_CLIENT_ID"], env["PIXGATE_PSP_CLIENT_SECRET"])
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	start := time.Now()
	resp, err := client.Do(req)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond, "--latency less --latency-jitter")
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&tok))
	resp.Body.Close()

	req, err = http.NewRequest(http.MethodGet, env["PIXGATE_PSP_API_URL"]+"/cob/AAAAAAAAAAAAAAAAAAAAAAAAAAAA", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	resp, err = client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "an authenticated call reaches the API")

	resp, err = http.Get(control + "/sim/state")
	require.NoError(t, err)
	var state struct {
		RateLimit int `json:"rate_limit"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&state))
	resp.Body.Close()
	assert.Equal(t, 7, state.RateLimit, "--rate-limit reaches the simulator")

	cancel()
	select {
	case code := <-done:
		assert.Equal(t, 0, code, "stderr: %s", errOut.String())
	case <-time.After(20 * time.Second):
		t.Fatal("psp-sim did not stop with its context")
	}
}
