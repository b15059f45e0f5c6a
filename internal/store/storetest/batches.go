package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseBatches runs the storage behaviours of batches of payouts
// (internal/store/batches.go, docs/payouts.md): a batch is created once per
// client and external_id, taken over by one request, accepted once with
// its items in order, and completed once when no accepted item is pending.
func exerciseBatches(t *testing.T, open Opener) {
	t.Run("A batch is inserted once per id and per client's external_id", func(t *testing.T) { batchInsertOnce(t, open) })
	t.Run("Taking a batch over is a compare-and-set on its lease", func(t *testing.T) { batchTakeOnce(t, open) })
	t.Run("A batch is accepted once, its items read back in order with their payouts", func(t *testing.T) { batchAccept(t, open) })
	t.Run("Transactions are read by ids and by a client's external_ids, past a chunk", func(t *testing.T) { batchTransactionsBy(t, open) })
	t.Run("A batch is completable once no accepted item is pending, and completed once", func(t *testing.T) { batchComplete(t, open) })
	t.Run("Batches are listed newest first, filtered and paged by key", func(t *testing.T) { batchHistory(t, open) })
}

// newBatch is client c's accepting batch ext of three items, created at at.
func newBatch(c pix.Client, ext string, at time.Time) pix.Batch {
	return pix.Batch{ID: uuid.NewString(), ClientID: c.ID, ExternalID: ext, RequestHash: "h-" + ext, CallbackURL: "https://cb.example/" + ext,
		State: pix.BatchAccepting, Total: 3, LeaseUntil: at.Add(time.Minute), CreatedAt: at}
}

func insertBatch(t *testing.T, db *store.DB, b pix.Batch) {
	t.Helper()
	ok, err := db.InsertBatch(context.Background(), b)
	require.NoError(t, err)
	require.True(t, ok, "batch %s inserted", b.ExternalID)
}

// insertPayouts stores ts as plain rows (no reservation: the batch reads
// only look at them).
func insertPayouts(t *testing.T, db *store.DB, ts ...pix.Transaction) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		for _, tr := range ts {
			if err := tx.CreateTransaction(ctx, tr); err != nil {
				return err
			}
		}
		return nil
	}))
}

// rejected is item idx of a batch, refused with an error.
func rejected(idx int, ext string) pix.BatchItem {
	return pix.BatchItem{Index: idx, ExternalID: ext, Accepted: pix.StatusRejected, ErrorCode: pix.EInvalid, ErrorMessage: "Invalid request parameters"}
}

// acceptBatch accepts b with items, counting them.
func acceptBatch(t *testing.T, db *store.DB, b pix.Batch, items ...pix.BatchItem) pix.Batch {
	t.Helper()
	b.Accepted, b.Rejected = 0, 0
	for _, it := range items {
		if it.Accepted == pix.StatusRejected {
			b.Rejected++
		} else {
			b.Accepted++
		}
	}
	require.NoError(t, db.AcceptBatch(context.Background(), b, items))
	b.State = pix.BatchAccepted
	return b
}

// batchIDs are the ids of bs, in order.
func batchIDs(bs []pix.Batch) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = b.ID
	}
	return out
}

func batchInsertOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	a, b := NewClient(t, db), NewClient(t, db)
	first := newBatch(a, "b-1", t0.Add(1500*time.Millisecond))
	insertBatch(t, db, first)
	got, err := db.Batch(ctx, a.ID, first.ID)
	require.NoError(t, err)
	require.Equal(t, first, got, "reads back as written")
	_, err = db.Batch(ctx, b.ID, first.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "another client's batch")

	sameID := newBatch(a, "b-2", t0)
	sameID.ID = first.ID
	ok, err := db.InsertBatch(ctx, sameID)
	require.NoError(t, err)
	require.False(t, ok, "the same id")
	sameExt := newBatch(a, "b-1", t0.Add(time.Hour))
	sameExt.RequestHash = "other"
	ok, err = db.InsertBatch(ctx, sameExt)
	require.NoError(t, err)
	require.False(t, ok, "the client's external_id again")
	_, err = db.Batch(ctx, a.ID, sameExt.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "a refused batch leaves no row")
	got, err = db.Batch(ctx, a.ID, first.ID)
	require.NoError(t, err)
	require.Equal(t, first, got, "the first is unchanged")

	theirs := newBatch(b, "b-1", t0)
	insertBatch(t, db, theirs) // external_ids are per client
	byExt, err := db.BatchByExternalID(ctx, a.ID, "b-1")
	require.NoError(t, err)
	require.Equal(t, first, byExt)
	byExt, err = db.BatchByExternalID(ctx, b.ID, "b-1")
	require.NoError(t, err)
	require.Equal(t, theirs.ID, byExt.ID)
	_, err = db.BatchByExternalID(ctx, a.ID, "b-2")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func batchTakeOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c := NewClient(t, db)
	bt := newBatch(c, "b-1", t0)
	insertBatch(t, db, bt)
	was := bt.LeaseUntil

	ok, err := db.TakeBatch(ctx, bt.ID, was.Add(-time.Millisecond), was.Add(time.Hour))
	require.NoError(t, err)
	require.False(t, ok, "a lease it no longer has")

	// Requests retrying at once, all having read the same lease: one wins.
	const takers = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	var wins []time.Time
	errs := make(chan error, takers)
	for i := range takers {
		lease := was.Add(time.Duration(i+1) * time.Minute)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := db.TakeBatch(ctx, bt.ID, was, lease)
			if ok {
				mu.Lock()
				wins = append(wins, lease)
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
	require.Len(t, wins, 1, "exactly one taker")
	got, err := db.Batch(ctx, c.ID, bt.ID)
	require.NoError(t, err)
	require.True(t, wins[0].Equal(got.LeaseUntil), "the winner's lease")
	require.Equal(t, pix.BatchAccepting, got.State)

	ok, err = db.TakeBatch(ctx, bt.ID, was, was.Add(time.Hour))
	require.NoError(t, err)
	require.False(t, ok, "the lease it replaced")
	acceptBatch(t, db, got, rejected(0, ""))
	ok, err = db.TakeBatch(ctx, bt.ID, got.LeaseUntil, got.LeaseUntil.Add(time.Hour))
	require.NoError(t, err)
	require.False(t, ok, "an accepted batch is never taken")
	after, err := db.Batch(ctx, c.ID, bt.ID)
	require.NoError(t, err)
	require.True(t, got.LeaseUntil.Equal(after.LeaseUntil))
}

func batchAccept(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c := NewClient(t, db)
	bt := newBatch(c, "b-1", t0)
	bt.Total = 70
	insertBatch(t, db, bt)
	now, later := newPayout(c, "i0", t0.Add(time.Minute)), newScheduled(c, "i2", t0.Add(24*time.Hour))
	insertPayouts(t, db, now)
	createScheduled(t, db, later)

	want := []pix.BatchItem{
		{Index: 0, ExternalID: "i0", TransactionID: now.ID, Accepted: pix.StatusPending},
		rejected(1, ""),
		{Index: 2, ExternalID: "i2", TransactionID: later.Transaction.ID, Accepted: pix.StatusScheduled},
		{Index: 3, ExternalID: "i3", Accepted: pix.StatusRejected, ErrorCode: pix.EInsufficientBalance, ErrorMessage: "Insufficient balance"},
	}
	for i := 4; i < bt.Total; i++ { // past one multi-row INSERT
		want = append(want, rejected(i, fmt.Sprintf("i%d", i)))
	}
	given := make([]pix.BatchItem, len(want)) // out of order: the store orders them
	for i, it := range want {
		given[len(want)-1-i] = it
	}
	bt = acceptBatch(t, db, bt, given...)
	got, err := db.Batch(ctx, c.ID, bt.ID)
	require.NoError(t, err)
	require.Equal(t, pix.BatchAccepted, got.State)
	require.Equal(t, 2, got.Accepted)
	require.Equal(t, 68, got.Rejected)

	items, err := db.BatchItems(ctx, bt.ID)
	require.NoError(t, err)
	require.Len(t, items, len(want))
	storedNow, err := db.Transaction(ctx, c.ID, now.ID)
	require.NoError(t, err)
	storedLater, err := db.Transaction(ctx, c.ID, later.Transaction.ID)
	require.NoError(t, err)
	for i := range want {
		want[i].BatchID = bt.ID
	}
	want[0].Payout, want[2].Payout = storedNow, storedLater
	require.Equal(t, want, items, "in index order, each with its payout as it now is")
	require.True(t, items[2].Payout.Scheduled())

	// The payout moves on: the items read it as it now is.
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.TransitionTransaction(ctx, now.ID, pix.StatusPending, pix.StatusPaid, t0.Add(time.Hour))
		return err
	}))
	items, err = db.BatchItems(ctx, bt.ID)
	require.NoError(t, err)
	require.Equal(t, pix.StatusPaid, items[0].Payout.Status)

	// Another request recording them again is refused, and adds nothing.
	again := bt
	again.State = pix.BatchAccepting
	require.ErrorIs(t, db.AcceptBatch(ctx, again, []pix.BatchItem{rejected(bt.Total, "extra")}), store.ErrConflict)
	items, err = db.BatchItems(ctx, bt.ID)
	require.NoError(t, err)
	require.Len(t, items, len(want))
	got, err = db.Batch(ctx, c.ID, bt.ID)
	require.NoError(t, err)
	require.Equal(t, 2, got.Accepted)
	require.Equal(t, 68, got.Rejected)

	empty, err := db.BatchItems(ctx, uuid.NewString())
	require.NoError(t, err)
	require.Empty(t, empty)
}

func batchTransactionsBy(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	a, b := NewClient(t, db), NewClient(t, db)
	var mine, theirs []store.ScheduledPayout
	var ids, exts []string
	for i := range 520 { // past a chunk of 500
		s := newScheduled(a, fmt.Sprintf("x%d", i), t0.Add(time.Hour))
		mine, ids, exts = append(mine, s), append(ids, s.Transaction.ID), append(exts, s.Transaction.ExternalID)
		if i < 10 {
			theirs = append(theirs, newScheduled(b, s.Transaction.ExternalID, t0.Add(time.Hour)))
		}
	}
	require.NoError(t, db.CreatePayoutRun(ctx, nil, mine))
	require.NoError(t, db.CreatePayoutRun(ctx, nil, theirs))

	byID, err := db.TransactionsByIDs(ctx, append(ids, uuid.NewString(), theirs[0].Transaction.ID))
	require.NoError(t, err)
	require.Len(t, byID, 521, "every id that exists, of any client")
	for _, s := range mine {
		require.Equal(t, s.Transaction.ExternalID, byID[s.Transaction.ID].ExternalID)
	}
	require.Equal(t, b.ID, byID[theirs[0].Transaction.ID].ClientID)

	byExt, err := db.TransactionsByExternalIDs(ctx, a.ID, append(exts, "missing"))
	require.NoError(t, err)
	require.Len(t, byExt, 520)
	for _, s := range mine {
		got := byExt[s.Transaction.ExternalID]
		require.Equal(t, s.Transaction.ID, got.ID, "keyed by external_id, only the client's")
	}
	byExt, err = db.TransactionsByExternalIDs(ctx, b.ID, exts)
	require.NoError(t, err)
	require.Len(t, byExt, 10)
	for _, s := range theirs {
		require.Equal(t, s.Transaction.ID, byExt[s.Transaction.ExternalID].ID)
	}

	none, err := db.TransactionsByIDs(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, none)
}

func batchComplete(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c := NewClient(t, db)
	p1, p2 := newPayout(c, "p1", t0.Add(time.Minute)), newPayout(c, "p2", t0.Add(time.Minute))
	insertPayouts(t, db, p1, p2)
	waiting := newScheduled(c, "s1", t0.Add(24*time.Hour))
	createScheduled(t, db, waiting)
	transition := func(id string, to pix.TxStatus) {
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			ok, err := tx.TransitionTransaction(ctx, id, pix.StatusPending, to, t0.Add(time.Hour))
			require.True(t, ok)
			return err
		}))
	}
	completable := func(limit int) []string {
		bs, err := db.CompletableBatches(ctx, limit)
		require.NoError(t, err)
		return batchIDs(bs)
	}

	open1 := newBatch(c, "open", t0.Add(2*time.Second)) // one item still PENDING
	allRejected := newBatch(c, "rejected", t0.Add(time.Second))
	scheduled := newBatch(c, "scheduled", t0) // its payout waits for its day
	accepting := newBatch(c, "accepting", t0)
	for _, b := range []pix.Batch{open1, allRejected, scheduled, accepting} {
		insertBatch(t, db, b)
	}
	open1 = acceptBatch(t, db, open1, pix.BatchItem{Index: 0, ExternalID: "p1", TransactionID: p1.ID, Accepted: pix.StatusPending},
		pix.BatchItem{Index: 1, ExternalID: "p2", TransactionID: p2.ID, Accepted: pix.StatusPending}, rejected(2, "x"))
	allRejected = acceptBatch(t, db, allRejected, rejected(0, "a"), rejected(1, "b"), rejected(2, "c"))
	acceptBatch(t, db, scheduled, pix.BatchItem{Index: 0, ExternalID: "s1", TransactionID: waiting.Transaction.ID, Accepted: pix.StatusScheduled},
		rejected(1, "d"), rejected(2, "e"))

	require.Equal(t, []string{allRejected.ID}, completable(10), "only the batch with nothing pending")
	transition(p1.ID, pix.StatusPaid)
	require.Equal(t, []string{allRejected.ID}, completable(10), "one item is still PENDING")
	transition(p2.ID, pix.StatusCancelled)
	require.Equal(t, []string{allRejected.ID, open1.ID}, completable(10), "oldest first, once every accepted item is final")
	require.Equal(t, []string{allRejected.ID}, completable(1), "up to the limit")

	complete := func(id string, at time.Time) bool {
		var ok bool
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			var err error
			ok, err = tx.CompleteBatch(ctx, id, at)
			return err
		}))
		return ok
	}
	done := t0.Add(3 * time.Hour)
	require.True(t, complete(open1.ID, done))
	require.False(t, complete(open1.ID, done.Add(time.Hour)), "another node completing it too")
	got, err := db.Batch(ctx, c.ID, open1.ID)
	require.NoError(t, err)
	require.Equal(t, pix.BatchCompleted, got.State)
	require.True(t, done.Equal(got.CompletedAt), "completed at the first completion")
	require.Equal(t, []string{allRejected.ID}, completable(10), "a completed batch is not listed again")
	require.False(t, complete(accepting.ID, done), "an accepting batch is not completed")
	acc, err := db.Batch(ctx, c.ID, accepting.ID)
	require.NoError(t, err)
	require.Equal(t, pix.BatchAccepting, acc.State)
	require.True(t, acc.CompletedAt.IsZero())
}

func batchHistory(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	a, b := NewClient(t, db), NewClient(t, db)
	accepted := map[string]bool{}
	for i := range 12 {
		bt := newBatch(a, fmt.Sprintf("b%d", i), t0.Add(time.Duration(i/3)*time.Second)) // three a second
		insertBatch(t, db, bt)
		if i%4 == 0 {
			acceptBatch(t, db, bt, rejected(0, ""))
			accepted[bt.ID] = true
		}
		insertBatch(t, db, newBatch(b, fmt.Sprintf("b%d", i), t0))
	}
	var seen []pix.Batch
	cursor := ""
	for page := 0; ; page++ {
		rows, next, err := db.BatchHistory(ctx, store.BatchFilter{ClientID: a.ID, Cursor: cursor, Limit: 5})
		require.NoError(t, err)
		require.LessOrEqual(t, len(rows), 5)
		seen = append(seen, rows...)
		if page == 0 {
			// A batch arriving between pages does not shift them.
			insertBatch(t, db, newBatch(a, "late", t0.Add(time.Hour)))
		}
		if next == "" {
			break
		}
		cursor = next
	}
	require.Len(t, seen, 12)
	uniq := map[string]bool{}
	for i, bt := range seen {
		require.Equal(t, a.ID, bt.ClientID)
		uniq[bt.ID] = true
		if i > 0 {
			prev := seen[i-1]
			require.True(t, prev.CreatedAt.After(bt.CreatedAt) || (prev.CreatedAt.Equal(bt.CreatedAt) && prev.ID > bt.ID),
				"newest first, then by id")
		}
	}
	require.Len(t, uniq, 12, "no repeats")

	rows, _, err := db.BatchHistory(ctx, store.BatchFilter{ClientID: a.ID, State: pix.BatchAccepted, Limit: 100})
	require.NoError(t, err)
	got := map[string]bool{}
	for _, bt := range rows {
		got[bt.ID] = true
	}
	require.Equal(t, accepted, got, "only the client's accepted batches")
	rows, _, err = db.BatchHistory(ctx, store.BatchFilter{State: pix.BatchAccepting, Limit: 100})
	require.NoError(t, err)
	require.Len(t, rows, 12-3+1+12, "every client's accepting batches")
	rows, next, err := db.BatchHistory(ctx, store.BatchFilter{Limit: 100})
	require.NoError(t, err)
	require.Len(t, rows, 25)
	require.Empty(t, next)
	_, _, err = db.BatchHistory(ctx, store.BatchFilter{ClientID: a.ID, Cursor: "!!", Limit: 5})
	require.ErrorIs(t, err, store.ErrBadCursor)
}
