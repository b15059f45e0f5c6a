package testkit_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

const (
	bacenTxID = "AbCdEfGhIjKlMnOpQrStUvWxYz0123"
	bacenE2E  = "E12345678202601011200abcdefghijk"
)

// fakePSP answers each request with the canned status and body of its
// "METHOD path", or 404 with an empty body.
func fakePSP(answers map[string]struct {
	status int
	body   string
}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		a, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if a.body != "" {
			ct := "application/json"
			if a.status >= 400 {
				ct = "application/problem+json"
			}
			w.Header().Set("Content-Type", ct)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	})
}

func cobAnswer(withStatus bool) string {
	cob := map[string]any{
		"calendario": map[string]any{"criacao": "2026-01-01T12:00:00.000Z", "expiracao": 3600},
		"txid":       bacenTxID, "revisao": 0,
		"loc":      map[string]any{"id": 7, "location": "psp.example.com/qr/v2/abc", "tipoCob": "cob", "criacao": "2026-01-01T12:00:00.000Z", "txid": bacenTxID},
		"location": "psp.example.com/qr/v2/abc",
		"valor":    map[string]any{"original": "10.00"}, "chave": "k@example.com",
		"devedor":       map[string]any{"cpf": "12345678909", "nome": "Fulano"},
		"pixCopiaECola": "000201...",
	}
	if withStatus {
		cob["status"] = "ATIVA"
	}
	b, _ := json.Marshal(cob)
	return string(b)
}

const validCob = `{"calendario":{"expiracao":3600},"devedor":{"cpf":"12345678909","nome":"Fulano"},"valor":{"original":"10.00"},"chave":"k@example.com"}`

// exchange sends one request through handler wrapped by v.
func exchange(t *testing.T, v *testkit.Conformance, h http.Handler, method, path, body, token string) {
	t.Helper()
	srv := httptest.NewServer(v.Wrap(h))
	defer srv.Close()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func violationsText(v *testkit.Conformance) string {
	var b strings.Builder
	for _, x := range v.Violations() {
		b.WriteString(x.String() + "\n")
	}
	return b.String()
}

func TestBACENValidatorAcceptsConformingExchanges(t *testing.T) {
	v := testkit.BACENValidator(t)
	h := fakePSP(map[string]struct {
		status int
		body   string
	}{
		"PUT /v2/cob/" + bacenTxID:      {201, cobAnswer(true)},
		"GET /v2/pix/" + bacenE2E:       {200, `{"endToEndId":"` + bacenE2E + `","valor":"10.00","horario":"2026-01-01T12:00:00Z"}`},
		"PUT /v2/webhook/k@example.com": {200, ""},
		// The known slip: the list carries "pix", not "cobs".
		"GET /v2/pix":        {200, `{"parametros":{"inicio":"2026-01-01T00:00:00Z","fim":"2026-01-02T00:00:00Z","paginacao":{"paginaAtual":0,"itensPorPagina":100,"quantidadeDePaginas":1,"quantidadeTotalDeItens":1}},"pix":[{"endToEndId":"` + bacenE2E + `","valor":"10.00","horario":"2026-01-01T12:00:00Z"}]}`},
		"PUT /v3/gn/pix/abc": {500, "not API Pix"},
	})
	exchange(t, v, h, http.MethodPut, "/v2/cob/"+bacenTxID, validCob, "tok")
	exchange(t, v, h, http.MethodGet, "/v2/pix/"+bacenE2E, "", "tok")
	exchange(t, v, h, http.MethodPut, "/v2/webhook/k@example.com", `{"webhookUrl":"https://pixgate.example.com/psp/webhook/s"}`, "tok")
	exchange(t, v, h, http.MethodGet, "/v2/pix?inicio=2026-01-01T00:00:00Z&fim=2026-01-02T00:00:00Z", "", "tok")
	exchange(t, v, h, http.MethodPut, "/v3/gn/pix/abc", `{}`, "tok")
	exchange(t, v, h, http.MethodPost, "/oauth/token", "", "")
	assert.Empty(t, violationsText(v))
	assert.Equal(t, 4, v.Validated(), "the Efí and token calls are not API Pix")
	r := &recorder{TB: t}
	v.Check(r)
	assert.False(t, r.Failed(), r.String())
}

func TestBACENValidatorCatchesViolations(t *testing.T) {
	for name, tc := range map[string]struct {
		method, path, body, token string
		answer                    struct {
			status int
			body   string
		}
		want string
	}{
		"cob answered without status": {method: http.MethodPut, path: "/v2/cob/" + bacenTxID, body: validCob, token: "t",
			answer: struct {
				status int
				body   string
			}{201, cobAnswer(false)}, want: `response: `},
		"undocumented status": {method: http.MethodGet, path: "/v2/cob/" + bacenTxID, token: "t",
			answer: struct {
				status int
				body   string
			}{409, `{"type":"x","title":"x","status":409}`}, want: "status is not supported"},
		"list of Pix in cobs": {method: http.MethodGet, path: "/v2/pix?inicio=2026-01-01T00:00:00Z&fim=2026-01-02T00:00:00Z", token: "t",
			answer: struct {
				status int
				body   string
			}{200, `{"parametros":{"inicio":"2026-01-01T00:00:00Z","fim":"2026-01-02T00:00:00Z","paginacao":{"paginaAtual":0,"itensPorPagina":100,"quantidadeDePaginas":1,"quantidadeTotalDeItens":0}},"cobs":[]}`},
			want: `"pix"`},
		"e2eid of 34": {method: http.MethodGet, path: "/v2/pix/" + bacenE2E + "xy", token: "t",
			answer: struct {
				status int
				body   string
			}{404, `{"type":"x","title":"x","status":404}`}, want: "request: "},
		"cob request without valor": {method: http.MethodPut, path: "/v2/cob/" + bacenTxID, token: "t",
			body: `{"calendario":{"expiracao":3600},"chave":"k@example.com"}`,
			answer: struct {
				status int
				body   string
			}{201, cobAnswer(true)}, want: "request: "},
		"no token": {method: http.MethodGet, path: "/v2/cob/" + bacenTxID,
			answer: struct {
				status int
				body   string
			}{200, cobAnswer(true)}, want: "request: "},
		"undocumented path": {method: http.MethodGet, path: "/v2/cobranca/" + bacenTxID, token: "t",
			answer: struct {
				status int
				body   string
			}{200, `{}`}, want: "no documented operation"},
	} {
		t.Run(name, func(t *testing.T) {
			v := testkit.BACENValidator(t)
			route := tc.method + " " + strings.SplitN(tc.path, "?", 2)[0]
			h := fakePSP(map[string]struct {
				status int
				body   string
			}{route: tc.answer})
			exchange(t, v, h, tc.method, tc.path, tc.body, tc.token)
			text := violationsText(v)
			require.NotEmpty(t, text, "the validator must catch it")
			assert.Contains(t, text, tc.want)
			r := &recorder{TB: t}
			v.Check(r)
			assert.True(t, r.Failed(), "Check must fail the test")
			assert.Contains(t, r.String(), route)
		})
	}
}

func TestBACENCheckFailsWhenNothingWasValidated(t *testing.T) {
	v := testkit.BACENValidator(t)
	r := &recorder{TB: t}
	v.Check(r)
	assert.True(t, r.Failed())
	assert.Contains(t, r.String(), "no exchange was validated")
}

// skipRecorder records a skip instead of skipping the real test.
type skipRecorder struct {
	*recorder
	skipped bool
}

func (s *skipRecorder) Skip(...any) { s.skipped = true }

func TestBACENSpecPath(t *testing.T) {
	t.Setenv(testkit.BACENOpenAPIEnv, "")
	t.Setenv("CI", "")
	r := &skipRecorder{recorder: &recorder{TB: t}}
	testkit.BACENSpecPath(r)
	assert.True(t, r.skipped, "unset outside CI: skip")
	assert.False(t, r.Failed())

	t.Setenv("CI", "true")
	r = &skipRecorder{recorder: &recorder{TB: t}}
	testkit.BACENSpecPath(r)
	assert.False(t, r.skipped)
	assert.True(t, r.Failed(), "unset in CI: fail")

	t.Setenv(testkit.BACENOpenAPIEnv, "/some/openapi.yaml")
	r = &skipRecorder{recorder: &recorder{TB: t}}
	assert.Equal(t, "/some/openapi.yaml", testkit.BACENSpecPath(r))
	assert.False(t, r.Failed())
}
