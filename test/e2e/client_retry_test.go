package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
	"github.com/pixgate/pixgate/internal/testkit"
)

// faultProxy forwards to a real server and injects failures: it drops the
// connection instead of answering (after the server has answered, so the
// work is done) or answers 503 without forwarding.
type faultProxy struct {
	target string
	mu     sync.Mutex
	// drop and fail503 count down the failures to inject, per
	// "METHOD /path".
	drop, fail503 map[string]int
	// seen records the Idempotency-Key of each forwarded request, and
	// bodies the answers the server sent, per "METHOD /path".
	seen   map[string][]string
	bodies map[string][]string
}

func newFaultProxy(t *testing.T, target string) (*faultProxy, string) {
	p := &faultProxy{target: target, drop: map[string]int{}, fail503: map[string]int{},
		seen: map[string][]string{}, bodies: map[string][]string{}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return p, srv.URL
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k := r.Method + " " + r.URL.Path
	p.mu.Lock()
	if p.fail503[k] > 0 {
		p.fail503[k]--
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"statusCode":503,"message":"Service unavailable","error":"Service Unavailable"}`))
		return
	}
	p.seen[k] = append(p.seen[k], r.Header.Get("Idempotency-Key"))
	p.mu.Unlock()

	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	// #nosec G704 -- the test's own server, behind the test's own proxy
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	out.Header = r.Header.Clone()
	res, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	resBody, _ := io.ReadAll(res.Body)

	p.mu.Lock()
	p.bodies[k] = append(p.bodies[k], string(resBody))
	drop := p.drop[k] > 0
	if drop {
		p.drop[k]--
	}
	p.mu.Unlock()
	if drop {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close() // the client sees the connection end with no answer
		}
		return
	}
	for name, v := range res.Header {
		w.Header()[name] = v
	}
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(resBody)
}

func (p *faultProxy) keys(k string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen[k]...)
}

func (p *faultProxy) answers(k string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.bodies[k]...)
}

// TestClientRetriesThroughInjectedFailures: a payout whose answer is lost after
// the server committed it is retried with the same Idempotency-Key, gets
// the same transaction back, and exists once; reads retry 5xx and dropped
// connections; a refund lost the same way is not made twice either.
func TestClientRetriesThroughInjectedFailures(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		s := startClientServe(t, dbURL)
		ctx := t.Context()
		direct := s.client(t)
		ch, err := direct.CreateCharge(ctx, chargeRequest("fund-1", client.Reais("50"), "https://merchant.example.com/h"))
		require.NoError(t, err)
		s.pay(t, ch.PaymentID)

		proxy, proxyURL := newFaultProxy(t, s.URL)
		// No keep-alive: each attempt is a new connection, so net/http never
		// replays a request by itself and every retry is the client's.
		noReuse := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		c := s.clientAt(t, proxyURL, client.WithHTTPClient(noReuse), client.WithBackoff(time.Millisecond, 5*time.Millisecond))

		const payoutPath = "POST /api/v1/gateway/pix-payment"
		proxy.drop[payoutPath] = 1
		payout, err := c.CreatePayout(ctx, client.PayoutRequest{Amount: client.Reais("7.77"), Description: "retry me",
			CallbackURL: "https://merchant.example.com/p",
			CreditParty: client.CreditParty{KeyType: client.KeyEmail, Key: "f@example.com"}})
		require.NoError(t, err)
		require.Equal(t, 2, payout.Attempts)
		require.True(t, payout.IdempotentReplayed, "the retry replays the committed payout")
		keys := proxy.keys(payoutPath)
		require.Len(t, keys, 2, "the payout was sent twice")
		require.NotEmpty(t, keys[0])
		require.Equal(t, keys[0], keys[1], "same Idempotency-Key on the retry")
		require.Equal(t, keys[0], payout.IdempotencyKey)
		answers := proxy.answers(payoutPath)
		require.Len(t, answers, 2)
		var lost struct {
			TransactionID string `json:"transaction_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(answers[0]), &lost))
		require.Equal(t, lost.TransactionID, payout.TransactionID, "the dropped answer's payout is the one returned")

		var payouts []string
		for tx, err := range direct.History(ctx, client.HistoryQuery{Type: client.TypeCashout}) {
			require.NoError(t, err)
			payouts = append(payouts, tx.PaymentID)
		}
		require.Equal(t, []string{payout.TransactionID}, payouts, "exactly one payout exists")
		bal, err := direct.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, client.Reais("50")-client.Reais("0.10")-client.Reais("7.77")-client.Reais("0.50"),
			bal.Available, "amount + tax held once")

		// A refund whose answer is lost: refunded once.
		const refundPath = "POST /api/v1/gateway/refund"
		proxy.drop[refundPath] = 1
		refund, err := c.CreateRefund(ctx, client.RefundRequest{PaymentID: ch.PaymentID, Amount: client.Reais("1")})
		require.NoError(t, err)
		require.Equal(t, 2, refund.Attempts)
		require.Len(t, proxy.keys(refundPath), 2)
		tx, err := direct.Lookup(ctx, client.LookupQuery{PaymentID: ch.PaymentID})
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			tx, err = direct.Lookup(ctx, client.LookupQuery{PaymentID: ch.PaymentID})
			return err == nil && tx.RefundedAmount > 0
		}, 10*time.Second, 50*time.Millisecond)
		require.Equal(t, client.Reais("1"), tx.RefundedAmount)

		// Reads: a 503 and then a dropped answer are retried.
		const balancePath = "GET /api/v1/wallet/balance"
		proxy.fail503[balancePath] = 1
		proxy.drop[balancePath] = 1
		b, err := c.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, b.Attempts)

		// Out of retries: the 503 comes back as an Error.
		proxy.fail503[balancePath] = 5
		few := s.clientAt(t, proxyURL, client.WithHTTPClient(noReuse), client.WithMaxRetries(1),
			client.WithBackoff(time.Millisecond, time.Millisecond))
		_, err = few.Balance(ctx)
		e := client.AsError(err)
		require.NotNil(t, e, "%v", err)
		require.Equal(t, http.StatusServiceUnavailable, e.StatusCode)
		require.Equal(t, 2, e.Response.Attempts)
		proxy.mu.Lock()
		proxy.fail503[balancePath] = 0
		proxy.mu.Unlock()

		// A manual webhook resend is not repeated after a lost answer.
		dl, err := direct.Deliveries(ctx, ch.PaymentID)
		require.NoError(t, err)
		require.NotEmpty(t, dl.Deliveries)
		retryPath := "POST /api/v1/webhooks/deliveries/" + dl.Deliveries[0].EventID + "/retry"
		proxy.drop[retryPath] = 1
		_, err = c.RetryDelivery(ctx, dl.Deliveries[0].EventID)
		require.Error(t, err)
		require.Nil(t, client.AsError(err), "a network error, not an API answer")
		require.Len(t, proxy.keys(retryPath), 1)
	})
}
