package transfer

import (
	"context"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/job"
	"github.com/pixgate/pixgate/internal/pix"
)

// flight is what one node's Run has in flight.
type flight struct {
	mu       sync.Mutex
	inFlight map[string]bool
	// unclaimed holds the steps in flight that only read (not claimed).
	unclaimed map[string]bool
	freed     chan struct{}
	wg        sync.WaitGroup
}

// room returns how many more steps may start, and the ids of those in
// flight that only read (their rows are still due).
func (f *flight) room() (free int, reading []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	reading = make([]string, 0, len(f.unclaimed))
	for id := range f.unclaimed {
		reading = append(reading, id)
	}
	return Workers - len(f.inFlight), reading
}

// take marks the items of lane not yet in flight as in flight and
// returns them.
func (f *flight) take(lane []item) []item {
	f.mu.Lock()
	defer f.mu.Unlock()
	var mine []item
	for _, it := range lane {
		if !f.inFlight[it.id] {
			f.inFlight[it.id] = true
			mine = append(mine, it)
			if it.state == pix.SendSent {
				f.unclaimed[it.id] = true
			}
		}
	}
	return mine
}

// done marks it no longer in flight.
func (f *flight) done(it item) {
	f.mu.Lock()
	delete(f.inFlight, it.id)
	if it.state == pix.SendSent {
		delete(f.unclaimed, it.id)
	}
	f.mu.Unlock()
}

// signal sends on c unless a signal is already pending.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Run advances every due transfer with the provider until ctx ends. Up to
// Workers steps run at once and a new one starts as soon as one ends, so
// a slow PSP is waited on in parallel rather than in rounds; a transfer
// committed on this node is taken up at once (Kick), and what falls due
// later is found by a look every poll. Each step is claimed in the
// database first, so several nodes may run over the same rows. While the
// database is out of reach, or full, the looks and the steps back off
// together (job.Backoff) rather than fail at the poll's pace.
func (e *Engine) Run(ctx context.Context, poll time.Duration) {
	f := &flight{inFlight: make(map[string]bool), unclaimed: make(map[string]bool), freed: make(chan struct{}, 1)}
	defer f.wg.Wait()
	outage := &job.Backoff{Name: "sender", Log: e.log, Min: poll}
	t := time.NewTicker(poll)
	defer t.Stop()
	for ctx.Err() == nil {
		if !outage.Wait(ctx) {
			break
		}
		looked := time.Now()
		full := e.look(ctx, f, outage)
		if full {
			// More is due than there were free steps: look again as soon
			// as one ends.
			select {
			case <-ctx.Done():
			case <-f.freed:
			}
			// Steps ending at the same moment make room for one look.
			pause(ctx, kickGap-time.Since(looked))
			continue
		}
		select {
		case <-ctx.Done():
		case <-t.C:
		case <-e.kick:
			// Transfers committed at the same moment are taken up by one
			// look rather than one look each.
			pause(ctx, kickGap-time.Since(looked))
		}
	}
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// look reads every kind's due transfers into the free steps and starts
// them; it reports whether more was due than there was room for.
func (e *Engine) look(ctx context.Context, f *flight, outage *job.Backoff) (full bool) {
	healthy, launchedAny := true, false
	for k := range e.kinds {
		free, reading := f.room()
		if free <= 0 {
			full = true
			break
		}
		// A step that only reads is not claimed, so its row is still due
		// while it runs: look past those in flight.
		items, err := e.kinds[k].due(ctx, e.clocks.Now(), free+len(reading), reading)
		if err != nil && e.db.Unavailable(err) {
			outage.Fail(ctx, err)
			healthy = false
			break
		}
		if err != nil {
			if ctx.Err() == nil {
				e.log.WarnContext(ctx, "could not read the transfers due", "error", err.Error())
			}
			continue
		}
		full = full || len(items) == free+len(reading)
		launched := 0
		for _, lane := range lanes(items) {
			if launched >= free {
				full = true // the rest waits for a free step
				break
			}
			mine := f.take(lane)
			launched += len(mine)
			if len(mine) == 0 {
				continue
			}
			launchedAny = true
			f.wg.Add(1)
			go e.runLane(ctx, f, outage, mine)
		}
	}
	if healthy && !launchedAny {
		outage.Succeed(ctx)
	}
	return full
}

// runLane steps the transfers of one lane in order; after one fails, the
// lane's later transfers wait for the next look.
func (e *Engine) runLane(ctx context.Context, f *flight, outage *job.Backoff, lane []item) {
	defer f.wg.Done()
	failed := false
	for _, it := range lane {
		if !failed && ctx.Err() == nil {
			_, err := e.step(ctx, it)
			switch {
			case err == nil:
				outage.Succeed(ctx)
			case e.db.Unavailable(err):
				failed = true
				outage.Fail(ctx, err)
			default:
				failed = true
				if ctx.Err() == nil {
					e.log.WarnContext(ctx, "a send step failed; it is taken up again", "id", it.id, "error", err.Error())
				}
			}
		}
		f.done(it)
	}
	signal(f.freed)
}
