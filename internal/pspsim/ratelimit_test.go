package pspsim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pspsim"
)

// frozenClock is a clock that moves only when told, so that a rate can be
// tested without depending on how fast the requests go.
type frozenClock struct{ ns atomic.Int64 }

func newFrozenClock() *frozenClock {
	c := &frozenClock{}
	c.ns.Store(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *frozenClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *frozenClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// answer is a response, body read.
type answer struct {
	StatusCode int
	Header     http.Header
}

// raw sends method path with an optional JSON body and the sim's token,
// and returns the answer and its body.
func (e *sim) raw(method, path, body string) (answer, []byte) {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.origin+path, rd)
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+e.token)
	resp, err := e.client.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	return answer{StatusCode: resp.StatusCode, Header: resp.Header}, b
}

// TestRateLimit: beyond Options.RateLimit requests a second, the API
// answers 429 with Retry-After and a problem, and does nothing of what was
// asked (no cob, no send); token requests are neither limited nor
// counted; the bucket refills with time; SetRateLimit and the control API
// change the limit at run time.
func TestRateLimit(t *testing.T) {
	t.Parallel()
	clock := newFrozenClock()
	e := startSim(t, func(o *pspsim.Options) {
		o.RateLimit, o.Now, o.SettleDelay, o.ControlAddr = 3, clock.now, -1, "127.0.0.1:0"
	})
	require.Equal(t, 3, e.Options().RateLimit)
	require.Equal(t, 3, e.State().RateLimit)

	for range 3 {
		resp, b := e.raw(http.MethodGet, "/v2/cob/"+txid(1), "")
		require.Equal(t, http.StatusNotFound, resp.StatusCode, "%s", b)
	}
	// The startSim token did not count, and a token request while limited
	// is still answered.
	e.fetchToken("client-1", "secret-1")

	cob, err := json.Marshal(cobBody("10.00"))
	require.NoError(t, err)
	send := `{"valor":"1.00","pagador":{"chave":"` + testKey + `"},"favorecido":{"chave":"a@example.com"}}`
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPut, "/v2/cob/" + txid(1), string(cob)},
		{http.MethodPut, "/v3/gn/pix/" + hex32(1), send},
		{http.MethodGet, "/v2/pix", ""},
	} {
		resp, b := e.raw(c.method, c.path, c.body)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, "%s %s: %s", c.method, c.path, b)
		require.Equal(t, "1", resp.Header.Get("Retry-After"))
		require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
		var p map[string]any
		require.NoError(t, json.Unmarshal(b, &p))
		require.InDelta(t, 429, p["status"], 0)
		require.Equal(t, "https://pix.bcb.gov.br/api/v2/error/LimiteDeRequisicoesExcedido", p["type"])
		require.NotEmpty(t, p["title"])
	}
	st := e.State()
	require.Empty(t, st.Cobs, "a refused PUT creates nothing")
	require.Empty(t, st.Sends)
	require.Equal(t, pspsim.Count{}, e.SendCount(hex32(1)), "a refused send never reaches the PSP")
	n429 := 0
	for _, r := range e.Requests() {
		if r.Status == http.StatusTooManyRequests {
			n429++
		}
	}
	require.Equal(t, 3, n429, "the request log shows the refusals")

	// A second later the bucket holds a second's worth again; the refused
	// requests took nothing from it.
	clock.advance(time.Second)
	for i := range 3 {
		resp, b := e.raw(http.MethodPut, "/v2/cob/"+txid(10+i), string(cob))
		require.Equal(t, http.StatusCreated, resp.StatusCode, "%s", b)
	}
	resp, _ := e.raw(http.MethodGet, "/v2/cob/"+txid(10), "")
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	// Half a second refills one and a half requests: one passes.
	clock.advance(500 * time.Millisecond)
	resp, _ = e.raw(http.MethodGet, "/v2/cob/"+txid(10), "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = e.raw(http.MethodGet, "/v2/cob/"+txid(10), "")
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)

	e.SetRateLimit(0)
	for range 10 {
		resp, _ := e.raw(http.MethodGet, "/v2/cob/"+txid(10), "")
		require.Equal(t, http.StatusOK, resp.StatusCode, "no limit")
	}
	e.SetRateLimit(1)
	resp, _ = e.raw(http.MethodGet, "/v2/cob/"+txid(10), "")
	require.Equal(t, http.StatusOK, resp.StatusCode, "a new limit starts with a full bucket")
	resp, _ = e.raw(http.MethodGet, "/v2/cob/"+txid(10), "")
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)

	// The control API sets it too.
	ctl, err := http.Post(e.ControlURL()+"/sim/faults", "application/json", strings.NewReader(`{"rate_limit":0}`))
	require.NoError(t, err)
	ctl.Body.Close()
	require.Equal(t, http.StatusOK, ctl.StatusCode)
	require.Zero(t, e.State().RateLimit)
	resp, _ = e.raw(http.MethodGet, "/v2/cob/"+txid(10), "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
