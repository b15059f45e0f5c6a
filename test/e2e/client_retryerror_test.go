package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/client"
	"github.com/pixgate/pixgate/internal/testkit"
)

// set sets how many failures of one kind to inject for "METHOD /path".
func (p *faultProxy) set(kind map[string]int, k string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kind[k] = n
}

// lostIDs are the ids (a charge's payment_id, a payout's transaction_id, a
// refund's refund_id) of the answers the server sent for k.
func (p *faultProxy) lostIDs(t *testing.T, k string) []string {
	t.Helper()
	var ids []string
	for _, a := range p.answers(k) {
		var body struct {
			TransactionID string `json:"transaction_id"`
			RefundID      string `json:"refund_id"`
			PaymentID     string `json:"payment_id"`
		}
		require.NoError(t, json.Unmarshal([]byte(a), &body), "%s", a)
		id := body.PaymentID
		if body.TransactionID != "" {
			id = body.TransactionID
		} else if body.RefundID != "" {
			id = body.RefundID
		}
		ids = append(ids, id)
	}
	return ids
}

func payoutIDs(t *testing.T, c *client.Client) []string {
	t.Helper()
	var ids []string
	for tx, err := range c.History(t.Context(), client.HistoryQuery{Type: client.TypeCashout}) {
		require.NoError(t, err)
		ids = append(ids, tx.PaymentID)
	}
	return ids
}

// TestClientRetryErrorCarriesTheKey: when every attempt of a creation loses its
// answer, the error is a *RetryError carrying the Idempotency-Key all the
// attempts sent (the generated one, or the caller's); calling again with
// that key replays the transaction the lost answers held, so a payout,
// a charge and a refund each exist once and the balance is charged once.
// Regenerating the key for the second call would make a second payout and a
// second refund, which the counts below would show.
func TestClientRetryErrorCarriesTheKey(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		s := startClientServe(t, dbURL)
		ctx := t.Context()
		direct := s.client(t)

		proxy, proxyURL := newFaultProxy(t, s.URL)
		noReuse := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		c := s.clientAt(t, proxyURL, client.WithHTTPClient(noReuse), client.WithMaxRetries(2),
			client.WithBackoff(time.Millisecond, 5*time.Millisecond))

		// A charge with the caller's key: every answer lost.
		const chargePath = "POST /api/v1/gateway/request-qrcode"
		chargeKey := client.NewIdempotencyKey()
		chReq := chargeRequest("retry-key-1", client.Reais("50"), "https://merchant.example.com/h")
		chReq.IdempotencyKey = chargeKey
		proxy.set(proxy.drop, chargePath, 3)
		_, err := c.CreateCharge(ctx, chReq)
		re := client.AsRetryError(err)
		require.NotNil(t, re, "%v", err)
		require.Equal(t, chargeKey, re.Key, "the caller's key")
		require.Equal(t, 3, re.Attempts)
		require.Equal(t, []string{chargeKey, chargeKey, chargeKey}, proxy.keys(chargePath))
		ch, err := c.CreateCharge(ctx, chReq)
		require.NoError(t, err)
		require.True(t, ch.IdempotentReplayed)
		require.Equal(t, proxy.lostIDs(t, chargePath)[0], ch.PaymentID)
		s.pay(t, ch.PaymentID)

		// A payout with no key of the caller's (the case): the
		// generated key is in the error, and repeating with it pays once.
		const payoutPath = "POST /api/v1/gateway/pix-payment"
		payReq := client.PayoutRequest{Amount: client.Reais("7.77"), Description: "retry me",
			CallbackURL: "https://merchant.example.com/p",
			CreditParty: client.CreditParty{KeyType: client.KeyEmail, Key: "f@example.com"}}
		proxy.set(proxy.drop, payoutPath, 3)
		_, err = c.CreatePayout(ctx, payReq)
		require.Error(t, err)
		var asRetry *client.RetryError
		require.ErrorAs(t, err, &asRetry)
		require.Nil(t, client.AsError(err), "no answer arrived: a network error inside")
		require.ErrorContains(t, err, asRetry.Key, "the message names the key to repeat with")
		sent := proxy.keys(payoutPath)
		require.Len(t, sent, 3)
		require.NotEmpty(t, sent[0])
		require.Equal(t, []string{asRetry.Key, asRetry.Key, asRetry.Key}, sent, "the key in the error is the one sent")
		lost := proxy.lostIDs(t, payoutPath)
		require.Len(t, lost, 3)
		require.Equal(t, []string{lost[0], lost[0], lost[0]}, lost, "the server created one payout and replayed it")
		require.Equal(t, []string{lost[0]}, payoutIDs(t, direct))

		payReq.IdempotencyKey = asRetry.Key
		payout, err := c.CreatePayout(ctx, payReq)
		require.NoError(t, err)
		require.True(t, payout.IdempotentReplayed)
		require.Equal(t, lost[0], payout.TransactionID)
		require.Equal(t, asRetry.Key, payout.IdempotencyKey)
		require.Equal(t, []string{payout.TransactionID}, payoutIDs(t, direct), "exactly one payout")

		// A refund with the caller's key, every answer lost, then repeated.
		const refundPath = "POST /api/v1/gateway/refund"
		refReq := client.RefundRequest{PaymentID: ch.PaymentID, Amount: client.Reais("1"),
			IdempotencyKey: client.NewIdempotencyKey()}
		proxy.set(proxy.drop, refundPath, 3)
		_, err = c.CreateRefund(ctx, refReq)
		re = client.AsRetryError(err)
		require.NotNil(t, re, "%v", err)
		require.Equal(t, refReq.IdempotencyKey, re.Key)
		refund, err := c.CreateRefund(ctx, refReq)
		require.NoError(t, err)
		require.True(t, refund.IdempotentReplayed)
		require.Equal(t, proxy.lostIDs(t, refundPath)[0], refund.RefundID)

		var tx *client.LookupResult
		require.Eventually(t, func() bool {
			tx, err = direct.Lookup(ctx, client.LookupQuery{PaymentID: ch.PaymentID})
			return err == nil && tx.RefundedAmount > 0
		}, 10*time.Second, 50*time.Millisecond)
		require.Equal(t, client.Reais("1"), tx.RefundedAmount, "refunded once")
		bal, err := direct.Balance(ctx)
		require.NoError(t, err)
		require.Equal(t, client.Reais("50")-client.Reais("0.10")-client.Reais("7.77")-client.Reais("0.50")-client.Reais("1"),
			bal.Available, "each operation held once")
	})
}

// TestClientRetryErrorKinds: 5xx to the last attempt, and a context that ends
// between attempts, leave a creation's outcome unknown (*RetryError, with
// the answer or the context's error inside); an answer that settles it (a
// 400) is not a *RetryError but still names the key it was sent with.
func TestClientRetryErrorKinds(t *testing.T) {
	t.Parallel()
	testkit.ForEachDatabaseURL(t, func(t *testing.T, dbURL string) {
		s := startClientServe(t, dbURL)
		ctx := t.Context()
		direct := s.client(t)
		ch, err := direct.CreateCharge(ctx, chargeRequest("kinds-1", client.Reais("20"), "https://merchant.example.com/h"))
		require.NoError(t, err)
		s.pay(t, ch.PaymentID)

		proxy, proxyURL := newFaultProxy(t, s.URL)
		noReuse := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
		c := s.clientAt(t, proxyURL, client.WithHTTPClient(noReuse), client.WithMaxRetries(1),
			client.WithBackoff(time.Millisecond, time.Millisecond))
		const payoutPath = "POST /api/v1/gateway/pix-payment"
		req := client.PayoutRequest{Amount: client.Reais("2"), Description: "kinds",
			CallbackURL: "https://merchant.example.com/p",
			CreditParty: client.CreditParty{KeyType: client.KeyEmail, Key: "f@example.com"}}

		// 503 on every attempt: the *Error is found through the RetryError.
		proxy.set(proxy.fail503, payoutPath, 2)
		_, err = c.CreatePayout(ctx, req)
		re := client.AsRetryError(err)
		require.NotNil(t, re, "%v", err)
		require.Equal(t, 2, re.Attempts)
		e := client.AsError(err)
		require.NotNil(t, e)
		require.Equal(t, http.StatusServiceUnavailable, e.StatusCode)
		require.Equal(t, re.Key, e.Response.IdempotencyKey)
		require.Empty(t, payoutIDs(t, direct), "the 503s never reached the server")
		req.IdempotencyKey = re.Key
		first, err := c.CreatePayout(ctx, req)
		require.NoError(t, err)
		require.False(t, first.IdempotentReplayed)

		// The context ends while waiting to retry a lost answer.
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cancelling := s.clientAt(t, proxyURL, client.WithHTTPClient(noReuse),
			client.WithSleep(func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }))
		proxy.set(proxy.drop, payoutPath, 1)
		req.IdempotencyKey = client.NewIdempotencyKey()
		_, err = cancelling.CreatePayout(cctx, req)
		re = client.AsRetryError(err)
		require.NotNil(t, re, "%v", err)
		require.Equal(t, req.IdempotencyKey, re.Key)
		require.Equal(t, 1, re.Attempts)
		require.ErrorIs(t, err, context.Canceled)
		second, err := c.CreatePayout(ctx, req)
		require.NoError(t, err)
		require.True(t, second.IdempotentReplayed, "the lost payout is the one returned")
		require.ElementsMatch(t, []string{first.TransactionID, second.TransactionID}, payoutIDs(t, direct))

		// A 400 settles the request: not a RetryError.
		bad := req
		bad.IdempotencyKey = client.NewIdempotencyKey()
		bad.CallbackURL = ""
		_, err = c.CreatePayout(ctx, bad)
		require.Nil(t, client.AsRetryError(err), "%v", err)
		require.True(t, client.IsBadRequest(err), "%v", err)
		require.Equal(t, bad.IdempotencyKey, client.AsError(err).Response.IdempotencyKey)
		require.False(t, errors.Is(err, context.Canceled))
	})
}
