package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseDisputes runs the storage behaviours of MED disputes
// (internal/store/disputes.go): what is written reads back, the PSP's ids
// are recorded once, a defense is kept once, closing records the outcome,
// and the reads the crediting, the API and the gauge make.
func exerciseDisputes(t *testing.T, open Opener) {
	t.Run("A dispute reads back as written, only by its client", func(t *testing.T) { disputeReadBack(t, open) })
	t.Run("The PSP's infraction id is recorded once per charge", func(t *testing.T) { disputeInfractionOnce(t, open) })
	t.Run("The PSP's devolução id is recorded once", func(t *testing.T) { disputeReturnOnce(t, open) })
	t.Run("A defense is recorded once, only on an OPEN dispute", func(t *testing.T) { disputeDefenseOnce(t, open) })
	t.Run("Closing records the outcome once", func(t *testing.T) { disputeCloseOnce(t, open) })
	t.Run("Unfilled open disputes are read oldest first, with the client's holds", func(t *testing.T) { disputeUnfilled(t, open) })
	t.Run("A client's disputes are listed newest first, filtered and paged by key", func(t *testing.T) { disputeHistory(t, open) })
	t.Run("OpenDisputes counts every client's OPEN disputes", func(t *testing.T) { disputeOpenCount(t, open) })
}

func disputeReadBack(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c, other := NewClient(t, db), NewClient(t, db)
	charge := insertCharge(t, db, c, "dr-1")
	d := newDispute(c, charge, 1000, t0.Add(123456*time.Microsecond))
	d.Blocked, d.Reason, d.PSPID = 400, pix.ReasonOperationalFailure, "inf-1"
	insertDispute(t, db, d)

	got, err := db.Dispute(ctx, c.ID, d.ID)
	require.NoError(t, err)
	want := d
	want.OpenedAt = d.OpenedAt.Truncate(time.Millisecond) // stored in milliseconds
	require.Equal(t, want, got)
	_, err = db.Dispute(ctx, other.ID, d.ID)
	require.ErrorIs(t, err, store.ErrNotFound, "another client's dispute is not found")
	_, err = db.Dispute(ctx, c.ID, uuid.NewString())
	require.ErrorIs(t, err, store.ErrNotFound)

	byID, err := db.DisputeByID(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, want, byID)
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		locked, err := tx.DisputeForUpdate(ctx, d.ID)
		require.Equal(t, want, locked)
		return err
	}))

	second := newDispute(c, charge, 500, t0.Add(time.Second))
	insertDispute(t, db, second)
	insertDispute(t, db, newDispute(c, insertCharge(t, db, c, "dr-2"), 100, t0))
	list, err := db.TransactionDisputes(ctx, charge.ID)
	require.NoError(t, err)
	require.Equal(t, []string{d.ID, second.ID}, disputeIDs(list), "the charge's disputes, oldest first")
}

func disputeInfractionOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c := NewClient(t, db)
	a, b := insertCharge(t, db, c, "dp-a"), insertCharge(t, db, c, "dp-b")
	first := newDispute(c, a, 1000, t0)
	first.PSPID = "inf-1"
	insertDispute(t, db, first)

	got, err := db.DisputeByPSPID(ctx, a.ID, "inf-1")
	require.NoError(t, err)
	require.Equal(t, first.ID, got.ID)
	_, err = db.DisputeByPSPID(ctx, b.ID, "inf-1")
	require.ErrorIs(t, err, store.ErrNotFound, "another charge's infraction")

	again := newDispute(c, a, 1000, t0.Add(time.Second))
	again.PSPID = "inf-1"
	require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error { return tx.InsertDispute(ctx, again) }), store.ErrConflict,
		"a second dispute of the same infraction is refused")
	_, err = db.DisputeByID(ctx, again.ID)
	require.ErrorIs(t, err, store.ErrNotFound)

	// Without an infraction id (the sandbox's), any number.
	insertDispute(t, db, newDispute(c, a, 100, t0.Add(2*time.Second)))
	insertDispute(t, db, newDispute(c, a, 100, t0.Add(3*time.Second)))
	_, err = db.DisputeByPSPID(ctx, a.ID, "")
	require.ErrorIs(t, err, store.ErrNotFound, "no id finds nothing")
}

func disputeReturnOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c := NewClient(t, db)
	a, b := insertCharge(t, db, c, "dq-a"), insertCharge(t, db, c, "dq-b")
	returned := newDispute(c, a, 1000, t0)
	insertDispute(t, db, returned)
	closeDispute(t, db, returned, pix.OutcomeReturned, 1000, "D-1", t0.Add(time.Hour))

	got, err := db.DisputeByReturnID(ctx, "D-1")
	require.NoError(t, err)
	require.Equal(t, returned.ID, got.ID)
	_, err = db.DisputeByReturnID(ctx, "D-2")
	require.ErrorIs(t, err, store.ErrNotFound)

	// Inserted CLOSED with the same return id (MedReturned's fresh dispute), or closed with it.
	fresh := newDispute(c, b, 500, t0.Add(time.Minute))
	fresh.ReturnID = "D-1"
	require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error { return tx.InsertDispute(ctx, fresh) }), store.ErrConflict)
	pending := newDispute(c, b, 500, t0.Add(time.Minute))
	insertDispute(t, db, pending)
	pending.Status, pending.Outcome, pending.ReturnedAmount, pending.ReturnID = pix.DisputeClosed, pix.OutcomeReturned, 500, "D-1"
	require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error { return tx.CloseDispute(ctx, pending) }), store.ErrConflict)
	still, err := db.DisputeByID(ctx, pending.ID)
	require.NoError(t, err)
	require.Equal(t, pix.DisputeOpen, still.Status, "the refused close changed nothing")

	// Closed without a return id (released): any number.
	closeDispute(t, db, still, pix.OutcomeReleased, 0, "", t0.Add(2*time.Hour))
	_, err = db.DisputeByReturnID(ctx, "")
	require.ErrorIs(t, err, store.ErrNotFound, "no id finds nothing")
}

func disputeDefenseOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c := NewClient(t, db)
	charge := insertCharge(t, db, c, "dd-1")
	d, closed := newDispute(c, charge, 1000, t0), newDispute(c, charge, 500, t0)
	insertDispute(t, db, d)
	insertDispute(t, db, closed)
	closeDispute(t, db, closed, pix.OutcomeReleased, 0, "", t0.Add(time.Minute))
	defend := func(id string, def pix.DisputeDefense) bool {
		t.Helper()
		var ok bool
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) (err error) {
			ok, err = tx.SetDisputeDefense(ctx, id, def)
			return err
		}))
		return ok
	}
	first := pix.DisputeDefense{Accept: false, Justification: "Pedido 1001 entregue ao titular.", At: t0.Add(time.Hour)}
	require.True(t, defend(d.ID, first))
	require.False(t, defend(d.ID, pix.DisputeDefense{Accept: true, Justification: "outra", At: t0.Add(2 * time.Hour)}),
		"a second defense is refused")
	got, err := db.DisputeByID(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, &first, got.Defense, "the first defense is kept")

	require.False(t, defend(closed.ID, first), "a CLOSED dispute cannot be defended")
	got, err = db.DisputeByID(ctx, closed.ID)
	require.NoError(t, err)
	require.Nil(t, got.Defense)
	require.False(t, defend(uuid.NewString(), first), "an unknown dispute")
}

func disputeCloseOnce(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c := NewClient(t, db)
	charge := insertCharge(t, db, c, "dc-1")
	d := newDispute(c, charge, 1000, t0)
	d.Blocked = 1000
	insertDispute(t, db, d)
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.SetDisputeBlocked(ctx, d.ID, 600) }))
	got, err := db.DisputeByID(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, pix.Amount(600), got.Blocked)

	at := t0.Add(time.Hour)
	closeDispute(t, db, got, pix.OutcomeReturned, 700, "D-9", at)
	got, err = db.DisputeByID(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, pix.DisputeClosed, got.Status)
	require.Equal(t, pix.OutcomeReturned, got.Outcome)
	require.Equal(t, pix.Amount(700), got.ReturnedAmount)
	require.Zero(t, got.Blocked, "a closed dispute blocks nothing")
	require.Equal(t, "D-9", got.ReturnID)
	require.Equal(t, &at, got.ClosedAt)

	again := got
	again.Outcome, again.ReturnedAmount = pix.OutcomeReleased, 0
	require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error { return tx.CloseDispute(ctx, again) }), store.ErrNotFound,
		"a CLOSED dispute is not closed again")
	after, err := db.DisputeByID(ctx, d.ID)
	require.NoError(t, err)
	require.Equal(t, got, after)
}

func disputeUnfilled(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c, other := NewClient(t, db), NewClient(t, db)
	charge, theirs := insertCharge(t, db, c, "du-1"), insertCharge(t, db, other, "du-2")
	late := newDispute(c, charge, 1000, t0.Add(2*time.Second))
	late.Blocked = 100
	x, y := newDispute(c, charge, 300, t0.Add(time.Second)), newDispute(c, charge, 200, t0.Add(time.Second)) // one millisecond: the id orders them
	if x.ID > y.ID {
		x, y = y, x
	}
	filled := newDispute(c, charge, 500, t0)
	filled.Blocked = 500
	closed := newDispute(c, charge, 400, t0)
	for _, d := range []pix.Dispute{late, x, y, filled, closed, newDispute(other, theirs, 900, t0)} {
		insertDispute(t, db, d)
	}
	closeDispute(t, db, closed, pix.OutcomeReleased, 0, "", t0.Add(time.Minute))
	require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
		got, err := tx.OpenUnfilledDisputes(ctx, c.ID)
		require.Equal(t, []string{x.ID, y.ID, late.ID}, disputeIDs(got), "open, short of their amount, oldest first, only the client's")
		if err != nil {
			return err
		}
		owed, unfilled, err := tx.ClientHolds(ctx, c.ID)
		require.Zero(t, owed, "no debt account yet")
		require.Equal(t, pix.Amount(900+300+200), unfilled)
		if err != nil {
			return err
		}
		if err := tx.OpenMEDAccounts(ctx, c.ID); err != nil {
			return err
		}
		if err := tx.OpenMEDAccounts(ctx, c.ID); err != nil { // twice: once
			return err
		}
		if err := tx.Post(ctx, uuid.NewString(), c.ID, charge.ID, mustReturn(t, 250), t0); err != nil {
			return err
		}
		owed, _, err = tx.ClientHolds(ctx, c.ID)
		require.Equal(t, pix.Amount(250), owed, "the debt, as a positive amount")
		return err
	}))
	b, err := db.Balances(ctx, c.ID)
	require.NoError(t, err)
	require.Equal(t, pix.Amount(-250), b[ledger.Debt])
	require.Zero(t, b[ledger.Blocked])
}

func disputeHistory(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	c, other := NewClient(t, db), NewClient(t, db)
	a, b, o := insertCharge(t, db, c, "dh-a"), insertCharge(t, db, c, "dh-b"), insertCharge(t, db, other, "dh-o")
	mine := []pix.Dispute{ // oldest first
		newDispute(c, a, 100, t0.Add(time.Second)), newDispute(c, b, 100, t0.Add(2*time.Second)),
		newDispute(c, a, 100, t0.Add(3*time.Second)), newDispute(c, a, 100, t0.Add(3*time.Second)),
	}
	if mine[2].ID > mine[3].ID { // two in one millisecond: the id orders them
		mine[2], mine[3] = mine[3], mine[2]
	}
	for _, d := range append(mine, newDispute(other, o, 100, t0.Add(4*time.Second))) {
		insertDispute(t, db, d)
	}
	closeDispute(t, db, mine[1], pix.OutcomeReleased, 0, "", t0.Add(time.Minute))
	closeDispute(t, db, mine[2], pix.OutcomeReturned, 100, "D-h", t0.Add(time.Minute))

	page := func(f store.DisputeFilter) ([]string, string) {
		t.Helper()
		f.ClientID = c.ID
		rows, next, err := db.DisputeHistory(ctx, f)
		require.NoError(t, err)
		return disputeIDs(rows), next
	}
	all, next := page(store.DisputeFilter{Limit: 10})
	require.Empty(t, next)
	require.Equal(t, []string{mine[3].ID, mine[2].ID, mine[1].ID, mine[0].ID}, all, "newest first, never another client's")

	var paged []string
	cursor := ""
	for range 3 {
		got, n := page(store.DisputeFilter{Limit: 2, Cursor: cursor})
		paged, cursor = append(paged, got...), n
		if cursor == "" {
			break
		}
	}
	require.Empty(t, cursor)
	require.Equal(t, all, paged, "pages of two neither repeat nor skip")

	got, _ := page(store.DisputeFilter{Limit: 10, Status: pix.DisputeOpen})
	require.Equal(t, []string{mine[3].ID, mine[0].ID}, got)
	got, _ = page(store.DisputeFilter{Limit: 10, Status: pix.DisputeClosed})
	require.Equal(t, []string{mine[2].ID, mine[1].ID}, got)
	got, _ = page(store.DisputeFilter{Limit: 10, PaymentID: a.ID})
	require.Equal(t, []string{mine[3].ID, mine[2].ID, mine[0].ID}, got)
	got, _ = page(store.DisputeFilter{Limit: 10, PaymentID: a.ID, Status: pix.DisputeClosed})
	require.Equal(t, []string{mine[2].ID}, got)
	got, _ = page(store.DisputeFilter{Limit: 10, PaymentID: o.ID})
	require.Empty(t, got, "another client's charge lists nothing")

	_, _, err := db.DisputeHistory(ctx, store.DisputeFilter{ClientID: c.ID, Limit: 10, Cursor: "not-a-cursor"})
	require.ErrorIs(t, err, store.ErrBadCursor)
	_, _, err = db.DisputeHistory(ctx, store.DisputeFilter{Limit: 10})
	require.Error(t, err, "a list never shows every client's rows")
}

func disputeOpenCount(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Parallel()
	db := open(t)
	n, err := db.OpenDisputes(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	c, other := NewClient(t, db), NewClient(t, db)
	charge, theirs := insertCharge(t, db, c, "dg-1"), insertCharge(t, db, other, "dg-2")
	d := newDispute(c, charge, 100, t0)
	for _, x := range []pix.Dispute{d, newDispute(c, charge, 100, t0), newDispute(other, theirs, 100, t0)} {
		insertDispute(t, db, x)
	}
	n, err = db.OpenDisputes(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	closeDispute(t, db, d, pix.OutcomeReleased, 0, "", t0.Add(time.Minute))
	n, err = db.OpenDisputes(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n, "a closed dispute is not counted")
}

// insertCharge inserts a PAID charge of 10,00 of client c.
func insertCharge(t *testing.T, db *store.DB, c pix.Client, ext string) pix.Transaction {
	t.Helper()
	ch := newTx(c, pix.TypeCashin, ext, 1000, t0)
	ch.Status, ch.PaidAmount = pix.StatusPaid, 1000
	require.NoError(t, db.Write(context.Background(), func(tx *store.Tx) error {
		_, err := tx.InsertTransaction(context.Background(), ch)
		return err
	}))
	return ch
}

// newDispute is an OPEN dispute of amount of charge ch of client c, opened
// at, due three days later, blocking nothing yet.
func newDispute(c pix.Client, ch pix.Transaction, amount pix.Amount, at time.Time) pix.Dispute {
	return pix.Dispute{ID: uuid.NewString(), ClientID: c.ID, PaymentID: ch.ID, Amount: amount, Reason: pix.ReasonFraud,
		Status: pix.DisputeOpen, RespondBy: at.Add(72 * time.Hour).Truncate(time.Millisecond), OpenedAt: at}
}

func insertDispute(t *testing.T, db *store.DB, d pix.Dispute) {
	t.Helper()
	require.NoError(t, db.Write(context.Background(), func(tx *store.Tx) error { return tx.InsertDispute(context.Background(), d) }))
}

// closeDispute closes d with outcome, returned and returnID at at, its block
// gone, as cashin does.
func closeDispute(t *testing.T, db *store.DB, d pix.Dispute, outcome pix.Outcome, returned pix.Amount, returnID string, at time.Time) {
	t.Helper()
	d.Status, d.Outcome, d.ReturnedAmount, d.ReturnID, d.Blocked, d.ClosedAt = pix.DisputeClosed, outcome, returned, returnID, 0, &at
	require.NoError(t, db.Write(context.Background(), func(tx *store.Tx) error { return tx.CloseDispute(context.Background(), d) }))
}

// mustReturn is a MED return of amount that the merchant's balance did not
// cover at all: all of it becomes debt.
func mustReturn(t *testing.T, amount pix.Amount) ledger.Posting {
	t.Helper()
	p, err := ledger.MedReturned(amount, 0, 0)
	require.NoError(t, err)
	return p
}

func disputeIDs(ds []pix.Dispute) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.ID)
	}
	return out
}
