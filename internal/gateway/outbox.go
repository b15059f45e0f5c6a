package gateway

import (
	"context"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// Courier takes the events this node writes straight to its webhook
// dispatcher, which then delivers them without claiming them first
// (webhook.Dispatcher implements it; see its Reserve).
type Courier interface {
	// Reserve takes up to n free delivery workers and returns the lease to
	// write that many events with.
	Reserve(n int) (owner string, until time.Time, got int)
	// Deliver starts the events written under reservations once their
	// transaction has committed, one reserved worker each.
	Deliver(events []pix.Event)
	// Release gives back n reserved workers: their transaction failed.
	Release(n int)
}

// outbox is how one transaction writes its events: leased to this node's
// courier as far as it has workers free, unleased (for a claim) beyond.
type outbox struct {
	courier  Courier
	leased   []pix.Event // written leased, one reserved worker each: delivered after the commit
	unleased int         // events written for a claim
	// now is the real time the transaction began: an event is due for
	// delivery from its created_at, which a sandbox client's clock (whose
	// time the payload's occurred_at shows) must not push into the future.
	now time.Time
}

// insert writes es in tx.
func (o *outbox) insert(ctx context.Context, tx *store.Tx, es ...pix.Event) error {
	for i := range es {
		if !o.now.IsZero() && es[i].CreatedAt.After(o.now) {
			es[i].CreatedAt = o.now
		}
	}
	got := 0
	if o.courier != nil {
		var owner string
		var until time.Time
		owner, until, got = o.courier.Reserve(len(es))
		for i := range es[:got] {
			es[i].LeaseOwner, es[i].LeaseUntil = owner, until
		}
		o.leased = append(o.leased, es[:got]...)
	}
	o.unleased += len(es) - got
	return tx.InsertEvents(ctx, es)
}

// abandon gives the reserved workers back: the transaction did not commit.
func (o *outbox) abandon() {
	if o != nil && len(o.leased) > 0 {
		o.courier.Release(len(o.leased))
		o.leased = nil
	}
}

// write is s.db.Write for a transaction that writes events through an
// outbox. Once it has committed, the leased events go to the courier and,
// if any event was written unleased, the dispatcher is woken to claim it.
// An attempt that fails (and one Write retries) gives its workers back.
func (s *Service) write(ctx context.Context, fn func(tx *store.Tx, o *outbox) error) error {
	return s.writeWith(ctx, s.db.Write, fn)
}

// writeGrouped is write in a transaction shared with others of the same
// moment (store.DB.WriteGrouped): for the many small steps of transfers.
func (s *Service) writeGrouped(ctx context.Context, fn func(tx *store.Tx, o *outbox) error) error {
	return s.writeWith(ctx, s.db.WriteGrouped, fn)
}

func (s *Service) writeWith(ctx context.Context, w func(context.Context, func(*store.Tx) error) error,
	fn func(tx *store.Tx, o *outbox) error) error {
	var o *outbox
	err := w(ctx, func(tx *store.Tx) error {
		o.abandon()
		o = &outbox{courier: s.Courier, now: s.now()}
		return fn(tx, o)
	})
	if err != nil {
		o.abandon()
		return err
	}
	if len(o.leased) > 0 {
		s.Courier.Deliver(o.leased)
	}
	if o.unleased > 0 {
		s.wake()
	}
	return nil
}
