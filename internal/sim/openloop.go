package sim

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// OpenLoopConfig is one open-loop measurement: payouts offered at a fixed
// rate whatever pixgate's answers take, to a PSP that takes Latency per
// call and settles each send at once.
type OpenLoopConfig struct {
	DB          string
	PostgresURL string
	Pixgate     string
	Dir         string
	// Rate is how many payouts a second the merchant starts, and For how
	// long it does so.
	Rate float64
	For  time.Duration
	// Latency is the PSP's latency per call (jitter ± 20 %).
	Latency time.Duration
	// Wait bounds how long after the load the run waits for every payout's
	// pix.cashout.paid (or failed); default a minute, never below 26 s
	// (past the 25 s mark the report counts at).
	Wait time.Duration
	// Trace, when set, receives one CSV line per payout offered: its
	// index and, in milliseconds from the first scheduled start, when it
	// was scheduled, started, accepted, received by the PSP and reported
	// paid (empty where it never was).
	Trace io.Writer
	Log   *slog.Logger
}

// lateStart is how far behind its schedule a request may start before the
// generator counts it late: beyond it the offered rate is not what was
// asked.
const lateStart = 10 * time.Millisecond

// OpenLoopReport is what an open-loop run measured. "Acceptance" is when
// the merchant read a payout's 200; a PUT is when the PSP received the
// payout's send; "paid" is when the receiver got its pix.cashout.paid. The
// load stopped when the last request was answered.
type OpenLoopReport struct {
	Rate    float64       // offered payouts a second
	For     time.Duration // how long they were offered
	Latency time.Duration // the PSP's per call
	// Settle says when the PSP settled a send.
	Settle string
	// Payouts is how many were offered, Accepted how many answered 200.
	Payouts, Accepted int
	// LateStarts is how many requests the generator started more than
	// lateStart behind their schedule; MaxStartLag the largest lag.
	LateStarts  int
	MaxStartLag time.Duration
	// AcceptRate, SendRate and PaidRate are payouts a second from the
	// first to the last acceptance, PUT and pix.cashout.paid.
	AcceptRate, SendRate, PaidRate float64
	// Accept are percentiles of request start → acceptance; ToPSP of
	// acceptance → PUT; ToPaid of acceptance → pix.cashout.paid. A payout
	// the run did not see reach that point counts as never (Never).
	Accept, ToPSP, ToPaid map[string]time.Duration
	// UnsentAt5s is how many accepted payouts the PSP had not received 5 s
	// after the load stopped; UnpaidAt5s and UnpaidAt25s how many had no
	// pix.cashout.paid 5 s and 25 s after it; Unpaid how many had none
	// when the run stopped waiting; Failed how many got pix.cashout.failed.
	UnsentAt5s, UnpaidAt5s, UnpaidAt25s, Unpaid, Failed int
	// Load1 is the machine's one-minute load average at the start and at
	// the end of the load (0 where the system does not tell).
	Load1 [2]float64
}

// Never stands in a percentile for payouts that never got there.
const Never = time.Duration(math.MaxInt64)

// String is the report on one line.
func (r OpenLoopReport) String() string {
	return fmt.Sprintf("open loop %.0f/s for %s, latency %s, PSP settles %s: %d/%d accepted (%.0f/s, %d late starts, max lag %s), accept p50 %s p99 %s; "+
		"sent %.0f/s, acceptance → PUT p50 %s p99 %s max %s, %d unsent 5 s after the load; "+
		"paid %.0f/s, acceptance → pix.cashout.paid p50 %s p99 %s max %s, %d / %d not paid 5 s / 25 s after, %d never, %d failed; load %.2f → %.2f",
		r.Rate, r.For, r.Latency, r.Settle, r.Accepted, r.Payouts, r.AcceptRate, r.LateStarts, ms(r.MaxStartLag), ms(r.Accept["p50"]), ms(r.Accept["p99"]),
		r.SendRate, ms(r.ToPSP["p50"]), ms(r.ToPSP["p99"]), ms(r.ToPSP["max"]), r.UnsentAt5s,
		r.PaidRate, ms(r.ToPaid["p50"]), ms(r.ToPaid["p99"]), ms(r.ToPaid["max"]), r.UnpaidAt5s, r.UnpaidAt25s, r.Unpaid, r.Failed,
		r.Load1[0], r.Load1[1])
}

// ms prints a duration to the millisecond, or "never".
func ms(d time.Duration) string {
	if d == Never {
		return "never"
	}
	return d.Round(time.Millisecond).String()
}

// MarshalJSON writes durations as milliseconds (null for never).
func (r OpenLoopReport) MarshalJSON() ([]byte, error) {
	msMap := func(m map[string]time.Duration) map[string]*float64 {
		out := map[string]*float64{}
		for k, d := range m {
			out[k] = msJSON(d)
		}
		return out
	}
	b, err := json.Marshal(map[string]any{
		"rate": r.Rate, "for_s": r.For.Seconds(), "latency_ms": msJSON(r.Latency), "psp_settles": r.Settle,
		"payouts": r.Payouts, "accepted": r.Accepted, "late_starts": r.LateStarts, "max_start_lag_ms": msJSON(r.MaxStartLag),
		"accept_rate": r.AcceptRate, "send_rate": r.SendRate, "paid_rate": r.PaidRate,
		"accept_ms": msMap(r.Accept), "acceptance_to_put_ms": msMap(r.ToPSP), "acceptance_to_paid_ms": msMap(r.ToPaid),
		"unsent_5s": r.UnsentAt5s, "unpaid_5s": r.UnpaidAt5s, "unpaid_25s": r.UnpaidAt25s, "unpaid": r.Unpaid, "failed": r.Failed,
		"load1": r.Load1,
	})
	if err != nil {
		return nil, fmt.Errorf("open loop report: %w", err)
	}
	return b, nil
}

func msJSON(d time.Duration) *float64 {
	if d == Never {
		return nil
	}
	v := math.Round(float64(d)/float64(time.Microsecond)) / 1000
	return &v
}

// offer is one payout request of the schedule.
type offer struct {
	scheduled, started, accepted time.Time
	id                           string // the transaction_id answered; "" if not accepted
}

// OpenLoop funds a merchant through the PSP, then starts payouts of
// R$ 1.00 at cfg.Rate a second for cfg.For — each at its scheduled
// instant, whatever the earlier ones' answers take — and measures how
// they are accepted, reach the PSP and are reported paid to the
// merchant's webhook.
func OpenLoop(ctx context.Context, cfg OpenLoopConfig) (OpenLoopReport, error) {
	if cfg.Rate <= 0 || cfg.For <= 0 {
		return OpenLoopReport{}, fmt.Errorf("open loop: rate %g for %s: both must be above 0", cfg.Rate, cfg.For)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Wait == 0 {
		cfg.Wait = time.Minute
	}
	cfg.Wait = max(cfg.Wait, 26*time.Second)
	n := int(math.Round(cfg.Rate * cfg.For.Seconds()))
	if n < 1 {
		return OpenLoopReport{}, fmt.Errorf("open loop: %g/s for %s offers no payout", cfg.Rate, cfg.For)
	}
	cl, err := StartCluster(ctx, ClusterConfig{Pixgate: cfg.Pixgate, DB: cfg.DB, PostgresURL: cfg.PostgresURL, Nodes: 1,
		Dir: cfg.Dir, Log: cfg.Log, Seed: 1, SettleAtOnce: true})
	if err != nil {
		return OpenLoopReport{}, fmt.Errorf("open loop: start the system: %w", err)
	}
	defer func() { _ = cl.Close() }()
	api := NewAPI(cl.Addrs(), cl.Up, cl.Clients())
	if err := fund(ctx, cl, api, int64(n)); err != nil {
		return OpenLoopReport{}, fmt.Errorf("open loop: %w", err)
	}
	psp := cl.PSP()
	psp.SetLatency(cfg.Latency, cfg.Latency/5)
	r := OpenLoopReport{Rate: cfg.Rate, For: cfg.For, Latency: cfg.Latency, Settle: "at once (settle delay 0)", Payouts: n}
	r.Load1[0] = loadAverage()
	cfg.Log.Info("open loop: load starts", "payouts", n, "rate", cfg.Rate, "latency", cfg.Latency)

	offers := generate(ctx, cfg, n, func(ctx context.Context, i int) string {
		key := fmt.Sprintf("open-%d", i)
		body, _ := json.Marshal(map[string]any{"amount": reais(100), "description": key, "callbackUrl": cl.Receiver().URL(0),
			"creditParty": map[string]any{"name": "Fornecedor", "keyType": "EMAIL", "key": key + "@example.com"}})
		status, b, err := api.CallRetrying(ctx, 8, 0, http.MethodPost, "/api/v1/gateway/pix-payment", map[string]string{"Idempotency-Key": key}, body)
		if err != nil || status != http.StatusOK {
			return ""
		}
		return answerID(b)
	})
	if ctx.Err() != nil {
		return OpenLoopReport{}, fmt.Errorf("open loop: %w", ctx.Err())
	}
	r.Load1[1] = loadAverage()
	var stop time.Time
	for _, o := range offers {
		stop = later(stop, o.accepted)
		if o.id != "" {
			r.Accepted++
		}
	}
	cfg.Log.Info("open loop: load stopped", "accepted", r.Accepted)

	// Until every accepted payout is reported (the PSP's state is read only
	// then: copying it is work the system under test would share the
	// cores with).
	var paid, failed map[string]time.Time
	for {
		paid, failed = webhookTimes(cl.Receiver(), pix.EventCashoutPaid), webhookTimes(cl.Receiver(), pix.EventCashoutFailed)
		if len(paid)+len(failed) >= r.Accepted || time.Since(stop) > cfg.Wait {
			break
		}
		select {
		case <-ctx.Done():
			return OpenLoopReport{}, fmt.Errorf("open loop: %w", ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
	puts := sendTimes(psp)
	r.measure(offers, stop, puts, paid, failed)
	if cfg.Trace != nil {
		if err := trace(cfg.Trace, offers, puts, paid); err != nil {
			return r, fmt.Errorf("open loop: trace: %w", err)
		}
	}
	return r, nil
}

// maxInFlight bounds the requests open at once (each holds a connection):
// a system that stops answering makes the generator start late, which the
// report counts, rather than exhaust the file descriptors.
const maxInFlight = 4096

// generate starts call(i) for i in [0, n) at start + i/Rate each, every
// call in its own goroutine so that a slow answer delays no later start,
// and returns each offer once every call has returned.
func generate(ctx context.Context, cfg OpenLoopConfig, n int, call func(ctx context.Context, i int) string) []offer {
	offers := make([]offer, n)
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxInFlight)
	start := time.Now().Add(50 * time.Millisecond)
	for i := range n {
		at := start.Add(time.Duration(float64(i) / cfg.Rate * float64(time.Second)))
		if d := time.Until(at); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
		select {
		case <-ctx.Done():
		case slots <- struct{}{}:
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			o := &offers[i]
			o.scheduled, o.started = at, time.Now()
			o.id = call(ctx, i)
			o.accepted = time.Now()
		})
	}
	wg.Wait()
	return offers
}

// trace writes offers as CSV (see OpenLoopConfig.Trace).
func trace(w io.Writer, offers []offer, puts, paid map[string]time.Time) error {
	if len(offers) == 0 {
		return nil
	}
	t0 := offers[0].scheduled
	at := func(t time.Time, ok bool) string {
		if !ok || t.IsZero() {
			return ""
		}
		return strconv.FormatFloat(float64(t.Sub(t0))/float64(time.Millisecond), 'f', 3, 64)
	}
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"i", "scheduled_ms", "started_ms", "accepted_ms", "put_ms", "paid_ms"})
	for i, o := range offers {
		put, okPut := puts[hexID(o.id)]
		pay, okPay := paid[o.id]
		_ = cw.Write([]string{strconv.Itoa(i), at(o.scheduled, true), at(o.started, true), at(o.accepted, o.id != ""),
			at(put, o.id != "" && okPut), at(pay, o.id != "" && okPay)})
	}
	cw.Flush()
	return cw.Error()
}

// webhookTimes is when the receiver first got event, by payment_id.
func webhookTimes(recv *Receiver, event string) map[string]time.Time {
	out := map[string]time.Time{}
	for _, d := range recv.Deliveries() {
		if d.Event != event || !d.Valid {
			continue
		}
		if t, ok := out[d.PaymentID]; !ok || d.At.Before(t) {
			out[d.PaymentID] = d.At
		}
	}
	return out
}

// measure fills r's rates, percentiles and counts from the offers and
// when each accepted payout reached the PSP (puts, by idEnvio) and the
// merchant (paid and failed, by transaction id).
func (r *OpenLoopReport) measure(offers []offer, stop time.Time, puts, paid, failed map[string]time.Time) {
	var accept, toPSP, toPaid []time.Duration
	var accs, sends, pays []time.Time
	for _, o := range offers {
		if o.started.IsZero() {
			continue
		}
		lag := o.started.Sub(o.scheduled)
		r.MaxStartLag = max(r.MaxStartLag, lag)
		if lag > lateStart {
			r.LateStarts++
		}
		if o.id == "" {
			continue
		}
		accept = append(accept, o.accepted.Sub(o.started))
		accs = append(accs, o.accepted)
		if put, ok := puts[hexID(o.id)]; ok {
			toPSP = append(toPSP, put.Sub(o.accepted))
			sends = append(sends, put)
			if put.After(stop.Add(5 * time.Second)) {
				r.UnsentAt5s++
			}
		} else {
			toPSP = append(toPSP, Never)
			r.UnsentAt5s++
		}
		if _, ok := failed[o.id]; ok {
			r.Failed++
		}
		at, ok := paid[o.id]
		switch {
		case !ok:
			toPaid = append(toPaid, Never)
			r.Unpaid++
			r.UnpaidAt5s++
			r.UnpaidAt25s++
			continue
		case at.After(stop.Add(25 * time.Second)):
			r.UnpaidAt25s++
			fallthrough
		case at.After(stop.Add(5 * time.Second)):
			r.UnpaidAt5s++
		}
		toPaid = append(toPaid, at.Sub(o.accepted))
		pays = append(pays, at)
	}
	r.Accept, r.ToPSP, r.ToPaid = percentiles(accept), percentiles(toPSP), percentiles(toPaid)
	r.AcceptRate, r.SendRate, r.PaidRate = rate(accs), rate(sends), rate(pays)
}

// percentiles are p50, p99 and max of ds (nearest rank; empty: none).
func percentiles(ds []time.Duration) map[string]time.Duration {
	out := map[string]time.Duration{}
	if len(ds) == 0 {
		return out
	}
	slices.Sort(ds)
	out["p50"], out["p99"], out["max"] = ds[len(ds)/2], ds[len(ds)*99/100], ds[len(ds)-1]
	return out
}

// rate is len(ts) a second from the first of ts to the last.
func rate(ts []time.Time) float64 {
	if len(ts) < 2 {
		return 0
	}
	first, last := ts[0], ts[0]
	for _, t := range ts {
		if t.Before(first) {
			first = t
		}
		last = later(last, t)
	}
	return float64(len(ts)) / max(last.Sub(first).Seconds(), 1e-3)
}

// loadAverage is the one-minute load average from /proc/loadavg, or 0
// where there is none.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var v float64
	if f := strings.Fields(string(b)); len(f) > 0 {
		_, _ = fmt.Sscan(f[0], &v)
	}
	return v
}
