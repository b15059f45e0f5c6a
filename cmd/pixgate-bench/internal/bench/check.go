package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// maxRejectedChecks bounds how many refused operations the check confirms
// absent (a rate-limited run can refuse very many).
const maxRejectedChecks = 2000

// maxListedMismatches bounds the mismatches the report lists.
const maxListedMismatches = 50

// view is a transaction as POST /api/v1/wallet/transaction shows it.
type view struct {
	PaymentID  string     `json:"payment_id"`
	ExternalID *string    `json:"external_id"`
	Status     string     `json:"status"`
	Amount     pix.Amount `json:"amount"`
	Type       string     `json:"type"`
	Tax        pix.Amount `json:"tax"`
}

// lookup finds one of c's transactions by payment_id or external_id. found
// is false on 404.
func (r *runner) lookup(ctx context.Context, c *clientState, field, value string) (view, bool, error) {
	body, _ := json.Marshal(map[string]string{field: value})
	st, b, err := r.callRetry(ctx, c.cred, http.MethodPost, "/api/v1/wallet/transaction", body)
	if err != nil {
		return view{}, false, err
	}
	switch st {
	case http.StatusOK:
	case http.StatusNotFound:
		return view{}, false, nil
	default:
		return view{}, false, fmt.Errorf("lookup answered %d: %s", st, snippet(b))
	}
	var resp struct {
		Data view `json:"data"`
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		return view{}, false, fmt.Errorf("unreadable lookup answer: %s", snippet(b))
	}
	return resp.Data, true, nil
}

// settled reports whether a payout's status is final for the outcome its key
// leads to (a returned payout reads PAID for one more delay, then REVERSED).
func settled(status, want string) bool {
	switch status {
	case "PENDING":
		return false
	case "PAID":
		return want != "REVERSED"
	}
	return true
}

// checker collects mismatches.
type checker struct {
	mu         sync.Mutex
	mismatches []string
	count      int
}

func (k *checker) fail(format string, args ...any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.count++
	if len(k.mismatches) < maxListedMismatches {
		k.mismatches = append(k.mismatches, fmt.Sprintf(format, args...))
	}
}

func extOf(v view) string {
	if v.ExternalID == nil {
		return ""
	}
	return *v.ExternalID
}

// check verifies, through the API only, every operation the bench sent:
// acknowledged charges and payouts are found by payment_id with their
// amount, tax and expected status (payouts once settled, waiting up to
// SettleTimeout); operations with an unknown outcome are looked up by
// external_id; refused ones must not exist; and each client's balance must
// equal its balance before the run plus what those operations imply.
func (r *runner) check(ctx context.Context) CheckReport {
	start := time.Now()
	deadline := start.Add(r.cfg.SettleTimeout)
	k := &checker{}
	rep := CheckReport{Clients: len(r.clients)}
	pendingLeft, drained := r.waitPending(ctx, k, start, deadline)
	r.runEach(ctx, r.lookups(k, deadline, &rep))
	r.checkBalances(ctx, k, pendingLeft)
	if ctx.Err() != nil {
		k.fail("check interrupted: %v", ctx.Err())
	}
	rep.Mismatches, rep.MismatchCount = k.mismatches, k.count
	if rep.Mismatches == nil {
		rep.Mismatches = []string{}
	}
	rep.OK = k.count == 0
	rep.PendingDrainedS = drained.Seconds()
	if r.sink != nil && ctx.Err() == nil {
		rep.WebhooksDrainedS, rep.WebhooksPending = r.waitOutbox(ctx, start, deadline)
	}
	rep.DurationS = time.Since(start).Seconds()
	return rep
}

// waitPending lets pending payouts settle before they are looked up one
// by one: it waits, until deadline, for every client's pending balance to
// reach 0, and returns what each client still had pending then and how
// long after start the last one drained.
func (r *runner) waitPending(ctx context.Context, k *checker, start, deadline time.Time) (map[string]int64, time.Duration) {
	pendingLeft := map[string]int64{}
	var drained time.Duration
	var mu sync.Mutex
	_ = r.forEachClient(ctx, func(ctx context.Context, c *clientState) error {
		for {
			b, err := r.readBalance(ctx, c)
			if err != nil {
				k.fail("client %s: %v", c.cred.ID, err)
				return nil
			}
			if b.pending == 0 || time.Now().After(deadline) {
				mu.Lock()
				if b.pending != 0 {
					pendingLeft[c.cred.ID] = b.pending
				}
				drained = max(drained, time.Since(start))
				mu.Unlock()
				return nil
			}
			if sleep(ctx, 100*time.Millisecond) != nil {
				return nil
			}
		}
	})
	return pendingLeft, drained
}

// lookups is one lookup per operation the bench sent (payouts: polled
// until settled, up to deadline), with at most maxRejectedChecks of the
// refused ones, drawn at random; it counts them in rep.
func (r *runner) lookups(k *checker, deadline time.Time, rep *CheckReport) []func(ctx context.Context) {
	var items []func(ctx context.Context)
	for _, c := range r.clients {
		c.mu.Lock()
		for _, rec := range c.charges {
			items = append(items, func(ctx context.Context) { r.checkCharge(ctx, k, c, rec) })
		}
		for _, rec := range c.payouts {
			items = append(items, func(ctx context.Context) { r.checkPayout(ctx, k, c, rec, deadline) })
		}
		for _, rec := range c.unknown {
			items = append(items, func(ctx context.Context) { r.checkUnknown(ctx, k, c, rec, deadline) })
		}
		rep.Charges += len(c.charges)
		rep.Payouts += len(c.payouts)
		rep.Unknown += len(c.unknown)
		c.mu.Unlock()
	}
	var rejected []func(ctx context.Context)
	for _, c := range r.clients {
		c.mu.Lock()
		for _, rec := range c.rejected {
			rejected = append(rejected, func(ctx context.Context) { r.checkRejected(ctx, k, c, rec) })
		}
		c.mu.Unlock()
	}
	rep.Rejected = len(rejected)
	if len(rejected) > maxRejectedChecks {
		rand.Shuffle(len(rejected), func(i, j int) { rejected[i], rejected[j] = rejected[j], rejected[i] })
		rejected = rejected[:maxRejectedChecks]
	}
	rep.RejectedChecked = len(rejected)
	return append(items, rejected...)
}

// runEach runs items on CheckConcurrency workers, until ctx ends.
func (r *runner) runEach(ctx context.Context, items []func(ctx context.Context)) {
	work := make(chan func(ctx context.Context))
	var wg sync.WaitGroup
	for w := 0; w < r.cfg.CheckConcurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				if ctx.Err() == nil {
					f(ctx)
				}
			}
		}()
	}
	for _, f := range items {
		work <- f
	}
	close(work)
	wg.Wait()
}

// checkBalances compares each client's balance with its balance before
// the run plus what every operation found implies, and reports what was
// still pending at the settle timeout.
func (r *runner) checkBalances(ctx context.Context, k *checker, pendingLeft map[string]int64) {
	for _, c := range r.clients {
		if ctx.Err() != nil {
			break
		}
		wantAvail, wantPending := c.expectedBalance()
		got, err := r.readBalance(ctx, c)
		if err != nil {
			k.fail("%v", err)
			continue
		}
		if got.available != wantAvail || got.pending != wantPending {
			k.fail("client %s: balance available_cents=%d pending_cents=%d, but its operations imply available_cents=%d pending_cents=%d (difference %+d / %+d)",
				c.cred.ID, got.available, got.pending, wantAvail, wantPending, got.available-wantAvail, got.pending-wantPending)
		}
		if left := pendingLeft[c.cred.ID]; left != 0 {
			k.fail("client %s: %d centavos still pending after %s", c.cred.ID, left, r.cfg.SettleTimeout)
		}
	}
}

// expectedBalance is c's available and pending balance before the run
// plus what its operations, as found, imply.
func (c *clientState) expectedBalance() (available, pending int64) {
	available, pending = c.baseline.available, c.baseline.pending
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rec := range c.charges {
		if rec.status == "PAID" {
			available += int64(rec.amount - rec.tax)
		}
	}
	for _, rec := range c.payouts {
		a, p := payoutEffect(rec.status, rec.amount, rec.tax)
		available, pending = available+a, pending+p
	}
	for _, rec := range c.unknown {
		if !rec.found {
			continue
		}
		if rec.typ == "cashin" {
			if rec.status == "PAID" {
				available += int64(rec.amount - rec.tax)
			}
			continue
		}
		a, p := payoutEffect(rec.status, rec.amount, rec.tax)
		available, pending = available+a, pending+p
	}
	return available, pending
}

// waitOutbox waits, until deadline, for the server's outbox to hold no
// pending event, with the bench's webhook receiver still up: the webhooks of
// this run's operations are then delivered inside its own run instead of
// being retried against a receiver that is gone while the next run
// measures. It reads the count from the server's /metrics
// (pixgate_outbox_pending_events, every client's), so a server under test
// should serve nobody else. It returns when that was first seen, counted
// from start, and how many events were still pending if the deadline came
// first.
func (r *runner) waitOutbox(ctx context.Context, start, deadline time.Time) (float64, int64) {
	for {
		n, err := r.pendingEvents(ctx)
		if err != nil {
			r.progress("not waiting for webhooks: %v", err)
			return 0, 0
		}
		if n == 0 {
			return time.Since(start).Seconds(), 0
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return time.Since(start).Seconds(), n
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pendingEvents reads pixgate_outbox_pending_events from the server's
// /metrics.
func (r *runner) pendingEvents(ctx context.Context) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.Target+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("/metrics answered %d", resp.StatusCode)
	}
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "pixgate_outbox_pending_events "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, fmt.Errorf("/metrics: pixgate_outbox_pending_events %q: %w", v, err)
			}
			return int64(f), nil
		}
	}
	return 0, errors.New("/metrics has no pixgate_outbox_pending_events")
}

// payoutEffect is what a payout in status does to available and pending.
func payoutEffect(status string, amount, tax pix.Amount) (avail, pending int64) {
	switch status {
	case "PENDING":
		return -int64(amount + tax), int64(amount + tax)
	case "PAID":
		return -int64(amount + tax), 0
	case "REVERSED":
		return -int64(tax), 0 // the amount came back, the tax did not
	}
	return 0, 0 // CANCELLED: failed, amount and tax came back
}

func (r *runner) checkCharge(ctx context.Context, k *checker, c *clientState, rec *chargeRec) {
	v, found, err := r.lookup(ctx, c, "payment_id", rec.id)
	if err != nil {
		k.fail("client %s: charge %s: %v", c.cred.ID, rec.id, err)
		return
	}
	if !found {
		k.fail("client %s: acknowledged charge %s (%s) not found", c.cred.ID, rec.id, rec.ext)
		return
	}
	if v.PaymentID != rec.id || v.Type != "cashin" || extOf(v) != rec.ext || v.Amount != rec.amount {
		k.fail("client %s: charge %s reads payment_id=%s type=%s external_id=%s amount=%s; acknowledged %s %s",
			c.cred.ID, rec.id, v.PaymentID, v.Type, extOf(v), v.Amount, rec.ext, rec.amount)
	}
	c.mu.Lock()
	rec.status, rec.tax = v.Status, v.Tax
	pay := rec.pay
	c.mu.Unlock()
	var okStatus bool
	var want string
	switch pay {
	case payAcked:
		okStatus, want = v.Status == "PAID", "PAID"
	case payUnknown:
		okStatus, want = v.Status == "PAID" || v.Status == "PENDING", "PAID or PENDING"
	default:
		okStatus, want = v.Status == "PENDING" || v.Status == "CANCELLED", "PENDING (or CANCELLED once expired)"
	}
	if !okStatus {
		k.fail("client %s: charge %s (%s) reads %s, want %s", c.cred.ID, rec.id, rec.ext, v.Status, want)
	}
	if v.Tax < 0 || v.Tax > v.Amount {
		k.fail("client %s: charge %s tax %s outside 0..amount", c.cred.ID, rec.id, v.Tax)
	}
}

// pollSettled looks a payout up until it reads settled or the deadline passes.
func (r *runner) pollSettled(ctx context.Context, c *clientState, field, value, want string, deadline time.Time) (view, bool, error) {
	for {
		v, found, err := r.lookup(ctx, c, field, value)
		if err != nil || !found || settled(v.Status, want) || time.Now().After(deadline) {
			return v, found, err
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return v, found, err
		}
	}
}

func (r *runner) checkPayout(ctx context.Context, k *checker, c *clientState, rec *payoutRec, deadline time.Time) {
	v, found, err := r.pollSettled(ctx, c, "payment_id", rec.id, rec.want, deadline)
	if err != nil {
		k.fail("client %s: payout %s: %v", c.cred.ID, rec.id, err)
		return
	}
	if !found {
		k.fail("client %s: acknowledged payout %s (%s) not found", c.cred.ID, rec.id, rec.ext)
		return
	}
	c.mu.Lock()
	rec.status = v.Status
	c.mu.Unlock()
	if v.PaymentID != rec.id || v.Type != "cashout" || extOf(v) != rec.ext || v.Amount != rec.amount || v.Tax != rec.tax {
		k.fail("client %s: payout %s reads type=%s external_id=%s amount=%s tax=%s; acknowledged %s amount=%s tax=%s",
			c.cred.ID, rec.id, v.Type, extOf(v), v.Amount, v.Tax, rec.ext, rec.amount, rec.tax)
	}
	if v.Status != rec.want {
		if v.Status == "PENDING" || (v.Status == "PAID" && rec.want == "REVERSED") {
			k.fail("client %s: payout %s (%s) still %s after %s, want %s", c.cred.ID, rec.id, rec.ext, v.Status, r.cfg.SettleTimeout, rec.want)
		} else {
			k.fail("client %s: payout %s (%s) reads %s, want %s", c.cred.ID, rec.id, rec.ext, v.Status, rec.want)
		}
	}
}

func (r *runner) checkUnknown(ctx context.Context, k *checker, c *clientState, rec *unknownRec, deadline time.Time) {
	var v view
	var found bool
	var err error
	if rec.typ == "cashout" {
		v, found, err = r.pollSettled(ctx, c, "external_id", rec.ext, rec.want, deadline)
	} else {
		v, found, err = r.lookup(ctx, c, "external_id", rec.ext)
	}
	if err != nil {
		k.fail("client %s: %s %s (outcome unknown): %v", c.cred.ID, rec.typ, rec.ext, err)
		return
	}
	if !found {
		return // never created: nothing to account for
	}
	c.mu.Lock()
	rec.found, rec.status, rec.tax = true, v.Status, v.Tax
	c.mu.Unlock()
	if v.Type != rec.typ || v.Amount != rec.amount {
		k.fail("client %s: %s %s (outcome unknown) reads type=%s amount=%s, sent amount=%s", c.cred.ID, rec.typ, rec.ext, v.Type, v.Amount, rec.amount)
	}
	if rec.typ == "cashout" && v.Status != rec.want {
		k.fail("client %s: payout %s (outcome unknown) reads %s, want %s", c.cred.ID, rec.ext, v.Status, rec.want)
	}
	if rec.typ == "cashin" && v.Status != "PENDING" && v.Status != "CANCELLED" {
		k.fail("client %s: charge %s (outcome unknown, never paid by the bench) reads %s", c.cred.ID, rec.ext, v.Status)
	}
}

func (r *runner) checkRejected(ctx context.Context, k *checker, c *clientState, rec rejectedRec) {
	v, found, err := r.lookup(ctx, c, "external_id", rec.ext)
	if err != nil {
		k.fail("client %s: %s %s (refused with %d): %v", c.cred.ID, rec.typ, rec.ext, rec.status, err)
		return
	}
	if found {
		k.fail("client %s: %s %s was refused with %d but exists as %s (%s)", c.cred.ID, rec.typ, rec.ext, rec.status, v.PaymentID, v.Status)
	}
}
