// Package outbox owns how a database transaction writes the webhook events
// of the changes it makes: in the same transaction, leased to this node's
// webhook courier as far as it has workers free and left for a claim
// beyond, and handed over only once the transaction has committed. Every
// use case that moves money (gateway, transfer, recurrence) writes through
// one Writer.
package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"

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

// Writer runs the transactions that write events.
type Writer struct {
	// DB is the store; required.
	DB *store.DB
	// Courier, when set, takes the events written leased (see Courier).
	Courier Courier
	// Wake, when set, tells the webhook dispatcher that events are due now.
	Wake func()
	// Now is the real time; required.
	Now func() time.Time
	// Rand is the source of event and posting ids; required.
	Rand io.Reader
}

// Events is how one transaction writes its events.
type Events struct {
	courier  Courier
	leased   []pix.Event // written leased, one reserved worker each: delivered after the commit
	unleased int         // events written for a claim
	// now is the real time the transaction began: an event is due for
	// delivery from its created_at, which a sandbox client's clock (whose
	// time the payload's occurred_at shows) must not push into the future.
	now time.Time
}

// Insert writes es in tx.
func (o *Events) Insert(ctx context.Context, tx *store.Tx, es ...pix.Event) error {
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
func (o *Events) abandon() {
	if o != nil && len(o.leased) > 0 {
		o.courier.Release(len(o.leased))
		o.leased = nil
	}
}

// Write is store.DB.Write for a transaction that writes events. Once it
// has committed, the leased events go to the courier and, if any event was
// written unleased, the dispatcher is woken to claim it. An attempt that
// fails (and one Write retries) gives its workers back.
func (w *Writer) Write(ctx context.Context, fn func(tx *store.Tx, o *Events) error) error {
	return w.writeWith(ctx, w.DB.Write, fn)
}

// WriteGrouped is Write in a transaction shared with others of the same
// moment (store.DB.WriteGrouped): for the many small steps of transfers.
func (w *Writer) WriteGrouped(ctx context.Context, fn func(tx *store.Tx, o *Events) error) error {
	return w.writeWith(ctx, w.DB.WriteGrouped, fn)
}

func (w *Writer) writeWith(ctx context.Context, write func(context.Context, func(*store.Tx) error) error,
	fn func(tx *store.Tx, o *Events) error) error {
	var o *Events
	err := write(ctx, func(tx *store.Tx) error {
		o.abandon()
		o = &Events{courier: w.Courier, now: w.Now().UTC().Truncate(time.Millisecond)}
		return fn(tx, o)
	})
	if err != nil {
		o.abandon()
		return err
	}
	if len(o.leased) > 0 {
		w.Courier.Deliver(o.leased)
	}
	if o.unleased > 0 {
		w.WakeDispatcher()
	}
	return nil
}

// WakeDispatcher tells the webhook dispatcher, if any, that events are due.
func (w *Writer) WakeDispatcher() {
	if w.Wake != nil {
		w.Wake()
	}
}

// OrderedID returns a time-ordered (v7) UUID, for rows read back in order
// (postings, events).
func (w *Writer) OrderedID() string {
	return uuid.Must(uuid.NewV7FromReader(w.Rand)).String()
}

// NewID returns a random (v4) UUID in lower case, the id of every
// transaction, refund, recurrence and receipt. A random source that fails
// leaves no id to give: it panics, as crypto/rand's own reads do.
func (w *Writer) NewID() string {
	return uuid.Must(uuid.NewRandomFromReader(w.Rand)).String()
}

// EventID returns a new event id: "evt_" and an ordered UUID's hex digits.
func (w *Writer) EventID() string {
	return "evt_" + strings.ReplaceAll(w.OrderedID(), "-", "")
}

// Event builds the event that reports a change of transaction t at now.
func (w *Writer) Event(t pix.Transaction, event string, status pix.TxStatus, value, tax pix.Amount, refundID string, now time.Time) (pix.Event, error) {
	b := pix.NewEventBody(w.EventID(), t, event, status, value, tax, refundID, now)
	payload, err := json.Marshal(b)
	if err != nil {
		return pix.Event{}, fmt.Errorf("event payload: %w", err)
	}
	return pix.Event{ID: b.ID, ClientID: t.ClientID, TransactionID: t.ID, Type: event,
		URL: t.CallbackURL, Payload: string(payload), CreatedAt: now}, nil
}

// Emit writes, inside tx, the event that reports a change of transaction t.
func (w *Writer) Emit(ctx context.Context, tx *store.Tx, o *Events, t pix.Transaction, event string, status pix.TxStatus,
	value, tax pix.Amount, refundID string, now time.Time) error {
	e, err := w.Event(t, event, status, value, tax, refundID, now)
	if err != nil {
		return err
	}
	return o.Insert(ctx, tx, e)
}
