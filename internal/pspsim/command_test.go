package pspsim_test

import (
	"bufio"
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

	"github.com/stretchr/testify/require"
)

func newPipe() (*io.PipeReader, *io.PipeWriter) { return io.Pipe() }

// readEnv reads the "export K=V" lines Run prints, up to the webhook hint,
// and keeps reading the rest in the background so the writer never blocks.
func readEnv(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	env := map[string]string{}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "the output ended before PIXGATE_PSP_WEBHOOK_URL")
			kv, ok := strings.CutPrefix(line, "export ")
			if !ok {
				require.True(t, strings.HasPrefix(line, "#"), "unexpected line %q", line)
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(v, "'") {
				v = strings.ReplaceAll(strings.Trim(v, "'"), `'\''`, "'")
			}
			_, dup := env[k]
			require.False(t, dup, "%s printed twice", k)
			env[k] = v
			if k == "PIXGATE_PSP_WEBHOOK_URL" {
				go func() {
					for range lines {
					}
				}()
				return env
			}
		case <-timeout:
			t.Fatal("no PIXGATE_PSP_WEBHOOK_URL line within 10 s")
		}
	}
}

// callWithEnv does what pixgate does with the printed environment: mutual
// TLS with the files, a token from <origin>/oauth/token, one API call.
func callWithEnv(t *testing.T, env map[string]string) {
	t.Helper()
	require.Equal(t, "production", env["PIXGATE_ENV"], "the environment a PSP provider needs set")
	for _, k := range []string{"PIXGATE_PSP_API_URL", "PIXGATE_PSP_CLIENT_ID", "PIXGATE_PSP_CLIENT_SECRET",
		"PIXGATE_PSP_CERT_FILE", "PIXGATE_PSP_KEY_FILE", "PIXGATE_PSP_CA_FILE", "PIXGATE_PSP_PIX_KEY"} {
		require.NotEmpty(t, env[k], k)
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
	require.Equal(t, "/v2", api.Path)
	req, err := http.NewRequest(http.MethodPost, api.Scheme+"://"+api.Host+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
	require.NoError(t, err)
	req.SetBasicAuth(env["PIXGATE_PSP_CLIENT_ID"], env["PIXGATE_PSP_CLIENT_SECRET"])
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := client.Do(req)
	require.NoError(t, err)
	tok := decode(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", tok)
	req, err = http.NewRequest(http.MethodPut, env["PIXGATE_PSP_API_URL"]+"/webhook/"+url.PathEscape(env["PIXGATE_PSP_PIX_KEY"]),
		strings.NewReader(`{"webhookUrl":"`+env["PIXGATE_PSP_WEBHOOK_URL"]+`"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tok["access_token"].(string))
	req.Header.Set("Content-Type", "application/json")
	resp, err = client.Do(req)
	require.NoError(t, err)
	body := decode(t, resp)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", body)
}

// decode reads and closes a JSON answer (nil when empty).
func decode(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if len(raw) == 0 {
		return nil
	}
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "body: %s", raw)
	return out
}
