package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/httpapi"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/testkit"
)

// pspSecret is the <secret> of the PSP's webhook URL in these tests.
const pspSecret = "Zq3-webhook_SECRET-0123456789abcdefXY"

// fakePSP is a PSP that knows no payment: ConfirmPayment answers err.
type fakePSP struct {
	provider.None
	err error
}

func (fakePSP) Name() string { return provider.NameEfi }
func (fakePSP) Capabilities() provider.Capabilities {
	return provider.Capabilities{Payouts: true, TxIDLength: 35}
}
func (p fakePSP) ConfirmPayment(context.Context, string) (provider.Payment, error) {
	return provider.Payment{}, p.err
}

// pspAPI is an API in production behind a PSP, serving the PSP's webhook
// at secret ("" serves none), with its logs.
type pspAPI struct {
	url  string
	logs *testkit.Buffer
}

func newPSPAPI(t *testing.T, secret string, psp provider.Provider) pspAPI {
	t.Helper()
	db := testkit.OpenSQLite(t)
	logs := &testkit.Buffer{}
	log := slog.New(httpapi.LogHandler(slog.NewJSONHandler(logs, nil)))
	gw, err := gateway.New(gateway.Config{DB: db, Env: gateway.EnvProduction, ChargeTTL: time.Hour, Log: log, Provider: psp})
	require.NoError(t, err)
	api, err := httpapi.New(httpapi.Options{Gateway: gw, Log: log, Ready: db.Ping, PSPWebhookSecret: secret})
	require.NoError(t, err)
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return pspAPI{url: srv.URL, logs: logs}
}

// send sends body (nil: none) and returns the status, headers and body.
func (p pspAPI) send(t *testing.T, method, path string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, p.url+path, body)
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, raw
}

const pixPath = "/psp/webhook/" + pspSecret + "/pix"

// notFoundBody is the API's 404 body for a path that is no route.
const notFoundBody = `{"statusCode":404,"message":"Not found","error":"Not Found"}`

// TestPSPWebhookNotFound: every path under /psp/webhook/ other than the
// right one answers the same 404 as any unknown path, whatever is wrong
// (the secret, its length, the sub-path, the method at a wrong secret), and
// with no secret configured the right path is unknown too.
func TestPSPWebhookNotFound(t *testing.T) {
	t.Parallel()
	api := newPSPAPI(t, pspSecret, fakePSP{err: provider.ErrNotFound})
	wrong := strings.ToUpper(pspSecret[:1]) + "x" + pspSecret[2:] // same length
	for _, tc := range []struct{ method, path string }{
		{"POST", "/psp/webhook/" + wrong + "/pix"},
		{"GET", "/psp/webhook/" + wrong + "/pix"},
		{"POST", "/psp/webhook/" + pspSecret[:len(pspSecret)-1] + "/pix"},
		{"POST", "/psp/webhook/" + pspSecret + "x/pix"},
		{"POST", "/psp/webhook/" + strings.ToLower(pspSecret) + "/pix"},
		{"POST", "/psp/webhook//pix"},
		{"POST", "/psp/webhook/pix"},
		{"POST", "/psp/webhook/"},
		{"GET", "/psp/webhook"},
		{"POST", "/psp/webhook/" + pspSecret + "/"},
		{"POST", "/psp/webhook/" + pspSecret + "/cob"},
		{"POST", "/psp/webhook/" + pspSecret + "/pix/"},
		{"POST", "/psp/webhook/" + pspSecret + "/pix/x"},
		{"GET", "/psp/webhook/" + pspSecret + "/recs"},
		{"POST", "/psp/webhook/" + pspSecret + "/cobv"},
		{"POST", "/psp/webhook/" + pspSecret + "//pix"},
		{"POST", "/psp/webhook/x/../" + pspSecret + "/pix"},
		{"POST", "/psp/webhook/" + pspSecret + "%00/pix"},
		{"POST", "/psp/webhook/" + pspSecret + "%ff/pix"},
		{"POST", "/psp/webhook/" + pspSecret + "/pix%00"},
	} {
		status, _, body := api.send(t, tc.method, tc.path, strings.NewReader(`{"pix":[]}`))
		require.Equal(t, http.StatusNotFound, status, "%s %s", tc.method, tc.path)
		require.JSONEq(t, notFoundBody, string(body), "%s %s", tc.method, tc.path)
	}

	none := newPSPAPI(t, "", fakePSP{err: provider.ErrNotFound})
	for _, path := range []string{pixPath, "/psp/webhook/", "/psp/webhook//pix"} {
		status, _, body := none.send(t, "POST", path, strings.NewReader(`{"pix":[]}`))
		require.Equal(t, http.StatusNotFound, status, path)
		require.JSONEq(t, notFoundBody, string(body), path)
	}
}

// TestPSPWebhookMethod: at the right path, only POST is served.
func TestPSPWebhookMethod(t *testing.T) {
	t.Parallel()
	api := newPSPAPI(t, pspSecret, fakePSP{err: provider.ErrNotFound})
	for _, method := range []string{"GET", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"} {
		status, h, body := api.send(t, method, pixPath, nil)
		require.Equal(t, http.StatusMethodNotAllowed, status, method)
		require.Equal(t, "POST", h.Get("Allow"), method)
		if method != "HEAD" {
			require.JSONEq(t, `{"statusCode":405,"message":"Method not allowed","error":"Method Not Allowed"}`, string(body), method)
		}
	}
}

// TestPSPWebhookBarePath: the registered URL itself is not the
// notification path (<url>/pix is): 404 like any other path, whatever the
// method, and nothing is confirmed.
func TestPSPWebhookBarePath(t *testing.T) {
	t.Parallel()
	psp := &recordingPSP{fakePSP: fakePSP{err: provider.ErrNotFound}}
	api := newPSPAPI(t, pspSecret, psp)
	for _, method := range []string{"POST", "GET"} {
		status, _, raw := api.send(t, method, "/psp/webhook/"+pspSecret, strings.NewReader(`{"evento":"teste_webhook"}`))
		require.Equal(t, http.StatusNotFound, status, string(raw))
	}
	require.Empty(t, psp.askedFor())
}

// TestPSPWebhookBody: the PSP's body is read leniently (unknown fields
// pass) but must be a notification; 1 MiB at most. None of these reaches
// the PSP, so none depends on the gateway's confirmation.
func TestPSPWebhookBody(t *testing.T) {
	t.Parallel()
	api := newPSPAPI(t, pspSecret, fakePSP{err: provider.ErrNotFound})
	for _, body := range []string{
		``, `{`, `nul`, `null`, `[]`, `"pix"`, `{}`, `{"pix":null}`, `{"pix":{}}`, `{"pix":"[]"}`, `{"pix":[1]}`,
		`{"pix":[{}]}`, `{"pix":[{"txid":"abc"}]}`, `{"pix":[{"endToEndId":""}]}`, `{"pix":[{"endToEndId":32}]}`,
		`{"pix":[{"endToEndId":null}]}`, `{"pix":[{"endToEndId":"E00000000/../../cob/x"}]}`,
		`{"pix":[{"endToEndId":"E` + strings.Repeat("0", 64) + `"}]}`,
		`{"pix":[{"endToEndId":"E18236120202501011200s0000000001"},{"valor":"1.00"}]}`,
		`{"pix":[]} {"pix":[]}`,
	} {
		status, _, raw := api.send(t, "POST", pixPath, strings.NewReader(body))
		require.Equal(t, http.StatusBadRequest, status, body)
		var got map[string]any
		require.NoError(t, json.Unmarshal(raw, &got), string(raw))
		require.EqualValues(t, 400, got["statusCode"], body)
		require.Equal(t, "Bad Request", got["error"], body)
	}

	// Lenient: fields pixgate does not read, of any type, are ignored.
	status, _, raw := api.send(t, "POST", pixPath, strings.NewReader(`{"pix":[],"extra":{"a":[1,2]},"versao":2}`))
	require.Equal(t, http.StatusOK, status, string(raw))
	require.JSONEq(t, `{}`, string(raw))

	// 1 MiB exactly is read; one byte more is refused, whether the length
	// is announced or not.
	exact := padded(httpapi.MaxPSPBodyBytes)
	status, _, raw = api.send(t, "POST", pixPath, bytes.NewReader(exact))
	require.Equal(t, http.StatusOK, status, string(raw))
	over := padded(httpapi.MaxPSPBodyBytes + 1)
	status, _, raw = api.send(t, "POST", pixPath, bytes.NewReader(over))
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	require.JSONEq(t, `{"statusCode":413,"message":"Request body too large (limit 1 MiB)","error":"Request Entity Too Large"}`, string(raw))
	status, _, raw = api.send(t, "POST", pixPath, io.MultiReader(bytes.NewReader(over))) // no Content-Length
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	require.JSONEq(t, `{"statusCode":413,"message":"Request body too large (limit 1 MiB)","error":"Request Entity Too Large"}`, string(raw))
}

// padded returns a well-formed notification of no Pix, n bytes long.
func padded(n int) []byte {
	head, tail := `{"pix":[],"pad":"`, `"}`
	return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
}

// TestPSPWebhookSecretNotLogged: whatever the request at the PSP's paths,
// no log line holds the secret; the route is logged without it.
func TestPSPWebhookSecretNotLogged(t *testing.T) {
	t.Parallel()
	api := newPSPAPI(t, pspSecret, fakePSP{err: provider.ErrNotFound})
	for _, r := range []struct{ method, path, body string }{
		{"POST", pixPath, `{"pix":[]}`},
		{"POST", pixPath, `{"pix":[{"endToEndId":"E18236120202501011200s0000000001","txid":"abc"}]}`},
		{"POST", pixPath, `{"pix":`},
		{"GET", pixPath, ``},
		{"POST", "/psp/webhook/" + pspSecret + "/cob", `{}`},
		{"POST", "/psp/webhook/" + pspSecret + "%00/pix", `{}`},
		{"POST", "/psp/webhook/" + pspSecret + "//pix", `{}`},
		{"POST", "/psp/webhook/" + pspSecret[1:] + "/pix", `{}`},
	} {
		api.send(t, r.method, r.path, strings.NewReader(r.body))
	}
	logs := api.logs.String()
	require.Contains(t, logs, `"route":"POST /psp/webhook/{secret}/pix"`)
	require.Equal(t, 8, strings.Count(logs, `"msg":"request"`), "one access line per request")
	for _, part := range []string{pspSecret, pspSecret[1:], pspSecret[:16], pspSecret[16:]} {
		require.NotContains(t, logs, part)
	}
}

// recordingPSP is a PSP that records the end-to-end ids it is asked to
// confirm and answers each with err.
type recordingPSP struct {
	fakePSP
	mu    sync.Mutex
	asked []string
}

func (p *recordingPSP) ConfirmPayment(_ context.Context, e2eid string) (provider.Payment, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, e2eid)
	return provider.Payment{}, p.err
}

func (p *recordingPSP) askedFor() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// TestPSPWebhookHandsOver: a well-formed notification is handed to the
// gateway, which asks the PSP about each Pix: 200 {} when the gateway takes
// it (here: the PSP knows none of them, so nothing moves), 503 in the
// gateway error shape when it cannot, so that the PSP sends it again.
func TestPSPWebhookHandsOver(t *testing.T) {
	t.Parallel()
	const e1, e2 = "E18236120202501011200s0000000001", "E18236120202501011200s0000000002"
	body := `{"pix":[{"endToEndId":"` + e1 + `","txid":"abcdefghijklmnopqrstuvwxyz0123","valor":"10.00","horario":"2025-01-01T12:00:00.000Z","infoPagador":"x"},` +
		`{"endToEndId":"` + e2 + `","txid":"not a txid!","devolucoes":[]}]}`

	known := &recordingPSP{fakePSP: fakePSP{err: provider.ErrNotFound}}
	api := newPSPAPI(t, pspSecret, known)
	status, _, raw := api.send(t, "POST", pixPath, strings.NewReader(body))
	require.Equal(t, http.StatusOK, status, string(raw))
	require.JSONEq(t, `{}`, string(raw))
	require.Equal(t, []string{e1, e2}, known.askedFor())

	down := &recordingPSP{fakePSP: fakePSP{err: errors.New("connection refused")}}
	api = newPSPAPI(t, pspSecret, down)
	status, _, raw = api.send(t, "POST", pixPath, strings.NewReader(body))
	require.Equal(t, http.StatusServiceUnavailable, status, string(raw))
	require.JSONEq(t, `{"statusCode":503,"message":"Service unavailable","error":"Service Unavailable"}`, string(raw))
	require.Equal(t, []string{e1, e2}, down.askedFor())
	require.NotContains(t, api.logs.String(), pspSecret)

	// Nothing to confirm: the gateway is not asked.
	status, _, _ = api.send(t, "POST", pixPath, strings.NewReader(`{"pix":[]}`))
	require.Equal(t, http.StatusOK, status)
	require.Len(t, down.askedFor(), 2)
}
