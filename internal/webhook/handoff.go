package webhook

import (
	"time"

	"github.com/pixgate/pixgate/internal/pix"
)

// Events handed over as they are written.
//
// A node that writes an event and has a worker free delivers it itself, so it
// need not find it again with a claim: Reserve takes free workers before the
// transaction writes its events, the events are written already leased to
// this dispatcher (pix.Event.LeaseOwner, LeaseUntil), and once the
// transaction has committed Deliver starts them at once. Under payout load a
// claim ran for every few attempts, and its scan past the leased events
// cost PostgreSQL about 0.05 ms per payout. An event written while no worker
// was free is written unleased and claimed as before. A node that dies
// between the commit and the attempt leaves its events leased: like claimed
// ones, they are taken over once the lease runs out.

// Reserve takes up to n free workers for events about to be written leased
// to this dispatcher and returns the lease to write them with (owner, until)
// and how many workers it took. It takes none while Run is not running or
// once it is stopping. Every reserved worker must be given back by Deliver
// or Release.
func (d *Dispatcher) Reserve(n int) (owner string, until time.Time, got int) {
	d.init()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.base == nil {
		return "", time.Time{}, 0
	}
take:
	for got < n {
		select {
		case d.slots <- struct{}{}:
			got++
		default:
			break take
		}
	}
	// Counted as attempts in flight from now, so that a shutdown waits for
	// the transaction writing them to end.
	d.wg.Add(got)
	return d.Owner, d.Now().Add(d.Lease), got
}

// Deliver starts the attempts of events written under reservations, after
// their transaction committed, each in one reserved worker, until the
// LeaseUntil Reserve gave them.
func (d *Dispatcher) Deliver(events []pix.Event) {
	d.mu.Lock()
	base := d.base
	d.mu.Unlock()
	if base == nil {
		// Run ended since the reservation: the leases run out and the
		// events are taken over (by this node after a restart).
		d.Release(len(events))
		return
	}
	now := d.Now()
	for _, e := range events {
		h, next, _ := d.admit(e, now)
		if h == nil {
			// Its host has no room (see dispatch): put off from the
			// worker reserved for it.
			go func() {
				defer d.Release(1)
				d.hold(base, e, next)
			}()
			continue
		}
		d.start(base, e, h, e.LeaseUntil, nil)
	}
}

// Release gives back n reserved workers that no event used (their
// transaction failed, or Run ended before it committed).
func (d *Dispatcher) Release(n int) {
	for range n {
		<-d.slots
		d.wg.Done()
	}
}
