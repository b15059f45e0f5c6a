package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/pixgate/pixgate/internal/job"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/webhooksig"
)

// Delivery outcomes, as counted in metrics.
const (
	OutcomeDelivered = "delivered"
	OutcomeRetry     = "retry"
	OutcomeFailed    = "failed"
	OutcomeRefused   = "refused"
)

// Defaults of a Dispatcher.
const (
	DefaultTimeout = 10 * time.Second
	DefaultLease   = 12 * time.Second // a dead node's events are taken over within 15 s
	DefaultPerHost = 4
	// maxHold bounds how long an event whose destination has no room is
	// put off: a receiver that recovers gets its waiting events within it.
	maxHold = 5 * time.Minute
	// stallAfter is how long a host's slots stay full with no attempt
	// starting or ending before the host counts as stalled.
	stallAfter = time.Second
	// DefaultWorkers bounds attempts in flight, waiting for their host's
	// slot and their record's commit included: enough (goroutines, mostly
	// parked) that a settlement hands nearly every event straight to a
	// worker instead of leaving it to a claim (docs/decisions.md).
	DefaultWorkers = 512
	maxRetryAfter  = 24 * time.Hour
)

// Dispatcher delivers outbox events to their URLs: at least once, signed per
// Standard Webhooks, retried on Schedule, every attempt recorded. Several
// dispatchers (one per node) may share a database: an event is leased to one
// of them at a time.
type Dispatcher struct {
	DB       *store.DB
	Client   *http.Client    // SSRF-guarded, see Guard.Client
	Schedule []time.Duration // waits between attempts after the first
	Now      func() time.Time
	Log      *slog.Logger
	Owner    string // this node's lease name; random when empty
	Timeout  time.Duration
	Lease    time.Duration
	PerHost  int // concurrent deliveries per destination host
	Workers  int // concurrent deliveries in all
	// HostWorkers bounds the workers one destination host may hold at
	// once, waiting for its PerHost slots or attempting: the rest stay free
	// for other destinations (default Workers/2, at least PerHost).
	HostWorkers int
	Interval    time.Duration
	// Outcome, when set, is called once per attempt with its outcome.
	Outcome func(outcome string)
	// Grace bounds how long Run waits, once its context ends, for attempts
	// in flight; then they are abandoned (their leases run out and the
	// events are sent again later). Zero waits for the whole Timeout.
	Grace time.Duration

	once    sync.Once
	mu      sync.Mutex
	hosts   map[string]*host // guarded by mu
	slots   chan struct{}
	wg      sync.WaitGroup
	wakeup  chan struct{}
	base    context.Context // the context of attempts while Run runs; nil otherwise (guarded by mu)
	backlog atomic.Bool     // the last claim may have left due events behind
	again   atomic.Bool     // the last claim was full and put some of its events off
}

// host is what a dispatcher holds for one destination host.
type host struct {
	slot chan struct{} // its requests in flight, at most PerHost
	// held counts the workers holding its events, at most HostWorkers;
	// moved is when one of its attempts last started or ended (both
	// guarded by Dispatcher.mu).
	held  int
	moved time.Time
}

func (d *Dispatcher) init() {
	d.once.Do(func() {
		if d.Owner == "" {
			d.Owner = "node-" + uuid.NewString()
		}
		if d.Timeout <= 0 {
			d.Timeout = DefaultTimeout
		}
		if d.Lease <= 0 {
			d.Lease = DefaultLease
		}
		if d.PerHost <= 0 {
			d.PerHost = DefaultPerHost
		}
		if d.Workers <= 0 {
			d.Workers = DefaultWorkers
		}
		if d.HostWorkers <= 0 {
			// Never fewer than a host's slots, which it must be able to fill.
			d.HostWorkers = max(d.Workers/2, d.PerHost)
		}
		if d.Interval <= 0 {
			d.Interval = 200 * time.Millisecond
		}
		if d.Now == nil {
			d.Now = time.Now
		}
		d.hosts = map[string]*host{}
		d.slots = make(chan struct{}, d.Workers)
		d.wakeup = make(chan struct{}, 1)
	})
}

// Wake asks a running dispatcher to look for due events now.
func (d *Dispatcher) Wake() {
	d.init()
	select {
	case d.wakeup <- struct{}{}:
	default:
	}
}

// Run delivers due events until ctx ends, then waits up to Grace for
// deliveries in flight and abandons the rest.
func (d *Dispatcher) Run(ctx context.Context) {
	d.init()
	// Attempts outlive ctx (a SIGTERM should not cut a delivery short) but
	// not the grace period.
	base, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	d.mu.Lock()
	d.base = base
	d.mu.Unlock()
	t := time.NewTicker(d.Interval)
	defer t.Stop()
	// A database out of reach: claims back off (job.Backoff) instead of
	// failing, and being logged, at every tick.
	outage := &job.Backoff{Name: "webhook-dispatch", Log: d.Log, Min: d.Interval}
	for {
		if outage.Due() {
			_, err := d.dispatch(ctx, base, false)
			switch {
			case err != nil && d.DB.Unavailable(err):
				outage.Fail(ctx, err)
			case err != nil && ctx.Err() == nil:
				d.Log.WarnContext(ctx, "webhook dispatch failed", "error", err.Error())
			case err == nil:
				outage.Succeed(ctx)
			}
		}
		if d.again.Swap(false) {
			// The claim put events off and may have left others due
			// behind them: look again now, not at the next tick.
			d.Wake()
		}
		select {
		case <-ctx.Done():
			// No reservation starts after this (Reserve); those taken
			// already are waited for like attempts in flight.
			d.mu.Lock()
			d.base = nil
			d.mu.Unlock()
			d.drain(abort)
			return
		case <-t.C:
		case <-d.wakeup:
		}
	}
}

// drain waits for attempts in flight up to Grace, then aborts them.
func (d *Dispatcher) drain(abort context.CancelFunc) {
	grace := d.Grace
	if grace <= 0 {
		grace = d.Timeout
	}
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		abort()
		<-done
	}
}

// DeliverDue claims the events due now and delivers them, waiting for every
// attempt to finish; it returns how many attempts it made.
func (d *Dispatcher) DeliverDue(ctx context.Context) (int, error) {
	d.init()
	return d.dispatch(ctx, context.WithoutCancel(ctx), true)
}

// dispatch claims due events under ctx and starts their attempts under base.
func (d *Dispatcher) dispatch(ctx, base context.Context, wait bool) (int, error) {
	free := d.Workers - len(d.slots)
	if free <= 0 {
		d.backlog.Store(true) // due events may wait: look again when a worker frees up
		return 0, nil
	}
	now := d.Now()
	var events []pix.Event
	err := d.DB.Write(ctx, func(tx *store.Tx) error {
		var err error
		events, err = tx.ClaimEvents(ctx, d.Owner, now, now.Add(d.Lease), free)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("claim events: %w", err)
	}
	// A claim that filled every free worker may have left due events
	// behind; one that did not found them all.
	d.backlog.Store(len(events) == free)
	// Events whose host already holds its share of the workers are put
	// off at once rather than kept waiting in a worker: a receiver that
	// hangs would otherwise take every worker, and its events, oldest due,
	// would come back first at every claim, so no other host's event
	// would ever be claimed (docs/webhooks.md: another host is first attempted within 5 s).
	run := make([]pix.Event, 0, len(events))
	hosts := make([]*host, 0, len(events))
	var held []store.Deferral
	stalled := false
	for _, e := range events {
		h, next, stuck := d.admit(e, now)
		if h != nil {
			run = append(run, e)
			hosts = append(hosts, h)
			continue
		}
		held = append(held, store.Deferral{ID: e.ID, Next: next})
		stalled = stalled || stuck
	}
	if len(held) > 0 {
		// Should this fail, the leases run out and the events are claimed again.
		if err := d.DB.Write(ctx, func(tx *store.Tx) error { return tx.DeferEvents(ctx, d.Owner, held) }); err != nil {
			d.Log.WarnContext(ctx, "put off webhook events", "events", len(held), "error", err.Error())
		}
		// Events behind a stalled host's are claimed at once; a busy host
		// that is moving frees workers itself (backlog).
		d.again.Store(len(events) == free && stalled)
	}
	leaseEnd := now.Add(d.Lease)
	var local sync.WaitGroup
	for i, e := range run {
		d.slots <- struct{}{}
		d.wg.Add(1)
		local.Add(1)
		d.start(base, e, hosts[i], leaseEnd, local.Done)
	}
	if wait {
		local.Wait()
	}
	return len(run), nil
}

// admit takes a worker of e's host's share for e, or, when the host has no
// room for it, returns nil and when e is due again, and whether the host is
// stalled. A host has no room once it holds HostWorkers workers, or once it
// is stalled (its slots full, no attempt starting or ending for stallAfter)
// and holds as many as its slots: workers waiting for a receiver that does
// not answer would only wait.
func (d *Dispatcher) admit(e pix.Event, now time.Time) (*host, time.Time, bool) {
	name := e.URL
	if u, err := url.Parse(e.URL); err == nil {
		name = u.Host
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.hosts[name]
	if h == nil {
		h = &host{slot: make(chan struct{}, d.PerHost)}
		d.hosts[name] = h
	}
	stalled := len(h.slot) == cap(h.slot) && now.Sub(h.moved) >= stallAfter
	if h.held >= d.HostWorkers || (stalled && h.held >= d.PerHost) {
		return nil, d.holdUntil(e, now, stalled), stalled
	}
	h.held++
	return h, time.Time{}, false
}

// move records that an attempt to h started or ended at now.
func (d *Dispatcher) move(h *host, now time.Time) {
	d.mu.Lock()
	h.moved = now
	d.mu.Unlock()
}

// leave gives back a worker admit took.
func (d *Dispatcher) leave(h *host) {
	d.mu.Lock()
	h.held--
	d.mu.Unlock()
}

// holdUntil returns when an event put off at now is due again. Behind a
// busy host that is moving, after stallAfter. Behind a stalled one, after
// one Timeout at least (by then every attempt holding its slots has ended),
// and the longer the event has waited, the longer it is put off, up to
// maxHold, so that a receiver down for hours does not cost the database a
// claim of all its events every few seconds.
func (d *Dispatcher) holdUntil(e pix.Event, now time.Time, stalled bool) time.Time {
	if !stalled {
		return now.Add(jitter(stallAfter))
	}
	wait := min(max(now.Sub(e.CreatedAt), d.Timeout), maxHold)
	return now.Add(jitter(wait))
}

// hold puts off one event until next, in a transaction shared with
// concurrent calls.
func (d *Dispatcher) hold(ctx context.Context, e pix.Event, next time.Time) {
	held := []store.Deferral{{ID: e.ID, Next: next}}
	if err := d.DB.WriteGrouped(ctx, func(tx *store.Tx) error { return tx.DeferEvents(ctx, d.Owner, held) }); err != nil {
		d.Log.WarnContext(ctx, "put off webhook event", "event_id", e.ID, "error", err.Error())
	}
}

// start delivers e in its own goroutine, in a slot (and a count in d.wg)
// the caller has taken, and gives them back when done; h is e's host, as
// admit took it.
func (d *Dispatcher) start(base context.Context, e pix.Event, h *host, leaseEnd time.Time, done func()) {
	go func() {
		defer func() {
			<-d.slots
			d.wg.Done()
			if done != nil {
				done()
			}
			// A free worker asks for more at once when due events may be
			// waiting, since the next tick would cap deliveries at Workers
			// per tick; otherwise the tick (and Wake from writers of events
			// not handed over) is enough, as a claim per finished attempt
			// costs the database more (docs/decisions.md).
			if d.backlog.Load() {
				d.Wake()
			}
		}()
		defer d.leave(h)
		d.deliver(base, e, h, leaseEnd)
	}()
}

// deliver makes one attempt at e while the lease lasts.
func (d *Dispatcher) deliver(ctx context.Context, e pix.Event, h *host, leaseEnd time.Time) {
	// Wait for the destination's slot only as long as the lease leaves
	// room for a whole attempt; otherwise put the event off, behind the
	// events of other destinations, as a stalled host's.
	waitCtx, cancel := context.WithDeadline(ctx, leaseEnd.Add(-d.Timeout-time.Second))
	defer cancel()
	select {
	case h.slot <- struct{}{}:
		d.move(h, d.Now())
	case <-waitCtx.Done():
		d.hold(ctx, e, d.holdUntil(e, d.Now(), true))
		return
	}

	a, resp := d.attempt(ctx, e)
	// The destination's slot bounds requests in flight to it, not the
	// bookkeeping: holding it through the database write (a commit) would
	// throttle deliveries to one endpoint (docs/decisions.md).
	<-h.slot
	d.move(h, d.Now())
	status, next, outcome := d.decide(e, a, resp)
	// Record the attempt even when it was aborted at shutdown.
	wctx, cancelWrite := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancelWrite()
	// Concurrent workers' records share one transaction (store.DB.FinishAttempt).
	kept, err := d.DB.FinishAttempt(wctx, store.Finish{Owner: d.Owner, Attempt: a, Status: status, Attempts: e.Attempts + 1, Next: next})
	if err != nil {
		d.Log.ErrorContext(ctx, "record webhook attempt", "event_id", e.ID, "error", err.Error())
		return
	}
	if !kept {
		d.Log.WarnContext(ctx, "webhook lease lost during attempt", "event_id", e.ID)
	}
	if d.Outcome != nil {
		d.Outcome(outcome)
	}
	// Every attempt is recorded (delivery_attempts, the deliveries endpoint
	// and the panel); the log keeps the ones an operator acts on.
	level := slog.LevelInfo
	if outcome == OutcomeDelivered {
		level = slog.LevelDebug
	}
	attrs := []any{"event_id", e.ID, "event", e.Type, "status_code", a.StatusCode,
		"latency_ms", a.Latency.Milliseconds(), "outcome", outcome, "attempt", e.Attempts + 1}
	if a.Error != "" {
		// The record holds only the class; the cause stays here, for the
		// operator.
		attrs = append(attrs, "error", a.Error)
	}
	if resp.detail != "" {
		attrs = append(attrs, "detail", resp.detail)
	}
	d.Log.Log(ctx, level, "webhook attempt", attrs...)
}

// Send makes one signed attempt at e now, outside the outbox: nothing is
// claimed, recorded or retried, and no host slot is taken (a test event is
// one request of a rate-limited client, not a delivery). The cause of a
// failure goes to the log; the attempt holds its class.
func (d *Dispatcher) Send(ctx context.Context, e pix.Event) pix.Attempt {
	d.init()
	a, resp := d.attempt(ctx, e)
	if resp.detail != "" {
		d.Log.InfoContext(ctx, "webhook test", "event_id", e.ID, "status_code", a.StatusCode, "error", a.Error, "detail", resp.detail)
	}
	return a
}

// response is what decide needs of a receiver's answer, and what the log
// line of the attempt adds to its record.
type response struct {
	retryAfter string
	refused    bool
	detail     string // the cause of a failure, for the server log only
}

// attempt sends e once.
func (d *Dispatcher) attempt(ctx context.Context, e pix.Event) (pix.Attempt, response) {
	start := d.Now()
	a := pix.Attempt{ID: uuid.Must(uuid.NewV7()).String(), EventID: e.ID, At: start}
	secrets, err := d.secrets(ctx, e.ClientID, start)
	if err != nil {
		a.Error = ClassSecret
		return a, response{detail: err.Error()}
	}
	sig, err := webhooksig.SignAll(secrets, e.ID, start, []byte(e.Payload))
	if err != nil {
		a.Error = ClassSigning
		return a, response{detail: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader([]byte(e.Payload)))
	if err != nil {
		a.Error = ClassNotAllowed
		return a, response{refused: true, detail: logDetail(err)}
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "pixgate-webhooks/1")
	h.Set("webhook-id", e.ID)
	h.Set("webhook-timestamp", strconv.FormatInt(start.Unix(), 10))
	h.Set("webhook-signature", sig)
	resp, err := d.Client.Do(req)
	a.Latency = d.Now().Sub(start)
	if err != nil {
		a.Error = classify(err)
		return a, response{refused: errors.Is(err, ErrForbiddenDestination) || errors.Is(err, ErrInvalidURL), detail: logDetail(err)}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	a.StatusCode = resp.StatusCode
	a.Error = classifyStatus(resp.StatusCode)
	a.Response = string(bytes.ToValidUTF8(body, []byte("\uFFFD")))
	return a, response{retryAfter: resp.Header.Get("Retry-After")}
}

// decide returns the event's next status and attempt time after a.
func (d *Dispatcher) decide(e pix.Event, a pix.Attempt, r response) (string, time.Time, string) {
	now := d.Now()
	switch {
	case a.StatusCode >= 200 && a.StatusCode < 300:
		return "delivered", now, OutcomeDelivered
	case a.StatusCode == http.StatusGone:
		return "failed", now, OutcomeFailed
	case r.refused:
		return "failed", now, OutcomeRefused
	}
	done := e.Attempts + 1 // attempts made, this one included
	if done > len(d.Schedule) {
		return "failed", now, OutcomeFailed
	}
	wait := jitter(d.Schedule[done-1])
	if a.StatusCode == http.StatusTooManyRequests || a.StatusCode == http.StatusServiceUnavailable {
		if ra, ok := parseRetryAfter(r.retryAfter, now); ok {
			wait = ra
		}
	}
	return "pending", now.Add(wait), OutcomeRetry
}

// jitter lengthens a wait by up to 10 % so retries from many events do not
// align. It never shortens it: a receiver is never retried sooner than the
// schedule says.
func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return d
	}
	spread := int64(d) / 10
	if spread == 0 {
		return d
	}
	return d + time.Duration(rand.Int64N(spread+1)) //nolint:gosec // G404: retry jitter, not a secret
}

// parseRetryAfter reads a Retry-After of seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, maxRetryAfter), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxRetryAfter), true
	}
	return 0, false
}

// secrets returns the client's webhook secrets to sign with: the current
// one, and the previous one while its 24 h overlap lasts.
func (d *Dispatcher) secrets(ctx context.Context, clientID string, now time.Time) ([]string, error) {
	c, err := d.DB.Client(ctx, clientID)
	if err != nil {
		return nil, err
	}
	s := []string{c.WebhookSecret}
	if c.PrevWebhookSecret != "" && now.Before(c.PrevWebhookUntil) {
		s = append(s, c.PrevWebhookSecret)
	}
	return s, nil
}
