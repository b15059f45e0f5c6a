package e2e

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestTwoNodesActAsOne starts two serve processes on one PostgreSQL and one
// Redis: an idempotent request sent to both at once creates one
// transaction, the rate limit is shared, and every settlement and delivery
// happens once.
func TestTwoNodesActAsOne(t *testing.T) {
	t.Parallel()
	dbURL := testkit.PostgresURL(t)
	redisURL := testkit.RedisURL(t)
	var mu sync.Mutex
	received := map[string]int{}
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received[r.Header.Get("webhook-id")]++
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(recv.Close)
	// A fresh key space per test run on the shared Redis: the limiter keys by client id.
	flags := []string{"--redis-url", redisURL, "--rate-limit", "40", "--sandbox-payout-delay", "300ms",
		"--webhook-retry-schedule", "100ms,100ms,100ms"}
	a := launchServe(t, dbURL, flags...)
	b := launchServe(t, dbURL, flags...)
	a.waitListening(t)
	b.waitListening(t)
	out := a.stdout.String() + b.stdout.String()
	c := testkit.DecodeOne(t, out, testkit.ServeKeys...) // exactly one node created the sandbox client
	nodes := []string{a.addr, b.addr}

	// The same idempotent charge, at once on both nodes.
	body := charge("two-nodes-1", 50)
	body["postbackUrl"] = recv.URL
	statuses := make([]int, len(nodes))
	resps := make([]map[string]any, len(nodes))
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, addr := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], resps[i], errs[i] = tryAPI(addr, c, "POST", "/api/v1/gateway/request-qrcode", body)
		}()
	}
	wg.Wait()
	ids := make([]string, len(nodes))
	for i := range nodes {
		require.NoError(t, errs[i], nodes[i])
		require.Equal(t, http.StatusCreated, statuses[i], "%v", resps[i])
		ids[i] = resps[i]["payment_id"].(string)
	}
	require.Equal(t, ids[0], ids[1], "one transaction")
	status, _ := api(t, a.addr, c, "POST", "/api/v1/sandbox/charges/"+ids[0]+"/pay", nil)
	require.Equal(t, http.StatusOK, status)

	// Payouts settled by whichever node claims them — once.
	var payouts []string
	for i := 0; i < 6; i++ {
		status, resp := api(t, nodes[i%2], c, "POST", "/api/v1/gateway/pix-payment", map[string]any{
			"amount": 1, "description": "d", "callbackUrl": recv.URL,
			"creditParty": map[string]any{"name": "n", "keyType": "EVP", "key": uuid.NewString()}})
		require.Equal(t, http.StatusOK, status, "%v", resp)
		payouts = append(payouts, resp["transaction_id"].(string))
	}
	db := testkit.OpenURL(t, dbURL)
	ctx := context.Background()
	require.EventuallyWithT(t, func(ct *assert.CollectT) { // its own goroutine: fails through ct, not t
		// Settled first, then delivered: a payout settles with its event in
		// one transaction, so once none is PENDING every event exists, and an
		// empty outbox read after that means all were delivered. (Read the
		// other way round, a payout settling between the two reads leaves
		// its event undelivered.)
		counts, err := db.StatusCounts(ctx)
		require.NoError(ct, err)
		require.Zero(ct, counts[string(pix.TypeCashout)]["PENDING"], "payouts pending")
		lag, _, err := db.OutboxLag(ctx, time.Now())
		require.NoError(ct, err)
		assert.Zero(ct, lag, "events not delivered")
	}, 15*time.Second, 50*time.Millisecond)
	for _, id := range payouts {
		ps, err := db.Postings(ctx, id)
		require.NoError(t, err)
		require.Len(t, ps, 2, "reserved once, settled once")
		evs, err := db.Events(ctx, id)
		require.NoError(t, err)
		require.Len(t, evs, 1)
	}
	require.NoError(t, db.CheckLedger(ctx))
	mu.Lock()
	got := maps.Clone(received) // asserted unlocked: a failing assertion must not leave the receiver's handlers blocked
	mu.Unlock()
	require.Len(t, got, 7, "one cash-in event and six payouts")
	for id, n := range got {
		require.Equal(t, 1, n, "event %s delivered once", id)
	}

	// The rate limit is shared: 40 in all, wherever they land.
	used := 2 + 1 + 6
	refused := 0
	for i := 0; i < 40; i++ {
		status, _ := api(t, nodes[i%2], c, "GET", "/api/v1/wallet/balance", nil)
		if status == http.StatusTooManyRequests {
			refused++
		}
	}
	require.Equal(t, used, refused, "both nodes count against one window")

	// Each node exposes its metrics.
	resp, err := http.Get("http://" + a.addr + "/metrics")
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	m := string(raw)
	for _, series := range []string{"pixgate_http_requests_total", "pixgate_http_request_duration_seconds", "pixgate_rate_limit_rejections_total",
		"pixgate_transactions", "pixgate_outbox_pending_events", `route="POST /api/v1/gateway/request-qrcode"`} {
		require.Contains(t, m, series)
	}
	require.False(t, strings.Contains(m, ids[0]), "no raw ids in labels")
}
