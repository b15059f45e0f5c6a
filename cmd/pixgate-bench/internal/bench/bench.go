// Package bench is pixgate's load generator. It drives a running pixgate
// server (sandbox) over HTTP with a weighted mix of operations — charges,
// sandbox payments of those charges, payouts, balance reads, lookups and
// history pages — either closed loop (a fixed number of workers) or open loop
// (a fixed request rate), measures each operation's throughput and latency
// percentiles, and then checks from outside, through the API only, that every
// acknowledged operation is there and that each client's balance is what the
// acknowledged operations imply.
package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Operation names, as used in the mix and the report.
const (
	OpCharge  = "charge"
	OpPay     = "pay"
	OpPayout  = "payout"
	OpBalance = "balance"
	OpLookup  = "lookup"
	OpHistory = "history"
)

// Ops lists every operation in report order.
var Ops = []string{OpCharge, OpPay, OpPayout, OpBalance, OpLookup, OpHistory}

// DefaultMix is the operation mix used when none is given.
const DefaultMix = "charge=20,pay=15,payout=25,balance=15,lookup=15,history=10"

// ErrCheckFailed is returned by Run when the correctness check found a
// mismatch (the report lists them).
var ErrCheckFailed = errors.New("bench: correctness check failed")

// Mix holds the relative weight of each operation; operations left out or
// at zero are not sent.
type Mix map[string]int

// ParseMix parses "charge=20,pay=15,…" (weights are non-negative integers).
func ParseMix(s string) (Mix, error) {
	m := Mix{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, w, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok {
			return nil, fmt.Errorf("mix %q: want op=weight", part)
		}
		known := false
		for _, op := range Ops {
			known = known || op == name
		}
		if !known {
			return nil, fmt.Errorf("mix: unknown operation %q (want %s)", name, strings.Join(Ops, ", "))
		}
		n, err := strconv.Atoi(strings.TrimSpace(w))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("mix %q: weight must be a non-negative integer", part)
		}
		m[name] = n
	}
	total := 0
	for _, w := range m {
		total += w
	}
	if total == 0 {
		return nil, errors.New("mix: at least one operation needs a positive weight")
	}
	return m, nil
}

// String formats the mix in Ops order.
func (m Mix) String() string {
	var parts []string
	for _, op := range Ops {
		if m[op] > 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", op, m[op]))
		}
	}
	return strings.Join(parts, ",")
}

// Credential is one API client's credentials.
type Credential struct {
	ID     string
	Secret string
}

// ParseCredential parses "client_id:client_secret".
func ParseCredential(s string) (Credential, error) {
	id, secret, ok := strings.Cut(s, ":")
	if !ok || id == "" || secret == "" {
		return Credential{}, fmt.Errorf("client %q: want CLIENT_ID:CLIENT_SECRET", redact(s))
	}
	return Credential{ID: id, Secret: secret}, nil
}

func redact(s string) string {
	if id, _, ok := strings.Cut(s, ":"); ok {
		return id + ":…"
	}
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

// Config describes one bench run.
type Config struct {
	// Target is the server's base URL, e.g. http://127.0.0.1:8080.
	Target string
	// Duration of the measured load.
	Duration time.Duration
	// Warmup is load sent first, at the same rate or concurrency and with
	// no pause before the measured Duration: its operations are checked
	// like the others but not in the figures (Report.Warmup sums them up).
	Warmup time.Duration
	// Concurrency is the number of closed-loop workers (used when Rate is 0).
	Concurrency int
	// Rate, when positive, selects the open loop: Rate requests per second in
	// total, each sent at its scheduled time whatever the latency of the
	// others; latency counts from the scheduled time.
	Rate float64
	// MaxInFlight caps open-loop requests in flight (default 4096).
	MaxInFlight int
	// Mix weights the operations; nil means DefaultMix.
	Mix Mix
	// Clients are existing clients to use.
	Clients []Credential
	// CreateClients, when positive, creates that many clients before the
	// run by running `Pixgate clients create` against the server's database
	// (DatabaseURL and Env; when empty, pixgate's defaults and PIXGATE_*
	// variables apply).
	CreateClients int
	Pixgate       string
	DatabaseURL   string
	Env           string
	// Fund is credited to each client before the load (one sandbox charge
	// created and paid), so that payouts have a balance to draw on.
	Fund pix.Amount
	// FundViaPSPSim, when set, is the control API of a pixgate psp-sim
	// (e.g. http://127.0.0.1:8444) that pays the funding charges, for a
	// server whose provider is efi or apipix pointed at that simulator
	// (its /api/v1/sandbox/… answers 404).
	FundViaPSPSim string
	// PayoutFailPercent and PayoutReversePercent of payouts go to sandbox
	// keys that fail or are returned after completing.
	PayoutFailPercent    int
	PayoutReversePercent int
	// WebhookURL is the postbackUrl/callbackUrl of every operation; empty
	// means a receiver the bench runs on 127.0.0.1 (it answers 204).
	WebhookURL string
	// SettleTimeout bounds the wait for pending payouts before the check.
	SettleTimeout time.Duration
	// RequestTimeout bounds each request (default 30 s).
	RequestTimeout time.Duration
	// CheckConcurrency is the number of parallel lookups of the check.
	CheckConcurrency int
	// JSON prints one JSON document instead of the table.
	JSON bool
	// Progress, when set, receives one line per phase.
	Progress io.Writer
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	u, err := url.Parse(c.Target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("target %q: want http(s)://host:port", c.Target))
	}
	c.Target = strings.TrimRight(c.Target, "/")
	c.FundViaPSPSim = strings.TrimRight(c.FundViaPSPSim, "/")
	if c.FundViaPSPSim != "" {
		if u, err := url.Parse(c.FundViaPSPSim); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("fund-via-psp-sim %q: want http(s)://host:port of the simulator's control API", c.FundViaPSPSim))
		}
	}
	if c.Duration <= 0 {
		errs = append(errs, errors.New("duration must be positive"))
	}
	if c.Warmup < 0 {
		errs = append(errs, errors.New("warmup must not be negative"))
	}
	if c.Rate < 0 {
		errs = append(errs, errors.New("rate must not be negative"))
	}
	if c.Rate == 0 && c.Concurrency <= 0 {
		errs = append(errs, errors.New("concurrency must be positive (or give a rate)"))
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 4096
	}
	if c.Mix == nil {
		c.Mix, _ = ParseMix(DefaultMix)
	}
	if c.CreateClients < 0 {
		errs = append(errs, errors.New("create-clients must not be negative"))
	}
	if c.CreateClients == 0 && len(c.Clients) == 0 {
		errs = append(errs, errors.New("no clients: give --client ID:SECRET (repeatable) or --create-clients N"))
	}
	if c.Fund == 0 {
		c.Fund = 100_000_00
	}
	if c.Fund < 0 || c.Fund > pix.MaxAmount {
		errs = append(errs, errors.New("fund must be between 0.01 and 1000000.00"))
	}
	if c.PayoutFailPercent < 0 || c.PayoutReversePercent < 0 || c.PayoutFailPercent+c.PayoutReversePercent > 100 {
		errs = append(errs, errors.New("payout fail and reverse percents must be non-negative and add up to at most 100"))
	}
	if c.SettleTimeout <= 0 {
		c.SettleTimeout = 60 * time.Second
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 30 * time.Second
	}
	if c.CheckConcurrency <= 0 {
		c.CheckConcurrency = 32
	}
	return c, errors.Join(errs...)
}

// afterLoad, when set (tests), runs between the load and the check.
var afterLoad func(ctx context.Context, r *runner) error

// Run runs the bench described by cfg against a running server and writes
// the report to out: a table, or one JSON document with cfg.JSON. It returns
// an error wrapping ErrCheckFailed when the correctness check finds a
// mismatch, and other errors when the run could not be made.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	r := newRunner(cfg)
	defer r.http.CloseIdleConnections()

	if err := r.probe(ctx); err != nil {
		return err
	}
	creds := append([]Credential(nil), cfg.Clients...)
	if cfg.CreateClients > 0 {
		pixgate := PixgateCommand(cfg.Pixgate)
		r.progress("creating %d clients with %s clients create %s", cfg.CreateClients, pixgate, redactURL(cfg.DatabaseURL))
		created, err := CreateClients(ctx, pixgate, cfg.DatabaseURL, cfg.Env, cfg.CreateClients, r.runID)
		if err != nil {
			return err
		}
		creds = append(creds, created...)
	}
	for _, c := range creds {
		r.clients = append(r.clients, &clientState{cred: c, charges: map[string]*chargeRec{}})
	}
	if cfg.WebhookURL == "" {
		sink, err := startSink()
		if err != nil {
			return err
		}
		defer sink.close()
		r.sink = sink
		r.hook = sink.url
	} else {
		r.hook = cfg.WebhookURL
	}

	r.progress("reading %d clients' balances", len(r.clients))
	if err := r.baseline(ctx); err != nil {
		return err
	}
	if cfg.FundViaPSPSim != "" {
		r.progress("funding each client with R$ %s (one charge, paid at the PSP simulator %s)", cfg.Fund, cfg.FundViaPSPSim)
	} else {
		r.progress("funding each client with R$ %s (one sandbox charge, paid)", cfg.Fund)
	}
	if err := r.fund(ctx); err != nil {
		return err
	}
	if cfg.Rate > 0 {
		r.progress("load: open loop at %.0f req/s for %s (after %s of warm-up), mix %s", cfg.Rate, cfg.Duration, cfg.Warmup, cfg.Mix)
	} else {
		r.progress("load: %d workers for %s (after %s of warm-up), mix %s", cfg.Concurrency, cfg.Duration, cfg.Warmup, cfg.Mix)
	}
	elapsed := r.load(ctx)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	rep := r.report(elapsed)
	if !cfg.JSON {
		if err := writeTable(out, rep); err != nil {
			return err
		}
	}
	if afterLoad != nil {
		if err := afterLoad(ctx, r); err != nil {
			return err
		}
	}
	r.progress("check: looking up every acknowledged operation (waiting up to %s for payouts to settle)", cfg.SettleTimeout)
	chk := r.check(ctx)
	rep.Check = &chk
	if r.sink != nil {
		rep.WebhooksReceived = r.sink.count.Load()
	}
	if cfg.JSON {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
	} else if err := writeCheck(out, rep); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !chk.OK {
		return fmt.Errorf("%w: %d mismatches", ErrCheckFailed, chk.MismatchCount)
	}
	return nil
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxx")
	}
	return u.String()
}

// runner is one run's state.
type runner struct {
	cfg     Config
	http    *http.Client
	runID   string
	hook    string
	sink    *sink
	clients []*clientState
	seq     atomic.Int64
	next    atomic.Int64        // round-robin client choice
	stats   map[string]*opStats // of operations due from measureFrom on
	warm    map[string]*opStats // of the warm-up's
	// measureFrom ends the warm-up; set by load before any request.
	measureFrom time.Time
	ops         []string     // one cycle of the mix, interleaved (see schedule)
	opSeq       atomic.Int64 // position in ops
}

func newRunner(cfg Config) *runner {
	conns := max(cfg.Concurrency, 64)
	if cfg.Rate > 0 {
		conns = max(conns, min(cfg.MaxInFlight, int(cfg.Rate)))
	}
	tr := newDirectTransport(conns + cfg.CheckConcurrency)
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	r := &runner{cfg: cfg, http: &http.Client{Transport: tr}, runID: hex.EncodeToString(b),
		stats: map[string]*opStats{}, warm: map[string]*opStats{}}
	for _, op := range Ops {
		r.stats[op] = &opStats{errors: map[string]int{}}
		r.warm[op] = &opStats{errors: map[string]int{}}
	}
	r.ops = schedule(cfg.Mix)
	return r
}

// schedule lays one cycle of the mix out as a sequence in which every
// operation appears exactly its weight times, spread as evenly as possible
// (smooth weighted round-robin, as nginx balances upstreams): with the
// default mix every operation comes up within the first ten requests, so
// even a short run measures each one, and any run's proportions are the
// mix's to within one cycle.
func schedule(m Mix) []string {
	total := 0
	for _, op := range Ops {
		total += m[op]
	}
	current := make([]int, len(Ops))
	seq := make([]string, 0, total)
	for range total {
		best := -1
		for i, op := range Ops {
			current[i] += m[op]
			if m[op] > 0 && (best < 0 || current[i] > current[best]) {
				best = i
			}
		}
		current[best] -= total
		seq = append(seq, Ops[best])
	}
	return seq
}

// nextOp returns the next operation of the schedule; workers share it.
func (r *runner) nextOp() string {
	return r.ops[int(uint64(r.opSeq.Add(1)-1)%uint64(len(r.ops)))]
}

func (r *runner) progress(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "bench: "+format+"\n", args...)
	}
}

// probe checks that the target answers /healthz.
func (r *runner) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.cfg.Target+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := r.http.Do(req)
	if err != nil {
		return fmt.Errorf("target %s does not answer: %w", r.cfg.Target, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("target %s: /healthz answered %d", r.cfg.Target, resp.StatusCode)
	}
	return nil
}

// extID returns a new external_id unique to this run.
func (r *runner) extID(kind string) string {
	return fmt.Sprintf("bench-%s-%s%d", r.runID, kind, r.seq.Add(1))
}

// pickClient returns the clients round robin.
func (r *runner) pickClient() *clientState {
	return r.clients[int(uint64(r.next.Add(1)-1)%uint64(len(r.clients)))]
}

// payState is what the bench knows of a charge's sandbox payment.
type payState int

const (
	payNone     payState = iota // never paid by the bench
	payAcked                    // pay answered 200
	payUnknown                  // pay failed in transit or with 5xx: it may or may not have happened
	payRejected                 // pay answered 4xx
)

type chargeRec struct {
	id, ext string
	amount  pix.Amount
	pay     payState
	// filled by the check
	status string
	tax    pix.Amount
}

type payoutRec struct {
	id, ext     string
	amount, tax pix.Amount
	want        string // the final status its key leads to: PAID, CANCELLED or REVERSED
	status      string // filled by the check
}

// unknownRec is an operation sent whose outcome is not known (transport
// error, 5xx): the check finds it, or not, by external_id.
type unknownRec struct {
	typ    string // cashin or cashout
	ext    string
	amount pix.Amount
	want   string // payouts: final status
	found  bool
	status string
	tax    pix.Amount
}

// rejectedRec is an operation the server refused (4xx): it must not exist.
type rejectedRec struct {
	typ    string
	ext    string
	status int
}

type balance struct {
	available, pending int64
}

// clientState is what the bench acknowledged for one client.
type clientState struct {
	cred     Credential
	baseline balance

	mu       sync.Mutex
	unpaid   []string // charge ids not yet paid, for the pay operation
	charges  map[string]*chargeRec
	payouts  []*payoutRec
	ids      []string // every acknowledged id, for the lookup operation
	unknown  []*unknownRec
	rejected []rejectedRec
}

func (c *clientState) addCharge(rec *chargeRec, pool bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.charges[rec.id] = rec
	c.ids = append(c.ids, rec.id)
	if pool {
		c.unpaid = append(c.unpaid, rec.id)
	}
}

func (c *clientState) popUnpaid() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.unpaid)
	if n == 0 {
		return "", false
	}
	id := c.unpaid[n-1]
	c.unpaid = c.unpaid[:n-1]
	return id, true
}

func (c *clientState) setPay(id string, s payState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rec := c.charges[id]; rec != nil {
		rec.pay = s
	}
}

func (c *clientState) addPayout(rec *payoutRec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.payouts = append(c.payouts, rec)
	c.ids = append(c.ids, rec.id)
}

func (c *clientState) addUnknown(rec *unknownRec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unknown = append(c.unknown, rec)
}

func (c *clientState) addRejected(rec rejectedRec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rejected = append(c.rejected, rec)
}

func (c *clientState) randomID(n uint64) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ids) == 0 {
		return "", false
	}
	return c.ids[n%uint64(len(c.ids))], true
}

// opStats accumulates one operation's results.
type opStats struct {
	mu     sync.Mutex
	count  int
	ok     int
	lat    []time.Duration // of successful requests
	errors map[string]int  // by HTTP status, or "transport"
}

func (s *opStats) record(d time.Duration, status int, err error, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	if ok {
		s.ok++
		s.lat = append(s.lat, d)
		return
	}
	switch {
	case err != nil:
		s.errors["transport"]++
	case status >= 200 && status < 300:
		s.errors["bad-body"]++
	default:
		s.errors[strconv.Itoa(status)]++
	}
}

// add sums o's results into s, an aggregate no one else records into.
func (s *opStats) add(o *opStats) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s.errors == nil {
		s.errors = map[string]int{}
	}
	s.count += o.count
	s.ok += o.ok
	s.lat = append(s.lat, o.lat...)
	for k, v := range o.errors {
		s.errors[k] += v
	}
}

// percentile returns the q-quantile (0 < q ≤ 1) of sorted, nearest rank.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q+0.999999999) - 1
	i = min(max(i, 0), len(sorted)-1)
	return sorted[i]
}

func summarize(op string, count, ok int, lat []time.Duration, errs map[string]int, elapsed time.Duration) OpReport {
	sorted := append([]time.Duration(nil), lat...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	var sum time.Duration
	for _, d := range sorted {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	rep := OpReport{Op: op, Count: count, OK: ok, Errors: map[string]int{}}
	for k, v := range errs {
		rep.Errors[k] = v
	}
	if secs := elapsed.Seconds(); secs > 0 {
		rep.RPS = float64(count) / secs
		rep.OKRPS = float64(ok) / secs
	}
	if len(sorted) > 0 {
		rep.P50MS = ms(percentile(sorted, 0.50))
		rep.P95MS = ms(percentile(sorted, 0.95))
		rep.P99MS = ms(percentile(sorted, 0.99))
		rep.MaxMS = ms(sorted[len(sorted)-1])
		rep.MeanMS = ms(sum / time.Duration(len(sorted)))
	}
	return rep
}

func (r *runner) report(elapsed time.Duration) Report {
	rep := Report{Target: r.cfg.Target, Clients: len(r.clients), DurationS: elapsed.Seconds(), Mix: map[string]int{}}
	if r.cfg.Rate > 0 {
		rep.Mode, rep.Rate = "open", r.cfg.Rate
	} else {
		rep.Mode, rep.Concurrency = "closed", r.cfg.Concurrency
	}
	for op, w := range r.cfg.Mix {
		if w > 0 {
			rep.Mix[op] = w
		}
	}
	var total opStats
	for _, op := range Ops {
		s := r.stats[op]
		s.mu.Lock()
		if r.cfg.Mix[op] > 0 || s.count > 0 {
			rep.Operations = append(rep.Operations, summarize(op, s.count, s.ok, s.lat, s.errors, elapsed))
		}
		s.mu.Unlock()
		total.add(s)
	}
	rep.Total = summarize("total", total.count, total.ok, total.lat, total.errors, elapsed)
	if r.cfg.Warmup > 0 {
		var warm opStats
		for _, op := range Ops {
			warm.add(r.warm[op])
		}
		rep.WarmupS = r.cfg.Warmup.Seconds()
		w := summarize("warmup", warm.count, warm.ok, warm.lat, warm.errors, r.cfg.Warmup)
		rep.Warmup = &w
	}
	return rep
}

// statsOf returns where an operation of kind op due at start is counted:
// the measured figures, or the warm-up's.
func (r *runner) statsOf(op string, start time.Time) *opStats {
	if start.Before(r.measureFrom) {
		return r.warm[op]
	}
	return r.stats[op]
}
