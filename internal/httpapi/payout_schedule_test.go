package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// scheduled creates a payout of amount for day and returns its answer.
func (b *bundle) scheduled(ext, amount, day string) response {
	b.t.Helper()
	p := batchItem(ext, amount)
	p["scheduled_date"] = day
	return b.do("POST", "/api/v1/gateway/pix-payment", p)
}

// runScheduled runs the scheduled-payouts task once.
func (b *bundle) runScheduled() int {
	b.t.Helper()
	n, err := b.gw.Transfers().RunScheduled(context.Background(), 100)
	require.NoError(b.t, err)
	return n
}

// advanceTo moves the bundle's clock to at (which must not be past).
func (b *bundle) advanceTo(at time.Time) {
	b.t.Helper()
	d := at.Sub(b.clock.Now())
	require.Positive(b.t, d, "the clock is already past %s", at)
	b.clock.Advance(d)
}

// TestScheduledDates: scheduled_date is a São Paulo date from tomorrow to
// 365 days ahead; today, earlier, later or not a date → 400 naming it.
func TestScheduledDates(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		// 23:59 in São Paulo is already the next day in UTC.
		b := setup(t, open, options{start: time.Date(2026, 12, 1, 23, 59, 0, 0, saoPaulo)})
		for _, day := range []string{"2026-12-01", "2026-11-30", "2027-12-02", "2026-12-1", "tomorrow"} {
			r := b.scheduled("bad-"+day, "1.00", day)
			require.Equal(t, http.StatusBadRequest, r.status, "%s: %s", day, r.body)
			require.Equal(t, "Invalid request parameters", r.json["message"])
			require.Equal(t, "scheduled_date", r.json["details"].([]any)[0].(map[string]any)["field"], day)
		}
		for _, day := range []string{"2026-12-02", "2027-12-01"} {
			r := b.scheduled("ok-"+day, "1.00", day)
			require.Equal(t, http.StatusOK, r.status, "%s: %s", day, r.body)
			require.Equal(t, "SCHEDULED", r.json["status"])
			require.Equal(t, day, r.json["scheduled_date"])
		}
	})
}

// TestScheduledPayoutStartsAtItsDay: nothing is reserved and no balance
// is checked when it is scheduled; lookup shows it PENDING with its date;
// at 23:59 São Paulo it still waits, at 00:00 of its day amount + tax is
// reserved and it is sent (PAID once settled), and it can no longer be
// cancelled.
func TestScheduledPayoutStartsAtItsDay(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: time.Date(2026, 12, 1, 23, 0, 0, 0, saoPaulo), fee: pix.FeeRule{Fixed: 50}})
		r := b.scheduled("sched-1", "30.00", "2026-12-02")
		require.Equal(t, http.StatusOK, r.status, "scheduling checks no balance: %s", r.body)
		require.Equal(t, json.Number("0.5"), r.json["tax"])
		id := r.json["transaction_id"].(string)
		b.fund("40.00")
		before := b.available()
		look := b.lookup(id)
		require.Equal(t, "PENDING", look["status"])
		require.Equal(t, "2026-12-02", look["scheduled_date"])
		again := b.scheduled("sched-1", "30.00", "2026-12-02")
		require.Equal(t, "true", again.header.Get("Idempotent-Replayed"))
		require.Equal(t, "SCHEDULED", again.json["status"])

		b.advanceTo(time.Date(2026, 12, 1, 23, 59, 59, 0, saoPaulo))
		require.Zero(t, b.runScheduled(), "its day has not begun")
		require.Equal(t, before, b.available())
		b.advanceTo(time.Date(2026, 12, 2, 0, 0, 0, 0, saoPaulo))
		// Its day has begun: no cancel, even before the task has run.
		c := b.do("POST", "/api/v1/gateway/pix-payment/"+id+"/cancel", nil)
		require.Equal(t, http.StatusUnprocessableEntity, c.status, string(c.body))
		require.Equal(t, 1, b.runScheduled())
		require.Zero(t, b.runScheduled(), "started once")
		require.Equal(t, before-3050, b.available(), "amount + tax reserved")
		b.settle()
		require.Equal(t, "PAID", b.lookup(id)["status"])
		require.Equal(t, before-3050, b.available())
	})
}

// TestScheduledDayAcrossForeignDST: the day starts at midnight in São
// Paulo whatever other zones do that night (2027-03-14, when New York
// moves its clocks; São Paulo keeps UTC-3): 02:59:59 UTC waits, 03:00 UTC
// starts.
func TestScheduledDayAcrossForeignDST(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: time.Date(2027, 3, 14, 2, 0, 0, 0, time.UTC)})
		b.fund("10.00")
		ny, err := time.LoadLocation("America/New_York")
		require.NoError(t, err)
		require.NotEqual(t, time.Date(2027, 3, 13, 12, 0, 0, 0, ny).Sub(time.Date(2027, 3, 14, 12, 0, 0, 0, ny)), -24*time.Hour,
			"New York changes its clocks that night")
		// The São Paulo date is still 2027-03-13.
		r := b.scheduled("dst", "1.00", "2027-03-14")
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		b.advanceTo(time.Date(2027, 3, 14, 2, 59, 59, 0, time.UTC))
		require.Zero(t, b.runScheduled())
		b.advanceTo(time.Date(2027, 3, 14, 3, 0, 0, 0, time.UTC))
		require.Equal(t, 1, b.runScheduled())
	})
}

// TestScheduledPayoutFailsWithoutBalance: a payout whose balance does not
// hold it on its day fails: CANCELLED, pix.cashout.failed with reason
// "Insufficient balance", nothing taken.
func TestScheduledPayoutFailsWithoutBalance(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: time.Date(2026, 12, 1, 12, 0, 0, 0, saoPaulo)})
		b.fund("5.00")
		id := b.scheduled("poor", "9.00", "2026-12-02").json["transaction_id"].(string)
		b.clock.Advance(12 * time.Hour)
		require.Equal(t, 1, b.runScheduled())
		require.Equal(t, "CANCELLED", b.lookup(id)["status"])
		require.Equal(t, int64(500), b.available())
		ev := b.eventBody(id, pix.EventCashoutFailed)
		require.Equal(t, "CANCELLED", ev["statusTransaction"])
		require.Equal(t, "Insufficient balance", ev["reason"])
		require.Zero(t, b.runScheduled())
	})
}

// TestCancelScheduledPayout: while SCHEDULED, cancel → 200 CANCELLED and
// pix.cashout.cancelled; it never starts; cancelling again, a payout
// never scheduled → 422; unknown or another client's → 404.
func TestCancelScheduledPayout(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: time.Date(2026, 12, 1, 12, 0, 0, 0, saoPaulo)})
		b.fund("10.00")
		id := b.scheduled("to-cancel", "1.00", "2026-12-03").json["transaction_id"].(string)
		other := b.otherClient()
		require.Equal(t, http.StatusNotFound, b.do("POST", "/api/v1/gateway/pix-payment/"+id+"/cancel", nil, other).status)
		c := b.do("POST", "/api/v1/gateway/pix-payment/"+id+"/cancel", nil)
		require.Equal(t, http.StatusOK, c.status, string(c.body))
		require.Equal(t, "CANCELLED", c.json["data"].(map[string]any)["status"])
		ev := b.eventBody(id, pix.EventCashoutCancelled)
		require.Equal(t, "CANCELLED", ev["statusTransaction"])
		require.Equal(t, http.StatusUnprocessableEntity, b.do("POST", "/api/v1/gateway/pix-payment/"+id+"/cancel", nil).status)
		b.clock.Advance(72 * time.Hour)
		require.Zero(t, b.runScheduled(), "a cancelled payout never starts")
		require.Equal(t, int64(1000), b.available())

		now := b.do("POST", "/api/v1/gateway/pix-payment", batchItem("now", "1.00"))
		r := b.do("POST", "/api/v1/gateway/pix-payment/"+now.json["transaction_id"].(string)+"/cancel", nil)
		require.Equal(t, http.StatusUnprocessableEntity, r.status, string(r.body))
		require.Equal(t, http.StatusNotFound, b.do("POST", "/api/v1/gateway/pix-payment/7d9f0335-8dcc-4054-9bf9-0dbd61d36906/cancel", nil).status)
	})
}

// TestSandboxRunSchedule: run-schedule starts a scheduled payout now; a
// second run, or one of a payout never scheduled, is 422.
func TestSandboxRunSchedule(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{})
		b.fund("10.00")
		day := time.Now().In(saoPaulo).AddDate(0, 0, 10).Format(pix.DateLayout)
		id := b.scheduled("run-now", "2.00", day).json["transaction_id"].(string)
		r := b.do("POST", "/api/v1/sandbox/payouts/"+id+"/run-schedule", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		require.Equal(t, int64(800), b.available())
		require.Equal(t, http.StatusUnprocessableEntity, b.do("POST", "/api/v1/sandbox/payouts/"+id+"/run-schedule", nil).status)
		b.settle()
		require.Equal(t, "PAID", b.lookup(id)["status"])
	})
}

// TestScheduledStartsOnceAcrossNodes: two nodes running the task at the
// same moment start each payout once: one reservation each.
func TestScheduledStartsOnceAcrossNodes(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, open func(t *testing.T) *store.DB) {
		b := setup(t, open, options{start: time.Date(2026, 12, 1, 12, 0, 0, 0, saoPaulo)})
		b.fund("100.00")
		for i := range 20 {
			require.Equal(t, http.StatusOK, b.scheduled("n-"+string(rune('a'+i)), "1.00", "2026-12-02").status)
		}
		b.clock.Advance(12 * time.Hour)
		nodes := []interface {
			RunScheduled(context.Context, int) (int, error)
		}{b.gw.Transfers(), b.node(b.psp).Transfers(), b.node(b.psp).Transfers()}
		var wg sync.WaitGroup
		counts := make([]int, len(nodes))
		for i, n := range nodes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				counts[i], _ = n.RunScheduled(context.Background(), 100)
			}()
		}
		wg.Wait()
		require.Equal(t, 20, counts[0]+counts[1]+counts[2])
		require.Equal(t, int64(10000-2000), b.available())
	})
}
