package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseEvents runs the behaviours of the webhook outbox: events stored with
// their transaction, claimed under leases, and attempts recorded.
func exerciseEvents(t *testing.T, open Opener) {
	exerciseEventLeases(t, open)
	exerciseEventClaims(t, open)
	exerciseDeferredEvents(t, open)
	exerciseGroupedAttempts(t, open)
	exerciseEventsWithTransaction(t, open)
}

// exerciseEventLeases checks that an event's lease has one holder at a time
// and is taken over when it runs out.
func exerciseEventLeases(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Event leases: one holder at a time, taken over when they run out", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.InsertEvent(ctx, pix.Event{ID: "evt_lease", ClientID: c.ID, TransactionID: "t1", Type: "x", URL: "u", Payload: "{}", CreatedAt: t0})
		}))
		claim := func(owner string, now time.Time) []pix.Event {
			var evs []pix.Event
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				var err error
				evs, err = tx.ClaimEvents(ctx, owner, now, now.Add(12*time.Second), 10)
				return err
			}))
			return evs
		}
		require.Len(t, claim("node-a", t0), 1)
		require.Empty(t, claim("node-b", t0.Add(5*time.Second)), "node-a holds the lease")
		// node-a dies; its lease runs out and node-b takes the event over.
		require.Len(t, claim("node-b", t0.Add(13*time.Second)), 1)
		finish := func(owner string) bool {
			var kept bool
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				var err error
				kept, err = tx.FinishAttempt(ctx, owner, pix.Attempt{ID: "att-" + owner, EventID: "evt_lease", At: t0.Add(14 * time.Second)},
					"delivered", 1, t0.Add(14*time.Second))
				return err
			}))
			return kept
		}
		require.False(t, finish("node-a"), "a lost lease changes nothing but the attempt log")
		require.True(t, finish("node-b"))
		require.Empty(t, claim("node-c", t0.Add(time.Hour)), "delivered events are not claimed again")
		e, err := db.Event(ctx, "evt_lease")
		require.NoError(t, err)
		require.Equal(t, "delivered", e.Status)
		require.Equal(t, 1, e.Attempts)
	})
}

// exerciseEventClaims checks that a claim takes the oldest due events;
// leased ones wait for their lease, and released ones are due again.
func exerciseEventClaims(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Claims take the oldest due events; leased ones wait for their lease, released ones are due again", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for i := range 6 {
				// Inserted newest first, so id and insertion order disagree with due order.
				at := t0.Add(time.Duration(5-i) * time.Second)
				if err := tx.InsertEvent(ctx, pix.Event{ID: fmt.Sprint("evt_q", 5-i), ClientID: c.ID, TransactionID: "tq", Type: "x",
					URL: "u", Payload: "{}", CreatedAt: at}); err != nil {
					return err
				}
			}
			return nil
		}))
		claim := func(owner string, now time.Time, limit int) []string {
			var ids []string
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				evs, err := tx.ClaimEvents(ctx, owner, now, now.Add(12*time.Second), limit)
				for _, e := range evs {
					require.False(t, e.NextAttemptAt.After(now), "a claim changes the lease only")
					ids = append(ids, e.ID)
				}
				return err
			}))
			slices.Sort(ids)
			return ids
		}
		now := t0.Add(4 * time.Second) // evt_q5 is not due yet
		require.Equal(t, []string{"evt_q0", "evt_q1"}, claim("node-a", now, 2), "the oldest due first")
		require.Equal(t, []string{"evt_q2", "evt_q3", "evt_q4"}, claim("node-b", now, 10), "leased events are not claimed again")
		require.Empty(t, claim("node-c", now, 10), "evt_q5 is not due yet and every other event is leased")
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.ReleaseEvent(ctx, "node-a", "evt_q1") }))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.ReleaseEvent(ctx, "node-x", "evt_q2") }), "not its lease: nothing changes")
		require.Equal(t, []string{"evt_q1", "evt_q5"}, claim("node-c", now.Add(time.Second), 10), "a released event is due at once")
		e, err := db.Event(ctx, "evt_q2")
		require.NoError(t, err)
		require.Equal(t, t0.Add(2*time.Second), e.NextAttemptAt.UTC())
		// node-a and node-b die: their events are due again when their leases run out.
		require.Equal(t, []string{"evt_q0", "evt_q2", "evt_q3", "evt_q4"}, claim("node-d", now.Add(12*time.Second), 10))
	})
}

// exerciseDeferredEvents checks that a deferred event leaves the front of
// the due order until its new time.
func exerciseDeferredEvents(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Deferred events leave the front of the due order until their new time", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for i := range 4 {
				if err := tx.InsertEvent(ctx, pix.Event{ID: fmt.Sprint("evt_d", i), ClientID: c.ID, TransactionID: "td", Type: "x",
					URL: "u", Payload: "{}", CreatedAt: t0.Add(time.Duration(i) * time.Second)}); err != nil {
					return err
				}
			}
			return nil
		}))
		claim := func(owner string, now time.Time, limit int) []string {
			var ids []string
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				evs, err := tx.ClaimEvents(ctx, owner, now, now.Add(12*time.Second), limit)
				for _, e := range evs {
					ids = append(ids, e.ID)
				}
				return err
			}))
			slices.Sort(ids)
			return ids
		}
		now := t0.Add(5 * time.Second)
		require.Equal(t, []string{"evt_d0", "evt_d1"}, claim("node-a", now, 2))
		later := now.Add(time.Minute)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.DeferEvents(ctx, "node-a", []store.Deferral{{ID: "evt_d0", Next: later}, {ID: "evt_d1", Next: later.Add(time.Second)}})
		}))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.DeferEvents(ctx, "node-x", []store.Deferral{{ID: "evt_d2", Next: later}})
		}), "not its lease: nothing changes")
		require.Equal(t, []string{"evt_d2", "evt_d3"}, claim("node-b", now, 2), "deferred events no longer come first")
		e, err := db.Event(ctx, "evt_d1")
		require.NoError(t, err)
		require.Equal(t, later.Add(time.Second), e.NextAttemptAt.UTC())
		require.Equal(t, 0, e.Attempts, "a deferral is not an attempt")
		e, err = db.Event(ctx, "evt_d2")
		require.NoError(t, err)
		require.Equal(t, t0.Add(2*time.Second), e.NextAttemptAt.UTC())
		require.Equal(t, []string{"evt_d2", "evt_d3"}, claim("node-c", later.Add(-time.Millisecond), 10),
			"node-b's leases ran out; the deferred events are not due before their new time")
		require.Equal(t, []string{"evt_d0"}, claim("node-c", later, 10))
	})
}

// exerciseGroupedAttempts checks that concurrent attempt records share
// transactions and each get their own answer.
func exerciseGroupedAttempts(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Concurrent attempt records share transactions and each get their own answer", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		const n = 60
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for i := range n {
				if err := tx.InsertEvent(ctx, pix.Event{ID: fmt.Sprint("evt_g", i), ClientID: c.ID, TransactionID: "t1", Type: "x",
					URL: "u", Payload: "{}", CreatedAt: t0}); err != nil {
					return err
				}
			}
			return nil
		}))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			evs, err := tx.ClaimEvents(ctx, "node-a", t0, t0.Add(12*time.Second), n)
			require.Len(t, evs, n)
			return err
		}))
		// Every third call names an owner that holds no lease; the rest
		// deliver (even i) or schedule a retry (odd i), all at once.
		kept := make([]bool, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				owner, status := "node-a", "delivered"
				if i%3 == 0 {
					owner = "node-b"
				}
				if i%2 == 1 {
					status = "pending"
				}
				var err error
				kept[i], err = db.FinishAttempt(ctx, store.Finish{Owner: owner, Status: status, Attempts: 1 + i%2, Next: t0.Add(time.Duration(i) * time.Minute),
					Attempt: pix.Attempt{ID: fmt.Sprint("att-g", i), EventID: fmt.Sprint("evt_g", i), At: t0, StatusCode: 200 + i, Latency: time.Duration(i) * time.Millisecond}})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		for i := range n {
			e, err := db.Event(ctx, fmt.Sprint("evt_g", i))
			require.NoError(t, err)
			if i%3 == 0 {
				require.False(t, kept[i], "event %d: not node-b's lease", i)
				require.Equal(t, "pending", e.Status)
				require.Equal(t, 0, e.Attempts)
				continue
			}
			require.True(t, kept[i], "event %d", i)
			want := map[bool]string{true: "pending", false: "delivered"}[i%2 == 1]
			require.Equal(t, want, e.Status, "event %d", i)
			require.Equal(t, 1+i%2, e.Attempts, "event %d", i)
			require.Equal(t, t0.Add(time.Duration(i)*time.Minute), e.NextAttemptAt.UTC(), "event %d", i)
		}
		pending, err := db.PendingEvents(ctx, []string{c.ID, "someone-else"})
		require.NoError(t, err)
		require.Equal(t, int64(n/3+n/3), pending, "the 20 whose lease was not held and the 20 other retries")
		pending, err = db.PendingEvents(ctx, []string{"someone-else"})
		require.NoError(t, err)
		require.Zero(t, pending)
		atts, err := db.Attempts(ctx, "t1")
		require.NoError(t, err)
		require.Len(t, atts, n, "every attempt is logged, kept lease or not")
		for i := range n {
			a := atts[fmt.Sprint("evt_g", i)]
			require.Len(t, a, 1)
			require.Equal(t, 200+i, a[0].StatusCode)
		}
	})
}

// exerciseEventsWithTransaction checks that events are stored with their
// transaction.
func exerciseEventsWithTransaction(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Events are stored with their transaction", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		ev := pix.Event{ID: "evt_1", ClientID: c.ID, TransactionID: "t1", Type: "pix.cashin.paid", URL: "https://x.test/h", Payload: `{"a":1}`, CreatedAt: t0}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.InsertEvent(ctx, ev) }))
		// A rolled-back transaction leaves no event behind.
		boom := errors.New("boom")
		require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error {
			if err := tx.InsertEvent(ctx, pix.Event{ID: "evt_2", ClientID: c.ID, TransactionID: "t1", Type: "x", URL: "u", Payload: "{}", CreatedAt: t0}); err != nil {
				return err
			}
			return boom
		}), boom)
		evs, err := db.Events(ctx, "t1")
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, "pending", evs[0].Status)
		require.Equal(t, ev.Payload, evs[0].Payload)
	})
}
