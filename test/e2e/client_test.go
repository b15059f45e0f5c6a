package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
	"github.com/pixgate/pixgate/internal/testkit"
)

// countingTransport counts the requests per method and path.
type countingTransport struct {
	mu    sync.Mutex
	count map[string]int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.count == nil {
		c.count = map[string]int{}
	}
	c.count[r.Method+" "+r.URL.Path]++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (c *countingTransport) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count[k]
}

func waitEvent(t *testing.T, ch <-chan client.Event, name string) client.Event {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case e := <-ch:
			if e.Event == name {
				return e
			}
		case <-timeout:
			t.Fatalf("no %s event", name)
		}
	}
}

// TestClientAgainstServe drives every endpoint of a real pixgate serve
// through the client, on both databases.
func TestClientAgainstServe(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		s := startClientServe(t, dbURL)
		ctx := t.Context()
		events := make(chan client.Event, 64)
		push := func(_ context.Context, e client.Event) error { events <- e; return nil }
		wh, err := client.WebhookHandler(s.creds.WebhookSecret, client.EventHandlers{
			OnCashinPaid: push, OnCashoutPaid: push, OnRefundCompleted: push, OnOther: push})
		require.NoError(t, err)
		recv := httptest.NewServer(wh)
		t.Cleanup(recv.Close)

		counter := &countingTransport{}
		c := s.client(t, client.WithHTTPClient(&http.Client{Transport: counter, Timeout: 10 * time.Second}))

		// Charge, replay, mismatch.
		req := chargeRequest("order-1", client.Reais("100.50"), recv.URL+"/pix")
		charge, err := c.CreateCharge(ctx, req)
		require.NoError(t, err)
		require.Equal(t, http.StatusCreated, charge.StatusCode)
		require.Len(t, charge.PaymentID, 36)
		require.Equal(t, "order-1", charge.ExternalID)
		require.Equal(t, client.Centavos(10050), charge.Amount)
		require.Equal(t, client.StatusPending, charge.Status)
		require.Regexp(t, `^000201.*6304[0-9A-F]{4}$`, charge.QRCode)
		require.True(t, charge.ExpiresAt.After(time.Now()))
		require.NotEmpty(t, charge.IdempotencyKey)
		require.NotEmpty(t, charge.RequestID)
		require.Equal(t, 1, charge.Attempts)
		require.False(t, charge.IdempotentReplayed)
		require.Equal(t, 100, charge.RateLimit.Limit)
		require.Equal(t, 99, charge.RateLimit.Remaining)

		req.IdempotencyKey = charge.IdempotencyKey
		again, err := c.CreateCharge(ctx, req)
		require.NoError(t, err)
		require.True(t, again.IdempotentReplayed)
		require.Equal(t, charge.PaymentID, again.PaymentID)
		req.Amount = client.Reais("100.51")
		_, err = c.CreateCharge(ctx, req)
		require.True(t, client.IsIdempotencyMismatch(err), "%v", err)

		// Pay it; the webhook arrives typed.
		s.pay(t, charge.PaymentID)
		paid := waitEvent(t, events, client.EventCashinPaid)
		require.Equal(t, charge.PaymentID, paid.PaymentID)
		require.Equal(t, client.Reais("100.50"), paid.Value)
		require.Equal(t, client.Reais("0.10"), paid.Tax)
		require.Equal(t, client.StatusPaid, paid.StatusTransaction)
		require.NotNil(t, paid.PaidAmount)
		require.Equal(t, client.Reais("100.50"), *paid.PaidAmount)
		require.False(t, paid.AmountMismatch)

		bal, err := c.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, client.Reais("100.40"), bal.Available)
		require.Zero(t, bal.Pending)
		require.Equal(t, "BRL", bal.Currency)
		require.False(t, bal.Timestamp.IsZero())

		// Lookup by each id and by both.
		for _, q := range []client.LookupQuery{{PaymentID: charge.PaymentID}, {ExternalID: "order-1"},
			{PaymentID: charge.PaymentID, ExternalID: "order-1"}} {
			tx, err := c.Lookup(ctx, q)
			require.NoError(t, err, "%+v", q)
			require.Equal(t, charge.PaymentID, tx.PaymentID)
			require.Equal(t, "order-1", tx.ExternalID)
			require.Equal(t, client.TypeCashin, tx.Type)
			require.Equal(t, client.StatusPaid, tx.Status)
			require.Equal(t, client.Reais("100.50"), tx.Amount)
			require.Equal(t, client.Reais("0.10"), tx.Tax)
			require.NotNil(t, tx.ConfirmedDate)
			require.NotNil(t, tx.PaidAmount)
			require.Equal(t, client.Reais("100.50"), *tx.PaidAmount)
			require.False(t, tx.AmountMismatch)
		}

		// Error helpers: 404 (wallet and gateway bodies), 422, 401.
		_, err = c.Lookup(ctx, client.LookupQuery{ExternalID: "no-such-order"})
		require.True(t, client.IsNotFound(err), "%v", err)
		var apiErr *client.Error
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, http.StatusNotFound, apiErr.StatusCode)
		require.Equal(t, "Transação não encontrada.", apiErr.Message)
		require.NotEmpty(t, apiErr.Response.RequestID)
		_, err = c.Refund(ctx, "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9")
		require.True(t, client.IsNotFound(err), "%v", err)
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, "Not Found", apiErr.Err)

		_, err = c.CreatePayout(ctx, client.PayoutRequest{Amount: client.Reais("1000000"), Description: "too much",
			CallbackURL: recv.URL + "/payout", CreditParty: client.CreditParty{KeyType: client.KeyEmail, Key: "f@example.com"}})
		require.True(t, client.IsInsufficientBalance(err), "%v", err)
		require.False(t, client.IsNotFound(err))
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, http.StatusUnprocessableEntity, apiErr.StatusCode)
		require.Equal(t, "Unprocessable Entity", apiErr.Err)
		require.NotEmpty(t, apiErr.Details)
		require.Equal(t, "amount", apiErr.Details[0].Field)
		require.Equal(t, 1, apiErr.Response.Attempts, "a 422 is not retried")

		bad, err := client.New(s.URL, s.creds.ClientID, "sk_test_wrong")
		require.NoError(t, err)
		_, err = bad.Balance(ctx)
		require.True(t, client.IsUnauthorized(err), "%v", err)

		// Payout and refund.
		payout, err := c.CreatePayout(ctx, client.PayoutRequest{Amount: client.Reais("10"), Description: "fornecedor",
			CallbackURL: recv.URL + "/payout", ExternalID: "payout-1",
			CreditParty: client.CreditParty{Name: "João", KeyType: client.KeyEmail, Key: "joao@example.com"}})
		require.NoError(t, err)
		require.Equal(t, "payout-1", payout.ExternalID)
		require.Equal(t, client.Reais("10"), payout.Amount)
		require.Equal(t, client.Reais("0.50"), payout.Tax)
		require.Equal(t, client.StatusPending, payout.Status)
		out := waitEvent(t, events, client.EventCashoutPaid)
		require.Equal(t, payout.TransactionID, out.TransactionID)

		refund, err := c.CreateRefund(ctx, client.RefundRequest{ExternalID: "order-1", Amount: client.Reais("5.25"), Reason: "devolvido"})
		require.NoError(t, err)
		require.Equal(t, charge.PaymentID, refund.PaymentID)
		require.Equal(t, client.Reais("5.25"), refund.Amount)
		refunded := waitEvent(t, events, client.EventRefundCompleted)
		require.Equal(t, refund.RefundID, refunded.RefundID)
		rd, err := c.Refund(ctx, refund.RefundID)
		require.NoError(t, err)
		require.Equal(t, "COMPLETED", rd.Status)
		require.Equal(t, "devolvido", *rd.Reason)
		require.NotNil(t, rd.SettledAt)

		bal, err = c.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, client.Reais("84.65"), bal.Available) // 100.40 - 10.50 - 5.25

		// Deliveries, and a manual retry that arrives again with the same id.
		dl, err := c.Deliveries(ctx, charge.PaymentID)
		require.NoError(t, err)
		require.NotEmpty(t, dl.Deliveries)
		first := dl.Deliveries[0]
		require.Equal(t, client.EventCashinPaid, first.Event)
		require.Equal(t, paid.ID, first.EventID)
		require.Equal(t, "delivered", first.Status)
		require.NotEmpty(t, first.Attempts)
		require.Equal(t, http.StatusNoContent, *first.Attempts[0].StatusCode)
		acc, err := c.RetryDelivery(ctx, first.EventID)
		require.NoError(t, err)
		require.Equal(t, http.StatusAccepted, acc.StatusCode)
		again2 := waitEvent(t, events, client.EventCashinPaid)
		require.Equal(t, paid.ID, again2.ID)
		_, err = c.Deliveries(ctx, "5e6f7a8b-9c0d-4e1f-a2b3-c4d5e6f7a8b9")
		require.True(t, client.IsNotFound(err), "%v", err)
		_, err = c.RetryDelivery(ctx, "evt_nosuchevent")
		require.True(t, client.IsNotFound(err), "%v", err)

		// History over several pages.
		for i := 2; i <= 5; i++ {
			_, err := c.CreateCharge(ctx, chargeRequest("order-"+itoa(int64(i)), client.Centavos(int64(100*i)), recv.URL+"/pix"))
			require.NoError(t, err)
		}
		before := counter.get("GET /api/v1/wallet/transactions")
		seen := map[string]bool{}
		var order []string
		var times []time.Time
		for tx, err := range c.History(ctx, client.HistoryQuery{Limit: 2}) {
			require.NoError(t, err)
			require.False(t, seen[tx.PaymentID], "repeated %s", tx.PaymentID)
			seen[tx.PaymentID] = true
			order = append(order, tx.ExternalID)
			times = append(times, tx.CreatedAt)
		}
		// Newest first; two charges created in the same millisecond come in
		// the order of their ids, so only the times are compared in order.
		require.ElementsMatch(t, []string{"order-5", "order-4", "order-3", "order-2", "payout-1", "order-1"}, order)
		require.True(t, slices.IsSortedFunc(times, func(a, b time.Time) int { return b.Compare(a) }), "newest first: %v", times)
		require.Equal(t, 3, counter.get("GET /api/v1/wallet/transactions")-before, "pages read")

		var payouts []client.Transaction
		for tx, err := range c.History(ctx, client.HistoryQuery{Limit: 1, Type: client.TypeCashout}) {
			require.NoError(t, err)
			payouts = append(payouts, tx)
		}
		require.Len(t, payouts, 1)
		require.Equal(t, payout.TransactionID, payouts[0].PaymentID)
		require.Equal(t, client.StatusPaid, payouts[0].Status)

		n := 0
		for _, err := range c.History(ctx, client.HistoryQuery{Limit: 2}) {
			require.NoError(t, err)
			n++
			if n == 3 {
				break
			}
		}
		require.Equal(t, 3, n)

		for _, err := range c.History(ctx, client.HistoryQuery{Limit: 1000}) {
			require.True(t, client.IsBadRequest(err), "%v", err)
		}

		// A cancelled context stops a call.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		_, err = c.Balance(cctx)
		require.ErrorIs(t, err, context.Canceled)
	})
}

// TestClientRateLimited runs against serve --rate-limit 3: the client waits out
// Retry-After (through WithSleep, so the test does not wait a minute) and
// gives up after its retries with an Error that carries RetryAfter.
func TestClientRateLimited(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		s := startClientServe(t, dbURL, "--rate-limit", "3")
		ctx := t.Context()
		var mu sync.Mutex
		var waits []time.Duration
		c := s.client(t, client.WithMaxRetries(2), client.WithSleep(func(ctx context.Context, d time.Duration) error {
			mu.Lock()
			waits = append(waits, d)
			mu.Unlock()
			return ctx.Err()
		}))
		for i := range 3 {
			b, err := c.Balance(ctx)
			require.NoError(t, err)
			require.Equal(t, 3, b.RateLimit.Limit)
			require.Equal(t, 2-i, b.RateLimit.Remaining)
			require.Equal(t, 1, b.Attempts)
		}
		_, err := c.Balance(ctx)
		require.True(t, client.IsRateLimited(err), "%v", err)
		e := client.AsError(err)
		require.Equal(t, "Too Many Requests", e.Err)
		require.Equal(t, 3, e.Response.Attempts, "one attempt and two retries")
		require.Equal(t, 3, e.Response.RateLimit.Limit)
		require.Zero(t, e.Response.RateLimit.Remaining)
		require.Greater(t, e.RetryAfter, time.Duration(0))
		require.LessOrEqual(t, e.RetryAfter, time.Minute)
		mu.Lock()
		require.Len(t, waits, 2, "slept before each retry")
		for _, w := range waits {
			require.Greater(t, w, time.Duration(0))
			require.LessOrEqual(t, w, time.Minute)
		}
		mu.Unlock()

		// With the real sleep, the context ends the wait for Retry-After.
		real := s.client(t)
		dctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		_, err = real.Balance(dctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.False(t, client.IsRateLimited(err))

		// WithMaxRetries(0): the 429 comes back at once.
		none := s.client(t, client.WithMaxRetries(0))
		_, err = none.Balance(ctx)
		require.True(t, client.IsRateLimited(err), "%v", err)
		require.Equal(t, 1, client.AsError(err).Response.Attempts)
	})
}
