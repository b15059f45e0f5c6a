package e2e

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// TestServeTLS: with PIXGATE_TLS_CERT/KEY set, serve speaks HTTPS only and
// sends HSTS.
func TestServeTLS(t *testing.T) {
	t.Parallel()
	tc := testkit.SelfSignedTLS(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	require.NoError(t, os.WriteFile(certFile, tc.CertPEM, 0o600))
	require.NoError(t, os.WriteFile(keyFile, tc.KeyPEM, 0o600))

	s := startServe(t, testkit.SQLiteURL(t), "--tls-cert", certFile, "--tls-key", keyFile)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tc.Pool}}}
	resp, err := client.Get("https://" + s.addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Strict-Transport-Security"), "max-age=")
	resp, err = http.Get("http://" + s.addr + "/healthz")
	if err == nil {
		resp.Body.Close()
		require.NotEqual(t, http.StatusOK, resp.StatusCode, "plain HTTP is not served")
	}
	s.stop(t)

	code, _, errOut := run(t, "serve", "--database-url", testkit.SQLiteURL(t), "--addr", "127.0.0.1:0", "--tls-cert", filepath.Join(dir, "missing.crt"), "--tls-key", keyFile)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "TLS")
}
