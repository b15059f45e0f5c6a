package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// ExerciseAdmin runs the storage behaviours of the administration panel:
// users, sessions, login attempts, fee changes and the overview queries.
func ExerciseAdmin(t *testing.T, open Opener) {
	exerciseUsers(t, open)
	exerciseSessions(t, open)
	exerciseDisabledClientSessions(t, open)
	exerciseLoginAttempts(t, open)
	exerciseFeeRules(t, open)
	exerciseDayFlows(t, open)
	exerciseOverview(t, open)
}

// exerciseUsers checks that users are unique by e-mail, and the schema ties
// merchant users, and only them, to a client.
func exerciseUsers(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Users are unique by e-mail and merchant users need a client", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		op := pix.User{ID: uuid.NewString(), Email: "ops@example.com", PasswordHash: "h1", Role: pix.RoleOperator, CreatedAt: t0}
		m := pix.User{ID: uuid.NewString(), Email: "shop@example.com", PasswordHash: "h2", Role: pix.RoleMerchant, ClientID: c.ID, CreatedAt: t0.Add(time.Second)}
		for _, u := range []pix.User{op, m} {
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.InsertUser(ctx, u) }))
		}
		got, err := db.UserByEmail(ctx, "shop@example.com")
		require.NoError(t, err)
		require.Equal(t, m, got)
		got, err = db.User(ctx, op.ID)
		require.NoError(t, err)
		require.Equal(t, op, got)
		_, err = db.UserByEmail(ctx, "nobody@example.com")
		require.ErrorIs(t, err, store.ErrNotFound)
		n, err := db.CountUsers(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		all, err := db.Users(ctx)
		require.NoError(t, err)
		require.Equal(t, []pix.User{op, m}, all)

		dup := op
		dup.ID = uuid.NewString()
		err = db.Write(ctx, func(tx *store.Tx) error { return tx.InsertUser(ctx, dup) })
		require.ErrorIs(t, err, store.ErrConflict)
		// The schema itself refuses a merchant without a client, an operator
		// with one, and an unknown role.
		for _, bad := range []pix.User{
			{ID: uuid.NewString(), Email: "a@example.com", PasswordHash: "h", Role: pix.RoleMerchant, CreatedAt: t0},
			{ID: uuid.NewString(), Email: "b@example.com", PasswordHash: "h", Role: pix.RoleOperator, ClientID: c.ID, CreatedAt: t0},
			{ID: uuid.NewString(), Email: "c@example.com", PasswordHash: "h", Role: "root", CreatedAt: t0},
		} {
			err := db.Write(ctx, func(tx *store.Tx) error { return tx.InsertUser(ctx, bad) })
			require.Error(t, err, "%+v", bad)
		}
	})
}

// exerciseSessions checks that a session is read with its user until it
// expires, and can be deleted.
func exerciseSessions(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Sessions expire and can be deleted", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		u := pix.User{ID: uuid.NewString(), Email: "ops@example.com", PasswordHash: "h", Role: pix.RoleOperator, CreatedAt: t0}
		s := pix.Session{ID: "sess1", UserID: u.ID, CSRFToken: "csrf1", CreatedAt: t0, ExpiresAt: t0.Add(12 * time.Hour)}
		old := pix.Session{ID: "sess0", UserID: u.ID, CSRFToken: "csrf0", CreatedAt: t0.Add(-13 * time.Hour), ExpiresAt: t0.Add(-time.Hour)}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if err := tx.InsertUser(ctx, u); err != nil {
				return err
			}
			if err := tx.InsertSession(ctx, s); err != nil {
				return err
			}
			return tx.InsertSession(ctx, old)
		}))
		gs, gu, err := db.SessionUser(ctx, "sess1", t0.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, s, gs)
		require.Equal(t, u, gu)
		_, _, err = db.SessionUser(ctx, "sess1", t0.Add(12*time.Hour))
		require.ErrorIs(t, err, store.ErrNotFound, "a session is over at expires_at")
		_, _, err = db.SessionUser(ctx, "sess0", t0)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, _, err = db.SessionUser(ctx, "nope", t0)
		require.ErrorIs(t, err, store.ErrNotFound)

		var removed int64
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			var err error
			removed, err = tx.DeleteExpiredSessions(ctx, t0)
			return err
		}))
		require.EqualValues(t, 1, removed)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.DeleteSession(ctx, "sess1") }))
		_, _, err = db.SessionUser(ctx, "sess1", t0)
		require.ErrorIs(t, err, store.ErrNotFound)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.DeleteSession(ctx, "sess1") }), "deleting twice is fine")
	})
}

// exerciseDisabledClientSessions checks that disabling a client ends its
// merchant users' sessions, not the operators'.
func exerciseDisabledClientSessions(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("A disabled client's merchant users have no session", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		op := pix.User{ID: uuid.NewString(), Email: "ops@example.com", PasswordHash: "h", Role: pix.RoleOperator, CreatedAt: t0}
		m := pix.User{ID: uuid.NewString(), Email: "shop@example.com", PasswordHash: "h", Role: pix.RoleMerchant, ClientID: c.ID, CreatedAt: t0}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for i, u := range []pix.User{op, m} {
				if err := tx.InsertUser(ctx, u); err != nil {
					return err
				}
				s := pix.Session{ID: fmt.Sprint("sess", i), UserID: u.ID, CSRFToken: "c", CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
				if err := tx.InsertSession(ctx, s); err != nil {
					return err
				}
			}
			return nil
		}))
		_, got, err := db.SessionUser(ctx, "sess1", t0)
		require.NoError(t, err)
		require.Equal(t, m, got)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.SetClientStatus(ctx, c.ID, pix.ClientDisabled) }))
		_, _, err = db.SessionUser(ctx, "sess1", t0)
		require.ErrorIs(t, err, store.ErrNotFound, "the merchant user's session ends with its client")
		_, got, err = db.SessionUser(ctx, "sess0", t0)
		require.NoError(t, err, "operators are unaffected")
		require.Equal(t, op, got)
	})
}

// exerciseLoginAttempts checks that login attempts are counted per e-mail
// and address and per address within a window, cleared per pair and pruned.
func exerciseLoginAttempts(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Login attempts are counted per pair and per address within a window", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for i := range 3 {
				if err := tx.RecordLoginAttempt(ctx, "a@example.com", "10.0.0.1", t0.Add(time.Duration(i)*time.Minute)); err != nil {
					return err
				}
			}
			if err := tx.RecordLoginAttempt(ctx, "b@example.com", "10.0.0.1", t0); err != nil {
				return err
			}
			return tx.RecordLoginAttempt(ctx, "a@example.com", "10.0.0.2", t0)
		}))
		pair, ip, err := db.LoginAttempts(ctx, "a@example.com", "10.0.0.1", t0)
		require.NoError(t, err)
		require.Equal(t, 3, pair)
		require.Equal(t, 4, ip)
		pair, ip, err = db.LoginAttempts(ctx, "a@example.com", "10.0.0.1", t0.Add(90*time.Second))
		require.NoError(t, err)
		require.Equal(t, 1, pair, "older attempts leave the window")
		require.Equal(t, 1, ip)

		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.ClearLoginAttempts(ctx, "a@example.com", "10.0.0.1") }))
		pair, ip, err = db.LoginAttempts(ctx, "a@example.com", "10.0.0.1", t0)
		require.NoError(t, err)
		require.Zero(t, pair)
		require.Equal(t, 1, ip, "other e-mails from the address stay counted")
		pair, _, err = db.LoginAttempts(ctx, "a@example.com", "10.0.0.2", t0)
		require.NoError(t, err)
		require.Equal(t, 1, pair, "other addresses stay counted")

		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.PruneLoginAttempts(ctx, t0.Add(time.Second)) }))
		_, ip, err = db.LoginAttempts(ctx, "x", "10.0.0.1", time.Time{})
		require.NoError(t, err)
		require.Zero(t, ip)
	})
}

// exerciseFeeRules checks that a client's fee rules are changed in place.
func exerciseFeeRules(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Fee rules can be changed", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		in, out := pix.FeeRule{PercentBP: 99, Fixed: 5}, pix.FeeRule{PercentBP: 0, Fixed: 150}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.SetClientFees(ctx, c.ID, in, out) }))
		got, err := db.Client(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, in, got.CashinFee)
		require.Equal(t, out, got.PayoutFee)
		err = db.Write(ctx, func(tx *store.Tx) error { return tx.SetClientFees(ctx, "nope", in, out) })
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// exerciseDayFlows checks that a day's money adds up to the change in
// balance (exerciseFlows).
func exerciseDayFlows(t *testing.T, open Opener) {
	t.Run("A day's money adds up to the change in balance", func(t *testing.T) {
		t.Parallel()
		exerciseFlows(t, open)
	})
	t.Run("A day's money adds up with MED's blocks, returns and debt", func(t *testing.T) {
		t.Parallel()
		exerciseMEDFlows(t, open)
	})
	t.Run("A day's money adds up with transfers and splits between a parent and its sub-account", func(t *testing.T) {
		t.Parallel()
		exerciseTransferFlows(t, open)
	})
}

// exerciseOverview checks the panel's overview queries (activity, flows,
// total balances and failing events).
func exerciseOverview(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Activity, total balances and failing events", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		a, b := NewClient(t, db), NewClient(t, db)
		day := t0.Truncate(24 * time.Hour)
		paid := newTx(a, pix.TypeCashin, "p1", 1000, day.Add(time.Hour))
		pending := newTx(a, pix.TypeCashin, "p2", 500, day.Add(2*time.Hour))
		yesterday := newTx(a, pix.TypeCashin, "p3", 700, day.Add(-time.Hour))
		payout := newTx(b, pix.TypeCashout, "o1", 300, day.Add(3*time.Hour))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for _, x := range []pix.Transaction{paid, pending, yesterday, payout} {
				if _, err := tx.InsertTransaction(ctx, x); err != nil {
					return err
				}
			}
			if _, err := tx.TransitionTransaction(ctx, paid.ID, "PENDING", "PAID", day.Add(90*time.Minute)); err != nil {
				return err
			}
			// Paid today although created yesterday: in today's volume.
			if _, err := tx.TransitionTransaction(ctx, yesterday.ID, "PENDING", "PAID", day.Add(4*time.Hour)); err != nil {
				return err
			}
			if _, err := tx.TransitionTransaction(ctx, payout.ID, "PENDING", "PAID", day.Add(5*time.Hour)); err != nil {
				return err
			}
			return tx.Post(ctx, uuid.NewString(), a.ID, paid.ID, ledger.CashinPaid(1000, 0), day.Add(90*time.Minute))
		}))
		end := day.Add(24 * time.Hour)
		act, err := db.Activity(ctx, a.ID, day, end)
		require.NoError(t, err)
		require.Equal(t, map[string]map[string]int64{string(pix.TypeCashin): {"PAID": 1, "PENDING": 1}}, act.Counts)
		// Money is counted from the ledger: only the posted charge is in.
		flows, err := db.Flows(ctx, a.ID, day, end)
		require.NoError(t, err)
		require.Equal(t, pix.Flows{In: 1000, InCount: 1, Closing: 1000}, flows)

		all, err := db.Activity(ctx, "", day, end)
		require.NoError(t, err)
		require.Equal(t, map[string]map[string]int64{string(pix.TypeCashin): {"PAID": 1, "PENDING": 1}, string(pix.TypeCashout): {"PAID": 1}}, all.Counts)

		tot, err := db.TotalBalances(ctx)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(1000), tot[ledger.Available])
		require.Zero(t, tot[ledger.Pending])

		// Events: delivered, failed for good, pending after a failed attempt,
		// and pending never tried.
		mk := func(id string, c pix.Client, at time.Time) pix.Event {
			return pix.Event{ID: id, ClientID: c.ID, TransactionID: paid.ID, Type: "pix.cashin.paid", URL: "https://x", Payload: "{}", CreatedAt: at}
		}
		events := []pix.Event{mk("evt_ok", a, t0), mk("evt_failed", a, t0.Add(time.Second)), mk("evt_retrying", b, t0.Add(2*time.Second)), mk("evt_new", a, t0.Add(3*time.Second))}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for _, e := range events {
				if err := tx.InsertEvent(ctx, e); err != nil {
					return err
				}
			}
			return nil
		}))
		finish := func(id, status string) {
			now := t0.Add(time.Minute)
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				claimed, err := tx.ClaimEvents(ctx, "w", now, now.Add(time.Minute), 10)
				if err != nil {
					return err
				}
				for _, e := range claimed {
					if e.ID != id {
						if err := tx.ReleaseEvent(ctx, "w", e.ID); err != nil {
							return err
						}
						continue
					}
					code := 500
					if status == "delivered" {
						code = 200
					}
					if _, err := tx.FinishAttempt(ctx, "w", pix.Attempt{ID: uuid.NewString(), EventID: id, At: now, StatusCode: code}, status, 1, now.Add(time.Hour)); err != nil {
						return err
					}
				}
				return nil
			}))
		}
		finish("evt_ok", "delivered")
		finish("evt_failed", "failed")
		finish("evt_retrying", "pending")
		got, err := db.FailingEvents(ctx, "", 10)
		require.NoError(t, err)
		require.Equal(t, []string{"evt_retrying", "evt_failed"}, eventIDs(got))
		got, err = db.FailingEvents(ctx, a.ID, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"evt_failed"}, eventIDs(got))
		got, err = db.FailingEvents(ctx, "", 1)
		require.NoError(t, err)
		require.Equal(t, []string{"evt_retrying"}, eventIDs(got))
	})
}

// exerciseFlows checks that a day's money adds up: one client's day with a
// charge paid (and its fee), payouts completed, failed, reserved and still
// pending, paid and returned the same day, paid the day before and returned
// today, refunds completed and pending; a second client; and postings on
// the boundaries and after the day.
func exerciseFlows(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	a, b := NewClient(t, db), NewClient(t, db)
	day := t0.Truncate(24 * time.Hour)
	end := day.Add(24 * time.Hour)
	yesterday, noon := day.Add(-12*time.Hour), day.Add(12*time.Hour)
	post := func(c pix.Client, txID string, p ledger.Posting, at time.Time) {
		t.Helper()
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.Post(ctx, uuid.NewString(), c.ID, txID, p, at) }))
	}
	total := func(c pix.Client) pix.Amount {
		t.Helper()
		bal, err := db.Balances(ctx, c.ID)
		require.NoError(t, err)
		return bal[ledger.Available] + bal[ledger.Pending]
	}
	id := func() string { return uuid.NewString() }

	// Yesterday: a charge of 100,00 paid (fee 1,00); payout p0 of 10,00
	// (tax 0,50) paid; payout p1 of 5,00 reserved, settled today.
	post(a, id(), ledger.CashinPaid(10000, 100), yesterday)
	p0, p1 := id(), id()
	post(a, p0, ledger.PayoutReserved(1000, 50), yesterday)
	post(a, p0, ledger.PayoutCompleted(1000, 50), yesterday)
	post(a, p1, ledger.PayoutReserved(500, 50), yesterday)
	opening := total(a)
	require.Equal(t, pix.Amount(8850), opening)

	// Today.
	charge := id()
	post(a, charge, ledger.CashinPaid(5000, 150), noon)
	post(a, p1, ledger.PayoutCompleted(500, 50), day) // at the first instant of the day: in it
	p2, p3, p4, p5 := id(), id(), id(), id()
	post(a, p2, ledger.PayoutReserved(2000, 50), noon)
	post(a, p2, ledger.PayoutCompleted(2000, 50), noon.Add(time.Minute))
	post(a, p3, ledger.PayoutReserved(300, 50), noon) // failed: never leaves
	post(a, p3, ledger.PayoutFailed(300, 50), noon.Add(time.Minute))
	post(a, p4, ledger.PayoutReserved(700, 50), noon) // paid and returned today: not money out
	post(a, p4, ledger.PayoutCompleted(700, 50), noon.Add(time.Minute))
	post(a, p4, ledger.PayoutReversed(700), noon.Add(time.Hour))
	post(a, p0, ledger.PayoutReversed(1000), noon.Add(time.Hour)) // paid yesterday, returned today
	r1, r2 := id(), id()
	post(a, r1, ledger.RefundReserved(1200), noon.Add(2*time.Hour))
	post(a, r1, ledger.RefundCompleted(1200), noon.Add(3*time.Hour))
	post(a, r2, ledger.RefundReserved(400), noon.Add(2*time.Hour)) // still pending: not out yet
	post(a, p5, ledger.PayoutReserved(200, 50), end.Add(-time.Millisecond))
	post(b, id(), ledger.CashinPaid(777, 7), noon)
	closing := total(a)

	// Tomorrow, from the first instant: not in the day.
	post(a, id(), ledger.CashinPaid(999, 9), end)
	post(a, p5, ledger.PayoutCompleted(200, 50), end.Add(time.Hour))

	want := pix.Flows{Opening: opening, Closing: closing,
		In: 5000, InCount: 1,
		Fees: 150 + 50 + 50 + 50, // the charge's fee; p1's, p2's and p4's tax (kept although returned)
		Out:  500 + 2000, OutCount: 2,
		Returns: 1000, ReturnCount: 1,
		Refunds: 1200, RefundCount: 1}
	got, err := db.Flows(ctx, a.ID, day, end)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, got.Closing-got.Opening, got.In-got.Fees-got.Out+got.Returns-got.Refunds,
		"opening + in − fees − out + returns − refunds = closing")
	require.Equal(t, pix.Amount(10850), got.Closing)

	// Every client: b's charge adds in.
	all, err := db.Flows(ctx, "", day, end)
	require.NoError(t, err)
	want.In, want.InCount, want.Fees = want.In+777, want.InCount+1, want.Fees+7
	want.Closing += 770
	require.Equal(t, want, all)

	// Yesterday alone: p0 was paid out then, whatever happened since.
	prev, err := db.Flows(ctx, a.ID, day.Add(-24*time.Hour), day)
	require.NoError(t, err)
	require.Equal(t, pix.Flows{Opening: 0, Closing: opening, In: 10000, InCount: 1, Fees: 150, Out: 1000, OutCount: 1}, prev)

	// A day with nothing: the balance carries over.
	next, err := db.Flows(ctx, b.ID, end.Add(24*time.Hour), end.Add(48*time.Hour))
	require.NoError(t, err)
	require.Equal(t, pix.Flows{Opening: 770, Closing: 770}, next)
}

func eventIDs(es []pix.Event) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// exerciseMEDFlows checks that a day's money adds up with MED (docs/med.md's
// example): a dispute blocks what is available and later credits fill it,
// a return takes the block and leaves a debt, a credit pays the debt, and
// another dispute is blocked and released. The whole balance counts the
// blocked and debt accounts, so only the return leaves it.
func exerciseMEDFlows(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	a := NewClient(t, db)
	day := t0.Truncate(24 * time.Hour)
	end := day.Add(24 * time.Hour)
	at := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
	post := func(p ledger.Posting, when time.Time) {
		t.Helper()
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if err := tx.OpenMEDAccounts(ctx, a.ID); err != nil {
				return err
			}
			return tx.Post(ctx, uuid.NewString(), a.ID, "med", p, when)
		}))
	}
	whole := func() pix.Amount {
		t.Helper()
		b, err := db.Balances(ctx, a.ID)
		require.NoError(t, err)
		return b[ledger.Available] + b[ledger.Pending] + b[ledger.Blocked] + b[ledger.Debt]
	}
	ret, err := ledger.MedReturned(10000, 7000, 0)
	require.NoError(t, err)

	// Yesterday: 100,00 received, 80,00 paid out.
	post(ledger.CashinPaid(10000, 0), day.Add(-2*time.Hour))
	post(ledger.PayoutReserved(8000, 0), day.Add(-2*time.Hour))
	post(ledger.PayoutCompleted(8000, 0), day.Add(-time.Hour))
	require.Equal(t, pix.Amount(2000), whole())

	// Today.
	post(ledger.DisputeBlocked(2000), at(1)) // the 20,00 there is
	post(ledger.CashinPaid(5000, 0), at(2))
	post(ledger.DisputeBlocked(5000), at(2)) // the credit fills the block
	post(ret, at(3))                         // 100,00 returned: 70,00 blocked, 30,00 owed
	owing := whole()
	require.Equal(t, pix.Amount(-3000), owing, "the debt is in the whole balance")
	post(ledger.CashinPaid(4000, 0), at(4))
	post(ledger.DebtPaid(3000), at(4))
	post(ledger.DisputeBlocked(500), at(5)) // a second dispute, released
	post(ledger.DisputeReleased(500), at(6))
	closing := whole()
	require.Equal(t, pix.Amount(1000), closing)
	require.NoError(t, db.CheckLedger(ctx))

	want := pix.Flows{Opening: 2000, Closing: closing, In: 9000, InCount: 2, MEDReturns: 10000, MEDReturnCount: 1,
		Blocked: 2000 + 5000 + 500, Released: 500, DebtPaid: 3000}
	got, err := db.Flows(ctx, a.ID, day, end)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.Equal(t, got.Closing-got.Opening, got.In-got.Fees-got.Out+got.Returns-got.Refunds-got.MEDReturns,
		"opening + in − fees − out + returns − refunds − MED returns = closing")
	all, err := db.Flows(ctx, "", day, end)
	require.NoError(t, err)
	require.Equal(t, want, all, "every client's: the only client's")

	// Up to the return: the day closes owing.
	morning, err := db.Flows(ctx, a.ID, day, at(4))
	require.NoError(t, err)
	require.Equal(t, pix.Flows{Opening: 2000, Closing: owing, In: 5000, InCount: 1, MEDReturns: 10000, MEDReturnCount: 1,
		Blocked: 7000}, morning)
	// From then: the credit pays the debt, which the whole balance had counted already.
	evening, err := db.Flows(ctx, a.ID, at(4), end)
	require.NoError(t, err)
	require.Equal(t, pix.Flows{Opening: owing, Closing: closing, In: 4000, InCount: 1, Blocked: 500, Released: 500, DebtPaid: 3000}, evening)
}

// exerciseTransferFlows checks that a day's money adds up with transfers
// and splits between a parent and its sub-account (docs/marketplace.md):
// each side's transfers and split shares are counted in or out, a transfer
// before the day is in its opening, and over every client each pair of
// lines is equal, so the family's day adds up as if no money moved inside.
func exerciseTransferFlows(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	parent, sub := NewClient(t, db), NewClient(t, db)
	day := t0.Truncate(24 * time.Hour)
	end := day.Add(24 * time.Hour)
	at := func(h int) time.Time { return day.Add(time.Duration(h) * time.Hour) }
	post := func(c pix.Client, p ledger.Posting, when time.Time) {
		t.Helper()
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if err := tx.OpenTransferAccounts(ctx, c.ID); err != nil {
				return err
			}
			return tx.Post(ctx, uuid.NewString(), c.ID, uuid.NewString(), p, when)
		}))
	}
	transfer := func(from, to pix.Client, amount pix.Amount, when time.Time) {
		t.Helper()
		post(from, ledger.TransferOut(amount), when)
		post(to, ledger.TransferIn(amount), when)
	}
	whole := func(c pix.Client) pix.Amount {
		t.Helper()
		b, err := db.Balances(ctx, c.ID)
		require.NoError(t, err)
		return b[ledger.Available] + b[ledger.Pending]
	}

	// Yesterday: the parent received 100,00 and sent 10,00 to its sub-account.
	post(parent, ledger.CashinPaid(10000, 0), day.Add(-2*time.Hour))
	transfer(parent, sub, 1000, day.Add(-time.Hour))
	// Today: 30,00 and 5,00 down, 2,50 back up; the sub-account pays 4,00 out.
	transfer(parent, sub, 3000, at(1))
	transfer(parent, sub, 500, at(2))
	transfer(sub, parent, 250, at(3))
	post(sub, ledger.PayoutReserved(400, 0), at(4))
	post(sub, ledger.PayoutCompleted(400, 0), at(5))
	// A split charge's share of 7,00 goes from the parent to the sub-account.
	post(parent, ledger.SplitOut(700), at(6))
	post(sub, ledger.SplitIn(700), at(6))
	// Tomorrow: not in the day.
	transfer(parent, sub, 100, end)
	require.NoError(t, db.CheckLedger(ctx))

	got, err := db.Flows(ctx, parent.ID, day, end)
	require.NoError(t, err)
	require.Equal(t, pix.Flows{Opening: 9000, Closing: 9000 - 3500 + 250 - 700,
		TransfersIn: 250, TransferInCount: 1, TransfersOut: 3500, TransferOutCount: 2, SplitsOut: 700, SplitOutCount: 1}, got)
	require.Equal(t, got.Closing-got.Opening, got.TransfersIn-got.TransfersOut+got.SplitsIn-got.SplitsOut, "the parent's day adds up")
	require.Equal(t, whole(parent)+100, got.Closing, "tomorrow's transfer is after the closing")

	got, err = db.Flows(ctx, sub.ID, day, end)
	require.NoError(t, err)
	require.Equal(t, pix.Flows{Opening: 1000, Closing: 1000 + 3500 - 250 - 400 + 700, Out: 400, OutCount: 1,
		TransfersIn: 3500, TransferInCount: 2, TransfersOut: 250, TransferOutCount: 1, SplitsIn: 700, SplitInCount: 1}, got)
	require.Equal(t, got.Closing-got.Opening,
		got.In-got.Fees-got.Out+got.Returns-got.Refunds-got.MEDReturns+got.TransfersIn-got.TransfersOut+got.SplitsIn-got.SplitsOut,
		"opening + in − fees − out + returns − refunds − MED returns + transfers in − transfers out + splits in − splits out = closing")

	all, err := db.Flows(ctx, "", day, end)
	require.NoError(t, err)
	require.Equal(t, all.TransfersIn, all.TransfersOut, "over every client, what one sends another receives")
	require.Equal(t, all.SplitsIn, all.SplitsOut, "over every client, what a split sends its receiver gets")
	require.Equal(t, pix.Flows{Opening: 10000, Closing: 9600, Out: 400, OutCount: 1,
		TransfersIn: 3750, TransferInCount: 3, TransfersOut: 3750, TransferOutCount: 3,
		SplitsIn: 700, SplitInCount: 1, SplitsOut: 700, SplitOutCount: 1}, all)
}
