package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseScheduled runs the storage behaviours of scheduled payouts
// (internal/store/scheduled.go, docs/payouts.md): a run is written whole
// or not at all, a payout is due from the start of its day, and it leaves
// the waiting state once, by a start or an end, whatever the nodes.
func exerciseScheduled(t *testing.T, open Opener) {
	t.Run("A scheduled payout is stored waiting, nothing reserved, and a run is written whole or not at all",
		func(t *testing.T) { scheduledCreate(t, open) })
	t.Run("A scheduled payout is due from its due_at, earliest first, up to the limit", func(t *testing.T) { scheduledDue(t, open) })
	t.Run("A scheduled payout starts once however many nodes try", func(t *testing.T) { scheduledStartOnce(t, open) })
	t.Run("A scheduled payout ends once, cancelled or failed, and then never starts", func(t *testing.T) { scheduledEndOnce(t, open) })
	t.Run("Scheduled payouts are listed latest day first, filtered and paged by key", func(t *testing.T) { scheduledHistory(t, open) })
}

// newScheduled is client c's payout ext of 100, scheduled for the day that
// starts at due: PENDING, send state scheduled, no settle_at.
func newScheduled(c pix.Client, ext string, due time.Time) store.ScheduledPayout {
	p := newTx(c, pix.TypeCashout, ext, 100, t0)
	p.ExpiresAt, p.SendState = time.Time{}, pix.SendScheduled
	return store.ScheduledPayout{Transaction: p, Date: due.Format(time.DateOnly), DueAt: due}
}

// createScheduled stores ss, each as its own request would.
func createScheduled(t *testing.T, db *store.DB, ss ...store.ScheduledPayout) {
	t.Helper()
	for _, s := range ss {
		require.NoError(t, db.CreateScheduledPayout(context.Background(), s))
	}
}

// fund credits amount to client c's available balance.
func fund(t *testing.T, db *store.DB, c pix.Client, amount pix.Amount) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		return tx.PostAll(ctx, []store.PostingWrite{{ID: uuid.NewString(), ClientID: c.ID, TransactionID: "in-" + uuid.NewString(),
			Posting: ledger.CashinPaid(amount, 0)}}, t0)
	}))
}

// reservation is the creation of payout p reserving its amount.
func reservation(p pix.Transaction) store.NewPayout {
	return store.NewPayout{Transaction: p, Posting: store.PostingWrite{ID: uuid.NewString(), ClientID: p.ClientID, TransactionID: p.ID,
		Posting: ledger.PayoutReserved(p.Amount, p.Tax)}}
}

// dueIDs are the ids of ds, in order.
func dueIDs(ds []store.ScheduledDue) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.TransactionID
	}
	return out
}

// requireWaiting asserts whether payout id of client c still waits.
func requireWaiting(t *testing.T, db *store.DB, c pix.Client, id string, waiting bool) {
	t.Helper()
	_, got, err := db.ScheduledDueAt(context.Background(), c.ID, id)
	require.NoError(t, err)
	require.Equal(t, waiting, got, "payout %s waiting", id)
}

func scheduledCreate(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c, other := NewClient(t, db), NewClient(t, db)
	due := t0.Add(36 * time.Hour)
	s := newScheduled(c, "s-1", due)
	createScheduled(t, db, s)

	got, err := db.Transaction(ctx, c.ID, s.Transaction.ID)
	require.NoError(t, err)
	require.True(t, got.Scheduled(), "stored PENDING with send state scheduled")
	require.True(t, got.SettleAt.IsZero(), "the sender never sees it")
	posts, err := db.Postings(ctx, s.Transaction.ID)
	require.NoError(t, err)
	require.Empty(t, posts, "nothing is reserved before its day")
	requireBalances(t, db, c.ID, 0, 0)
	at, waiting, err := db.ScheduledDueAt(ctx, c.ID, s.Transaction.ID)
	require.NoError(t, err)
	require.True(t, waiting)
	require.True(t, due.Equal(at), "due_at %s reads back as %s", due, at)

	_, _, err = db.ScheduledDueAt(ctx, other.ID, s.Transaction.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "another client's scheduled payout")
	_, _, err = db.ScheduledDueAt(ctx, c.ID, uuid.NewString())
	require.ErrorIs(t, err, store.ErrNotFound)

	// A run holding a duplicate external_id writes none of its payouts.
	fund(t, db, c, 1000)
	now := newPayout(c, "n-1", t0.Add(time.Minute))
	fresh, dup := newScheduled(c, "s-2", due), newScheduled(c, "s-1", due)
	require.ErrorIs(t, db.CreatePayoutRun(ctx, []store.NewPayout{reservation(now)}, []store.ScheduledPayout{fresh, dup}), store.ErrConflict)
	for _, id := range []string{now.ID, fresh.Transaction.ID, dup.Transaction.ID} {
		_, err := db.Transaction(ctx, c.ID, id)
		require.ErrorIs(t, err, store.ErrNotFound, "a failed run leaves no row")
		_, _, err = db.ScheduledDueAt(ctx, c.ID, id)
		require.ErrorIs(t, err, store.ErrNotFound, "a failed run leaves no schedule")
	}
	requireBalances(t, db, c.ID, 1000, 0)

	// A reservation the balance cannot hold fails the run, its scheduled payouts too.
	big := newPayout(c, "n-2", t0.Add(time.Minute))
	big.Amount = 1001
	require.ErrorIs(t, db.CreatePayoutRun(ctx, []store.NewPayout{reservation(big)}, []store.ScheduledPayout{fresh}), store.ErrInsufficientFunds)
	_, _, err = db.ScheduledDueAt(ctx, c.ID, fresh.Transaction.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	requireBalances(t, db, c.ID, 1000, 0)

	// A good run writes all: the reservation of the ordinary payout only.
	require.NoError(t, db.CreatePayoutRun(ctx, []store.NewPayout{reservation(now)}, []store.ScheduledPayout{fresh}))
	requireBalances(t, db, c.ID, 900, 100)
	requireWaiting(t, db, c, fresh.Transaction.ID, true)
	_, _, err = db.ScheduledDueAt(ctx, c.ID, now.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "a payout never scheduled has no schedule")
}

func scheduledDue(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	a, b := NewClient(t, db), NewClient(t, db)
	h1, h2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	p1, p2, p3 := newScheduled(a, "p1", h1), newScheduled(a, "p2", h2), newScheduled(a, "p3", h1)
	q1 := newScheduled(b, "q1", t0.Add(30*time.Minute))
	createScheduled(t, db, p2, p1, q1, p3)
	sameDue := []string{p1.Transaction.ID, p3.Transaction.ID}
	if sameDue[0] > sameDue[1] {
		sameDue[0], sameDue[1] = sameDue[1], sameDue[0]
	}

	due, err := db.DueScheduled(ctx, h1.Add(-time.Millisecond), 10)
	require.NoError(t, err)
	require.Equal(t, []string{q1.Transaction.ID}, dueIDs(due), "not due before its due_at")
	due, err = db.DueScheduled(ctx, h1, 10)
	require.NoError(t, err)
	require.Equal(t, []string{q1.Transaction.ID, sameDue[0], sameDue[1]}, dueIDs(due), "due at its due_at, earliest first, then by id")
	require.Equal(t, b.ID, due[0].ClientID)
	require.True(t, due[0].DueAt.Equal(q1.DueAt))
	due, err = db.DueScheduled(ctx, h2, 2)
	require.NoError(t, err)
	require.Equal(t, []string{q1.Transaction.ID, sameDue[0]}, dueIDs(due), "the limit keeps the earliest")

	mine, err := db.ClientDueScheduled(ctx, a.ID, h2, 10)
	require.NoError(t, err)
	require.Equal(t, []string{sameDue[0], sameDue[1], p2.Transaction.ID}, dueIDs(mine), "only the client's, earliest first")
	mine, err = db.ClientDueScheduled(ctx, a.ID, h1.Add(-time.Millisecond), 10)
	require.NoError(t, err)
	require.Empty(t, mine, "the client's clock before its day")
	mine, err = db.ClientDueScheduled(ctx, b.ID, h2, 1)
	require.NoError(t, err)
	require.Equal(t, []string{q1.Transaction.ID}, dueIDs(mine))

	// Started or cancelled, a payout is no longer due.
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		if _, ok, err := tx.StartScheduled(ctx, p1.Transaction.ID, h1); err != nil || !ok {
			return fmt.Errorf("start: %v %w", ok, err)
		}
		if _, ok, err := tx.EndScheduled(ctx, p3.Transaction.ID, false); err != nil || !ok {
			return fmt.Errorf("end: %v %w", ok, err)
		}
		return nil
	}))
	due, err = db.DueScheduled(ctx, h2.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Equal(t, []string{q1.Transaction.ID, p2.Transaction.ID}, dueIDs(due))
	mine, err = db.ClientDueScheduled(ctx, a.ID, h2.Add(time.Hour), 10)
	require.NoError(t, err)
	require.Equal(t, []string{p2.Transaction.ID}, dueIDs(mine))
	requireWaiting(t, db, a, p1.Transaction.ID, false)
	requireWaiting(t, db, a, p3.Transaction.ID, false)
	requireWaiting(t, db, a, p2.Transaction.ID, true)
}

func scheduledStartOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c := NewClient(t, db)
	fund(t, db, c, 1000)
	s := newScheduled(c, "s-1", t0.Add(time.Hour))
	createScheduled(t, db, s)
	id := s.Transaction.ID

	// Nodes start it at once, each reserving in its own transaction as
	// internal/transfer does: one wins, the others change nothing.
	const nodes = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var wins []time.Time
	var started pix.Transaction
	errs := make(chan error, nodes)
	for i := range nodes {
		at := t0.Add(time.Hour + time.Duration(i)*time.Second)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tr pix.Transaction
			var ok bool
			err := db.Write(ctx, func(tx *store.Tx) error {
				var err error
				if tr, ok, err = tx.StartScheduled(ctx, id, at); err != nil || !ok {
					return err
				}
				return tx.PostAll(ctx, []store.PostingWrite{{ID: uuid.NewString(), ClientID: c.ID, TransactionID: id,
					Posting: ledger.PayoutReserved(tr.Amount, tr.Tax)}}, at)
			})
			if err == nil && ok {
				mu.Lock()
				wins, started = append(wins, at), tr
				mu.Unlock()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, wins, 1, "exactly one node starts it")
	require.Equal(t, pix.SendToSend, started.SendState)
	require.Equal(t, pix.StatusPending, started.Status)
	require.True(t, wins[0].Equal(started.SettleAt), "due for the sender at the winner's time")
	row, err := db.Transaction(ctx, c.ID, id)
	require.NoError(t, err)
	require.Equal(t, started, row, "StartScheduled reports the row as it now is")
	requireBalances(t, db, c.ID, 900, 100)
	posts, err := db.Postings(ctx, id)
	require.NoError(t, err)
	require.Len(t, posts, 1, "reserved once")
	requireWaiting(t, db, c, id, false)

	// Once started, neither a start nor an end changes it.
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		_, ok, err := tx.StartScheduled(ctx, id, t0.Add(5*time.Hour))
		require.False(t, ok, "a second start")
		if err != nil {
			return err
		}
		_, ok, err = tx.EndScheduled(ctx, id, false)
		require.False(t, ok, "an end after the start")
		return err
	}))
	again, err := db.Transaction(ctx, c.ID, id)
	require.NoError(t, err)
	require.Equal(t, row, again, "nothing changed")

	// A payout that was never scheduled is not started.
	plain := newPayout(c, "plain", t0.Add(time.Minute))
	require.NoError(t, db.CreatePayout(ctx, reservation(plain)))
	before, err := db.Transaction(ctx, c.ID, plain.ID)
	require.NoError(t, err)
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		_, ok, err := tx.StartScheduled(ctx, plain.ID, t0.Add(9*time.Hour))
		require.False(t, ok)
		return err
	}))
	after, err := db.Transaction(ctx, c.ID, plain.ID)
	require.NoError(t, err)
	require.Equal(t, before, after)
}

func scheduledEndOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c := NewClient(t, db)
	cancelled, failed := newScheduled(c, "s-c", t0.Add(time.Hour)), newScheduled(c, "s-f", t0.Add(time.Hour))
	createScheduled(t, db, cancelled, failed)

	end := func(id string, fail bool) (pix.Transaction, bool) {
		var tr pix.Transaction
		var ok bool
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			var err error
			tr, ok, err = tx.EndScheduled(ctx, id, fail)
			return err
		}))
		return tr, ok
	}
	for _, s := range []store.ScheduledPayout{cancelled, failed} {
		id := s.Transaction.ID
		tr, ok := end(id, s.Transaction.ExternalID == "s-f")
		require.True(t, ok, "the first end")
		require.Equal(t, pix.StatusCancelled, tr.Status)
		require.Equal(t, pix.SendDone, tr.SendState)
		require.True(t, tr.SettleAt.IsZero())
		row, err := db.Transaction(ctx, c.ID, id)
		require.NoError(t, err)
		require.Equal(t, tr, row, "EndScheduled reports the row as it now is")

		_, ok = end(id, false)
		require.False(t, ok, "a second end")
		_, ok = end(id, true)
		require.False(t, ok, "a second end, failed")
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			_, ok, err := tx.StartScheduled(ctx, id, t0.Add(time.Hour))
			require.False(t, ok, "an ended payout never starts")
			return err
		}))
		again, err := db.Transaction(ctx, c.ID, id)
		require.NoError(t, err)
		require.Equal(t, row, again, "nothing changed")
		requireWaiting(t, db, c, id, false)
	}
	requireBalances(t, db, c.ID, 0, 0)

	rows, _, err := db.ScheduledHistory(ctx, store.ScheduledFilter{ClientID: c.ID, Limit: 10})
	require.NoError(t, err)
	states := map[string]string{}
	for _, r := range rows {
		states[r.TransactionID] = r.State
	}
	require.Equal(t, map[string]string{cancelled.Transaction.ID: "cancelled", failed.Transaction.ID: "failed"}, states,
		"an end records why")
}

func scheduledHistory(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	a, b := NewClient(t, db), NewClient(t, db)
	var mine []store.ScheduledPayout
	for i := range 13 {
		s := newScheduled(a, fmt.Sprintf("h%d", i), t0.Add(time.Duration(24*(i/3))*time.Hour)) // three a day
		mine = append(mine, s)
		createScheduled(t, db, s, newScheduled(b, fmt.Sprintf("h%d", i), t0))
	}
	var seen []store.ScheduledRow
	cursor := ""
	for page := 0; ; page++ {
		rows, next, err := db.ScheduledHistory(ctx, store.ScheduledFilter{ClientID: a.ID, Cursor: cursor, Limit: 5})
		require.NoError(t, err)
		require.LessOrEqual(t, len(rows), 5)
		seen = append(seen, rows...)
		if page == 0 {
			// A payout for a later day arriving between pages does not shift them.
			createScheduled(t, db, newScheduled(a, "late", t0.Add(90*24*time.Hour)))
		}
		if next == "" {
			break
		}
		cursor = next
	}
	require.Len(t, seen, 13)
	uniq := map[string]bool{}
	for i, r := range seen {
		require.Equal(t, a.ID, r.ClientID)
		require.Equal(t, "scheduled", r.State)
		uniq[r.TransactionID] = true
		if i > 0 {
			prev := seen[i-1]
			require.True(t, prev.DueAt.After(r.DueAt) || (prev.DueAt.Equal(r.DueAt) && prev.TransactionID > r.TransactionID),
				"latest day first, then by id")
		}
	}
	require.Len(t, uniq, 13, "no repeats")
	byID := map[string]store.ScheduledPayout{}
	for _, s := range mine {
		byID[s.Transaction.ID] = s
	}
	for _, r := range seen {
		s, ok := byID[r.TransactionID]
		require.True(t, ok, "no row of another client or day")
		require.Equal(t, s.Date, r.Date)
		require.True(t, s.DueAt.Equal(r.DueAt))
	}

	all, next, err := db.ScheduledHistory(ctx, store.ScheduledFilter{Limit: 100})
	require.NoError(t, err)
	require.Len(t, all, 27, "every client's")
	require.Empty(t, next)

	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		for _, s := range mine[:2] {
			if _, _, err := tx.StartScheduled(ctx, s.Transaction.ID, t0); err != nil {
				return err
			}
		}
		_, _, err := tx.EndScheduled(ctx, mine[2].Transaction.ID, false)
		return err
	}))
	started, _, err := db.ScheduledHistory(ctx, store.ScheduledFilter{ClientID: a.ID, State: "started", Limit: 100})
	require.NoError(t, err)
	got := map[string]bool{}
	for _, r := range started {
		got[r.TransactionID] = true
	}
	require.Equal(t, map[string]bool{mine[0].Transaction.ID: true, mine[1].Transaction.ID: true}, got)
	waiting, _, err := db.ScheduledHistory(ctx, store.ScheduledFilter{ClientID: a.ID, State: "scheduled", Limit: 100})
	require.NoError(t, err)
	require.Len(t, waiting, 11, "13 and the late one, less three")
	none, _, err := db.ScheduledHistory(ctx, store.ScheduledFilter{ClientID: b.ID, State: "started", Limit: 100})
	require.NoError(t, err)
	require.Empty(t, none)

	_, _, err = db.ScheduledHistory(ctx, store.ScheduledFilter{Cursor: "!!", Limit: 5})
	require.ErrorIs(t, err, store.ErrBadCursor)
}
