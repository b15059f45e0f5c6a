package apipix

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
	"github.com/pixgate/pixgate/internal/testkit"
)

// Test credentials. They are searched for in logs and errors, so they are
// distinctive strings.
const (
	testClientID     = "pixgate-client-id"
	testClientSecret = "S3CR3T-client-secret-value"
	testPixKey       = "merchant@example.com"
	testWebhookURL   = "https://pixgate.example/psp/webhook/0123456789abcdef0123456789abcdef"
	tokenPrefix      = "AT-very-secret-token-"
)

// recorded is one request the fake PSP received.
type recorded struct {
	Method, Path, Query string
	RawPath             string // as sent, escaped
	Header              http.Header
	Body                []byte
}

// fakePSP is an API Pix server over real mutual TLS: a token endpoint at
// /oauth/token and whatever API handler the test installs.
type fakePSP struct {
	t   *testing.T
	pki *pspsim.PKI
	srv *httptest.Server

	mu          sync.Mutex
	api         []recorded
	token       []recorded
	issued      int
	expiresIn   int
	tokenStatus int    // non-zero: the token endpoint answers this
	tokenBody   string // with this body
	tokenHeader http.Header
	revoked     map[string]bool
	handler     func(w http.ResponseWriter, r *http.Request, body []byte)
}

func newFakePSP(t *testing.T) *fakePSP {
	t.Helper()
	pki, err := pspsim.NewPKI(time.Hour)
	require.NoError(t, err)
	f := &fakePSP{t: t, pki: pki, expiresIn: 3600, revoked: map[string]bool{}}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.TLS = &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{pki.Server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    pki.CA,
	}
	f.srv.Config.ErrorLog = nil
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakePSP) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec := recorded{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}
	if r.URL.Path == "/oauth/token" {
		f.mu.Lock()
		f.token = append(f.token, rec)
		status, tbody, thdr := f.tokenStatus, f.tokenBody, f.tokenHeader
		f.issued++
		tok := fmt.Sprintf("%s%d", tokenPrefix, f.issued)
		exp := f.expiresIn
		f.mu.Unlock()
		if status != 0 {
			for k, vs := range thdr {
				w.Header()[k] = vs
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, tbody)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":%d,"scope":"cob.write cob.read"}`, tok, exp)
		return
	}
	f.mu.Lock()
	f.api = append(f.api, rec)
	h := f.handler
	auth := r.Header.Get("Authorization")
	revoked := f.revoked[strings.TrimPrefix(auth, "Bearer ")]
	f.mu.Unlock()
	if !strings.HasPrefix(auth, "Bearer "+tokenPrefix) || revoked {
		writeProblem(w, http.StatusUnauthorized, "Unauthorized", "token "+auth+" is not valid")
		return
	}
	if h == nil {
		http.NotFound(w, r)
		return
	}
	h(w, r, body)
}

func (f *fakePSP) setHandler(h func(w http.ResponseWriter, r *http.Request, body []byte)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handler = h
}

func (f *fakePSP) apiCalls() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.api...)
}

func (f *fakePSP) tokenCalls() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.token...)
}

func (f *fakePSP) revoke(tok string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked[tok] = true
}

// writeProblem writes an RFC 7807 answer as the API Pix does.
func writeProblem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"type":"https://pix.bcb.gov.br/api/v2/error/X","title":%q,"status":%d,"detail":%q}`, title, status, detail) //nolint:gosec // G705: a test fake answering JSON, never rendered
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body) //nolint:gosec // G705: a test fake answering JSON, never rendered
}

// syncBuffer is a log sink safe for the concurrent writes of a test.
type syncBuffer = testkit.Buffer

// clock is a settable offset from the real time, which is what oauth2
// computes a token's expiry from.
type clock struct{ offset atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// env is a client wired to a fake PSP, its log and its clock.
type env struct {
	psp   *fakePSP
	c     *Client
	log   *syncBuffer
	clock *clock
}

func (f *fakePSP) config(log io.Writer, now func() time.Time) Config {
	return Config{
		APIURL:       f.srv.URL + "/v2",
		ClientID:     testClientID,
		ClientSecret: testClientSecret,
		CertPEM:      f.pki.ClientCertPEM,
		KeyPEM:       f.pki.ClientKeyPEM,
		CAPEM:        f.pki.CAPEM,
		PixKey:       testPixKey,
		WebhookURL:   testWebhookURL,
		Log:          slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Now:          now,
	}
}

func newEnv(t *testing.T, opts ...Option) *env {
	t.Helper()
	e := &env{psp: newFakePSP(t), log: &syncBuffer{}, clock: &clock{}}
	c, err := New(e.psp.config(e.log, e.clock.now), opts...)
	require.NoError(t, err)
	e.c = c
	return e
}
