package sim

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/pspsim"
)

// The faults: what goes wrong around pixgate. The seed decides, before
// each operation, whether a fault is injected and which, and the
// operations after which a node is killed; a killed node is restarted
// after a drawn pause.

// Fault kinds, with their weights among the injected faults.
var faultWeights = []struct {
	kind   string
	weight int
}{
	{"psp_error", 22},
	{"psp_hang", 6},
	{"psp_commit_then_error", 20},
	{"psp_commit_then_hang", 6},
	{"psp_down", 8},
	{"psp_expire_tokens", 8},
	{"psp_lose_webhooks", 10},
	{"psp_latency", 8},
	{"psp_rate_limit", 6},
	{"receiver", 12},
}

// pspPaths are the PSP calls a fault may hit: method and path prefix.
var pspPaths = []struct{ method, prefix string }{
	{"PUT", "/v3/gn/pix/"},                      // a payout's send
	{"GET", "/v2/gn/pix/enviados/"},             // a payout's status
	{"PUT", "/v2/pix/"},                         // a devolução (refund, return)
	{"GET", "/v2/pix/"},                         // a payment's or devolução's reading
	{"GET", "/v2/pix"},                          // the list of received Pix
	{"PUT", "/v2/cob/"},                         // a charge's cob
	{"GET", "/v2/cob/"},                         // a cob read before expiry
	{"PATCH", "/v2/cob/"},                       // a cob removed
	{"POST", "/oauth/token"},                    // a token
	{"", "/v2/"},                                // anything
	{"PUT", "/v3/gn/pix/"}, {"PUT", "/v2/pix/"}, // sends twice as likely
}

// Target is what the faults act on.
type Target struct {
	PSP     *pspsim.Server
	Nodes   int
	Kill    func(i int) error
	Restart func(ctx context.Context, i int) error
	Up      func(i int) bool
	// Receiver sets the merchant receiver's share of failed answers and
	// its delay; Latency sets the PSP's latency and jitter.
	Receiver func(failRate float64, delay time.Duration)
	Latency  func(d, jitter time.Duration)
}

// Faults injects the seed's faults into a Target.
type Faults struct {
	rng    *rand.Rand
	t      Target
	rate   int // per mille of operations preceded by a fault
	kills  map[int]bool
	log    *slog.Logger
	mu     sync.Mutex
	counts map[string]int
	killed int
	wg     sync.WaitGroup
}

// NewFaults draws the fault schedule of seed for ops operations with
// kills SIGKILLs, about one fault every twelve operations.
func NewFaults(seed uint64, ops, kills int, t Target, log *slog.Logger) *Faults {
	rng := rand.New(rand.NewPCG(seed, 0xfa017)) //nolint:gosec // G404: a replayable schedule must come from its seed
	f := &Faults{rng: rng, t: t, rate: 80, kills: map[int]bool{}, log: log, counts: map[string]int{}}
	// Kill points spread over the run, never in its first tenth (the
	// system gets some state first); distinct operations.
	lo := max(1, ops/10)
	for len(f.kills) < min(kills, ops-lo) {
		f.kills[lo+f.rng.IntN(ops-lo)] = true
	}
	return f
}

// Before runs the faults due before operation n (numbered from 1).
func (f *Faults) Before(ctx context.Context, n int) {
	if f.kills[n] {
		f.kill(ctx)
	}
	if f.rng.IntN(1000) >= f.rate {
		return
	}
	total := 0
	for _, w := range faultWeights {
		total += w.weight
	}
	r := f.rng.IntN(total)
	kind := faultWeights[0].kind
	for _, w := range faultWeights {
		if r < w.weight {
			kind = w.kind
			break
		}
		r -= w.weight
	}
	f.inject(kind)
}

func (f *Faults) inject(kind string) {
	f.mu.Lock()
	f.counts[kind]++
	f.mu.Unlock()
	psp := f.t.PSP
	switch kind {
	case "psp_error", "psp_hang", "psp_commit_then_error", "psp_commit_then_hang":
		p := pspPaths[f.rng.IntN(len(pspPaths))]
		k := map[string]pspsim.FaultKind{"psp_error": pspsim.FaultError, "psp_hang": pspsim.FaultHang,
			"psp_commit_then_error": pspsim.FaultCommitThenError, "psp_commit_then_hang": pspsim.FaultCommitThenHang}[kind]
		psp.AddFault(pspsim.Fault{Method: p.method, PathPrefix: p.prefix, Kind: k, Times: 1 + f.rng.IntN(3)})
	case "psp_down":
		psp.SetDown(true)
		d := time.Duration(200+f.rng.IntN(1800)) * time.Millisecond
		time.AfterFunc(d, func() { psp.SetDown(false) })
	case "psp_expire_tokens":
		psp.ExpireTokens()
	case "psp_lose_webhooks":
		psp.LoseWebhooks(1 + f.rng.IntN(3))
	case "psp_rate_limit":
		psp.SetRateLimit([]int{2, 10, 50}[f.rng.IntN(3)])
		d := time.Duration(500+f.rng.IntN(2500)) * time.Millisecond
		time.AfterFunc(d, func() { psp.SetRateLimit(0) })
	case "psp_latency":
		if f.t.Latency != nil {
			d := []time.Duration{0, 20 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond}[f.rng.IntN(4)]
			f.t.Latency(d, d/2)
		}
	case "receiver":
		if f.t.Receiver != nil {
			rate := []float64{0, 0, 0.2, 0.5, 1}[f.rng.IntN(5)]
			delay := []time.Duration{0, 0, 100 * time.Millisecond, time.Second}[f.rng.IntN(4)]
			f.t.Receiver(rate, delay)
		}
	}
}

// kill SIGKILLs a node (drawn) and restarts it after a drawn pause, in
// the background. It first waits for a node killed before to be back, so
// that one node is down at a time (with one node, the service is down
// until it is back).
func (f *Faults) kill(ctx context.Context) {
	f.wg.Wait()
	i := f.rng.IntN(f.t.Nodes)
	pause := time.Duration(f.rng.IntN(1500)) * time.Millisecond
	if err := f.t.Kill(i); err != nil {
		f.log.Error("kill", "node", i, "error", err.Error())
		return
	}
	f.mu.Lock()
	f.killed++
	f.mu.Unlock()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		if err := f.t.Restart(ctx, i); err != nil {
			f.log.Error("restart", "node", i, "error", err.Error())
		}
	}()
}

// Calm ends every fault: nodes back up, the PSP healthy and fast, the
// receiver answering at once.
func (f *Faults) Calm(ctx context.Context) {
	f.wg.Wait()
	f.t.PSP.ClearFaults()
	f.t.PSP.SetRateLimit(0)
	if f.t.Latency != nil {
		f.t.Latency(0, 0)
	}
	if f.t.Receiver != nil {
		f.t.Receiver(0, 0)
	}
	for i := range f.t.Nodes {
		if !f.t.Up(i) {
			if err := f.t.Restart(ctx, i); err != nil {
				f.log.Error("restart", "node", i, "error", err.Error())
			}
		}
	}
}

// Counts returns the faults injected, by kind, and the kills.
func (f *Faults) Counts() (map[string]int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]int, len(f.counts))
	for k, v := range f.counts {
		out[k] = v
	}
	return out, f.killed
}
