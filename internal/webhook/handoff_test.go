package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/gateway"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/webhooksig"
)

// TestEventsWrittenHereNeedNoClaim runs a dispatcher with no tick and
// gives the gateway it as its courier but no way to wake it: every kind of
// event — cash-in paid and cancelled, refunds completed and failed, payouts
// paid, failed and reversed — must still be delivered, signed, once, because
// each is written leased to this node and handed over after its commit.
func TestEventsWrittenHereNeedNoClaim(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		f := setup(t, open(t))
		ctx := context.Background()
		rec := newReceiver(t, nil, 0)
		url := rec.srv.URL + "/hook"
		f.disp.Interval = time.Hour
		f.gw.Courier = f.disp
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { f.disp.Run(runCtx); close(done) }()
		t.Cleanup(func() {
			stop()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Error("the dispatcher did not stop: a reservation was never given back")
			}
		})
		require.Eventually(t, func() bool { _, _, n := f.disp.Reserve(1); f.disp.Release(n); return n == 1 },
			5*time.Second, time.Millisecond)

		paid := f.paidCharge(t, "c1", url)
		_, _, err := f.gw.CreateRefund(ctx, f.c, &gateway.RefundRequest{PaymentID: paid, Amount: json.RawMessage("1.00")}, "", []byte(`{"r":1}`))
		require.NoError(t, err)
		_, _, err = f.gw.CreateRefund(ctx, f.c, &gateway.RefundRequest{PaymentID: paid, Amount: json.RawMessage("1.00"), Reason: "sandbox:fail"}, "", []byte(`{"r":2}`))
		require.NoError(t, err)
		resp, _, err := f.gw.CreateCharge(ctx, f.c, chargeReq("c2", url), []byte(`{"c":2}`))
		require.NoError(t, err)
		_, err = f.gw.ExpireCharge(ctx, f.c, resp.PaymentID)
		require.NoError(t, err)
		for i, key := range []string{"a@example.com", "b@fail.sandbox", "c@reverse.sandbox"} {
			ext := []string{"p1", "p2", "p3"}[i]
			_, _, err := f.gw.CreatePayout(ctx, f.c, &gateway.PayoutRequest{Amount: json.RawMessage("1"), Description: "d", CallbackURL: url,
				ExternalID: &ext, CreditParty: &gateway.CreditParty{Name: "n", KeyType: "EMAIL", Key: key}}, "", []byte(`{"p":"`+ext+`"}`))
			require.NoError(t, err)
		}
		for i := 0; i < 3; i++ {
			f.clock.Advance(2 * time.Second)
			_, err = f.gw.SettleDue(ctx, 100)
			require.NoError(t, err)
			_, err = f.gw.SettleRefundsDue(ctx, 100)
			require.NoError(t, err)
		}
		require.Eventually(t, func() bool { return rec.count() == 8 }, 20*time.Second, 5*time.Millisecond,
			"all eight events delivered without a claim (got %d)", rec.count())

		verifier, err := webhooksig.NewVerifier(f.cred.WebhookSecret, webhooksig.WithClock(f.clock.Now))
		require.NoError(t, err)
		rec.mu.Lock()
		seen := map[string]int{}
		for i, h := range rec.got {
			require.NoError(t, verifier.Verify(h, rec.bodies[i]))
			var body map[string]any
			require.NoError(t, json.Unmarshal(rec.bodies[i], &body))
			seen[body["event"].(string)]++
		}
		rec.mu.Unlock()
		require.Equal(t, map[string]int{
			gateway.EventCashinPaid: 1, gateway.EventCashinCancelled: 1, gateway.EventRefundCompleted: 1, gateway.EventRefundFailed: 1,
			gateway.EventCashoutPaid: 2, gateway.EventCashoutFailed: 1, gateway.EventCashoutReversed: 1,
		}, seen)
		require.Eventually(t, func() bool {
			for _, d := range f.deliveries(t, paid) {
				if d.Status != "delivered" || len(d.Attempts) != 1 {
					return false
				}
			}
			return true
		}, 10*time.Second, 5*time.Millisecond, "each attempt recorded, each event delivered")
		require.Equal(t, 8, rec.count(), "nothing sent twice")
	})
}
