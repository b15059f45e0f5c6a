package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPSPNeedsExplicitEnv: with apipix or efi, PIXGATE_ENV left unset
// (the sandbox default) stops serve with one line naming it; set to
// either value it starts. The simulated provider keeps the default.
func TestPSPNeedsExplicitEnv(t *testing.T) {
	t.Parallel()
	good, _ := pspFiles(t)
	for _, p := range []string{ProviderEfi, ProviderAPIPix} {
		c := good
		c.Env, c.Provider = "", p
		s, err := c.Validate()
		require.NoError(t, err, "other commands run on the default")
		require.Equal(t, Sandbox, s.Env)
		require.False(t, s.EnvSet)
		err = s.ValidateServe()
		require.Error(t, err, p)
		lines := strings.Split(err.Error(), "\n")
		require.Len(t, lines, 1, err.Error())
		require.Regexp(t, `^invalid PIXGATE_ENV \(--env\): must be set with PIXGATE_PROVIDER=`+p, lines[0])

		for _, env := range []string{Sandbox, Production} {
			c.Env = env
			s, err := c.Validate()
			require.NoError(t, err)
			require.True(t, s.EnvSet)
			require.NoError(t, s.ValidateServe(), "%s with %s", p, env)
		}
	}
	c := defaults()
	c.Env = ""
	s, err := c.Validate()
	require.NoError(t, err)
	require.Equal(t, ProviderSandbox, s.Provider)
	require.NoError(t, s.ValidateServe(), "the simulated network runs on the default environment")
}

// TestPSPWebhookURLHTTPS: in production the PSP's webhook URL must be
// https, but for a loopback host; the sandbox (a PSP's test environment)
// also takes http.
func TestPSPWebhookURLHTTPS(t *testing.T) {
	t.Parallel()
	good, _ := pspFiles(t)
	for _, tc := range []struct {
		env, url string
		ok       bool
	}{
		{Production, "https://pixgate.example.com/psp/webhook/", true},
		{Production, "https://203.0.113.7:8443/psp/webhook/", true},
		{Production, "http://127.0.0.1:8080/psp/webhook/", true},
		{Production, "http://127.9.9.9/psp/webhook/", true},
		{Production, "http://[::1]:8080/psp/webhook/", true},
		{Production, "http://localhost:8080/psp/webhook/", true},
		{Production, "http://LocalHost/psp/webhook/", true},
		{Production, "http://pixgate.example.com/psp/webhook/", false},
		{Production, "http://203.0.113.7/psp/webhook/", false},
		{Production, "http://10.0.0.1/psp/webhook/", false},
		{Production, "http://localhost.example.com/psp/webhook/", false},
		{Production, "http://[::ffff:10.0.0.1]/psp/webhook/", false},
		{Sandbox, "http://pixgate.example.com/psp/webhook/", true},
	} {
		c := good
		c.Env, c.PSPWebhookURL = tc.env, tc.url+testSecret
		s, err := c.Validate()
		require.NoError(t, err)
		err = s.ValidateServe()
		if tc.ok {
			require.NoError(t, err, tc.url)
			continue
		}
		require.Error(t, err, tc.url)
		require.Equal(t, "invalid PIXGATE_PSP_WEBHOOK_URL (--psp-webhook-url): must be an https URL in production (http only for a loopback host such as 127.0.0.1)",
			err.Error(), tc.url)
	}
}

// writeCert writes a self-signed certificate valid over [notBefore,
// notAfter] and its key, returning their paths.
func writeCert(t *testing.T, notBefore, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "pixgate"},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client-key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	return certFile, keyFile
}

// TestPSPCertificateValidity: an expired or not yet valid client
// certificate stops serve with one line naming the setting and the file;
// a valid one hands its expiry to serve.
func TestPSPCertificateValidity(t *testing.T) {
	t.Parallel()
	good, _ := pspFiles(t)
	now := time.Now().Truncate(time.Second)
	for _, tc := range []struct {
		name                string
		notBefore, notAfter time.Time
		want                string // "" when serve starts
	}{
		{"valid", now.Add(-time.Hour), now.Add(90 * 24 * time.Hour), ""},
		{"expiring tomorrow", now.Add(-time.Hour), now.Add(24 * time.Hour), ""},
		{"expired", now.Add(-48 * time.Hour), now.Add(-time.Hour), "expired at " + now.Add(-time.Hour).UTC().Format(time.RFC3339)},
		{"not yet valid", now.Add(time.Hour), now.Add(48 * time.Hour), "is not valid before " + now.Add(time.Hour).UTC().Format(time.RFC3339)},
	} {
		c := good
		c.PSPCertFile, c.PSPKeyFile = writeCert(t, tc.notBefore, tc.notAfter)
		s, err := c.Validate()
		require.NoError(t, err)
		err = s.ValidateServe()
		if tc.want == "" {
			require.NoError(t, err, tc.name)
			require.True(t, tc.notAfter.Equal(s.CertNotAfter), "%s: %v", tc.name, s.CertNotAfter)
			continue
		}
		require.Error(t, err, tc.name)
		lines := strings.Split(err.Error(), "\n")
		require.Len(t, lines, 1, err.Error())
		require.True(t, strings.HasPrefix(lines[0], "invalid PIXGATE_PSP_CERT_FILE (--psp-cert-file): "+c.PSPCertFile+" "), lines[0])
		require.Contains(t, lines[0], tc.want)
		require.Zero(t, s.CertNotAfter)
	}
}
