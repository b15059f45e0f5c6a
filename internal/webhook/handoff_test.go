package webhook_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
		f := setupWith(t, open(t), true)
		rec := newReceiver(t, nil, 0)
		url := rec.srv.URL + "/hook"
		f.disp.Interval = time.Hour
		f.run(t)
		require.Eventually(t, func() bool { _, _, n := f.disp.Reserve(1); f.disp.Release(n); return n == 1 },
			5*time.Second, time.Millisecond)

		paid := f.everyEventKind(t, url)
		require.Eventually(t, func() bool { return rec.count() == 8 }, 20*time.Second, 5*time.Millisecond,
			"all eight events delivered without a claim")

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
		require.Equal(t, everyEventKindSent, seen)
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			for _, d := range f.deliveries(ct, paid) {
				assert.Equal(ct, "delivered", d.Status, d.EventID)
				assert.Len(ct, d.Attempts, 1, d.EventID)
			}
		}, 10*time.Second, 5*time.Millisecond, "each attempt recorded, each event delivered")
		require.Equal(t, 8, rec.count(), "nothing sent twice")
	})
}
