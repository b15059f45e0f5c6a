package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// newUnmatched is a HELD unmatched receipt of amount for a Pix with a
// random end-to-end id.
func newUnmatched(amount pix.Amount, at time.Time) pix.UnmatchedReceipt {
	return pix.UnmatchedReceipt{ID: uuid.NewString(), PaymentEndToEndID: "E" + uuid.NewString()[:31], TxID: "tx" + uuid.NewString()[:8],
		Amount: amount, ReceivedAt: at, RecordedAt: at, Reason: pix.UnmatchedNoCharge, Status: pix.UnmatchedHeld}
}

func houseBalances(t *testing.T, db *store.DB) (settlement, suspense pix.Amount) {
	t.Helper()
	b, err := db.HouseBalances(context.Background())
	require.NoError(t, err)
	return b[ledger.Settlement], b[ledger.Suspense]
}

// exerciseUnmatched runs the behaviours of receipts that match no charge and
// of a charge's credit: suspense and its floor, the house accounts, cob
// intents, and what a credit stores (amount, fee, payer, due terms).
func exerciseUnmatched(t *testing.T, open Opener) {
	exerciseUnmatchedReceipt(t, open)
	exerciseSuspenseFloor(t, open)
	exerciseHouseAccounts(t, open)
	exerciseCobIntents(t, open)
	exerciseCreditedAmounts(t, open)
	exercisePayer(t, open)
	exerciseDueTerms(t, open)
}

// exerciseUnmatchedReceipt checks that an unmatched receipt is recorded
// once, in suspense, and returned from it.
func exerciseUnmatchedReceipt(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("An unmatched receipt is recorded once, in suspense, and returned from it", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		u := newUnmatched(2500, t0)
		record := func(u pix.UnmatchedReceipt) bool {
			var inserted bool
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				var err error
				if inserted, err = tx.InsertUnmatched(ctx, u); err != nil || !inserted {
					return err
				}
				return tx.Post(ctx, uuid.NewString(), store.HouseID, u.ID, ledger.UnmatchedReceived(u.Amount), t0)
			}))
			return inserted
		}
		require.True(t, record(u))
		again := u
		again.ID = uuid.NewString()
		require.False(t, record(again), "the same Pix reported again is recorded once")
		settlement, suspense := houseBalances(t, db)
		require.Equal(t, pix.Amount(-2500), settlement)
		require.Equal(t, pix.Amount(2500), suspense)
		require.NoError(t, db.CheckLedger(ctx))

		got, err := db.UnmatchedByPayment(ctx, u.PaymentEndToEndID)
		require.NoError(t, err)
		require.Equal(t, u.ID, got.ID)
		require.Equal(t, pix.UnmatchedHeld, got.Status)
		require.Equal(t, u.Amount, got.Amount)
		require.Equal(t, u.TxID, got.TxID)
		list, err := db.UnmatchedReceipts(ctx, pix.UnmatchedHeld, 10)
		require.NoError(t, err)
		require.Len(t, list, 1)

		// An operator returns it: a new return id, due now; only once.
		var started bool
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			var err error
			started, err = tx.StartUnmatchedReturn(ctx, u.ID, "ret-1", t0.Add(time.Second))
			return err
		}))
		require.True(t, started)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			var err error
			started, err = tx.StartUnmatchedReturn(ctx, u.ID, "ret-2", t0.Add(time.Second))
			return err
		}))
		require.False(t, started, "a receipt being returned is not started again")
		due, err := db.DueUnmatchedReturns(ctx, t0.Add(time.Second), 10)
		require.NoError(t, err)
		require.Len(t, due, 1)
		require.Equal(t, "ret-1", due[0].ReturnID)
		require.Equal(t, pix.SendToSend, due[0].SendState)

		// The send state machine steps it like a refund.
		var stepped bool
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			var err error
			stepped, err = tx.StepSend(ctx, store.SendStep{Kind: pix.TransferReturn, ID: u.ID, WasState: pix.SendToSend,
				WasSettleAt: due[0].SettleAt, State: pix.SendUnknown, Next: t0.Add(time.Minute), Attempt: true})
			return err
		}))
		require.True(t, stepped)

		// A failed return holds it again, the money still in suspense.
		var finished bool
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			var err error
			finished, err = tx.FinishUnmatchedReturn(ctx, u.ID, t0.Add(2*time.Second), "", "failed")
			return err
		}))
		require.True(t, finished)
		got, err = db.UnmatchedReceipt(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedHeld, got.Status)
		require.Equal(t, "failed", got.ReturnError)
		require.Equal(t, 1, got.SendAttempts)
		due, err = db.DueUnmatchedReturns(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, due)

		// Returned the second time: out of suspense.
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if ok, err := tx.StartUnmatchedReturn(ctx, u.ID, "ret-3", t0.Add(3*time.Second)); err != nil || !ok {
				return errors.Join(err, errors.New("not started"))
			}
			if ok, err := tx.FinishUnmatchedReturn(ctx, u.ID, t0.Add(4*time.Second), "D12345678202611011200abcdefghijk", ""); err != nil || !ok {
				return errors.Join(err, errors.New("not finished"))
			}
			return tx.Post(ctx, uuid.NewString(), store.HouseID, u.ID, ledger.UnmatchedReturned(u.Amount), t0.Add(4*time.Second))
		}))
		got, err = db.UnmatchedReceipt(ctx, u.ID)
		require.NoError(t, err)
		require.Equal(t, pix.UnmatchedReturned, got.Status)
		require.Equal(t, "ret-3", got.ReturnID)
		require.Equal(t, "D12345678202611011200abcdefghijk", got.ReturnEndToEndID)
		require.Equal(t, t0.Add(4*time.Second), got.ReturnedAt)
		settlement, suspense = houseBalances(t, db)
		require.Zero(t, settlement)
		require.Zero(t, suspense)
		require.NoError(t, db.CheckLedger(ctx))
	})
}

// exerciseSuspenseFloor checks that the database refuses to take suspense
// below zero.
func exerciseSuspenseFloor(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("The database refuses to take suspense below zero", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		err := db.Write(ctx, func(tx *store.Tx) error {
			return tx.Post(ctx, uuid.NewString(), store.HouseID, "u-1", ledger.UnmatchedReturned(1), t0)
		})
		require.ErrorIs(t, err, store.ErrInsufficientFunds)
		settlement, suspense := houseBalances(t, db)
		require.Zero(t, settlement)
		require.Zero(t, suspense)
	})
}

// exerciseHouseAccounts checks that entries still need an existing account
// after the accounts table gained the house.
func exerciseHouseAccounts(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Entries still need an existing account after the accounts table gained the house", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		err := db.Write(ctx, func(tx *store.Tx) error {
			if err := store.RawExec(ctx, tx, `INSERT INTO postings (id, client_id, transaction_id, kind, created_at) VALUES ('p-fk', 'x', 'y', 'k', 0)`); err != nil {
				return err
			}
			return store.RawExec(ctx, tx, `INSERT INTO entries (posting_id, seq, account_id, amount) VALUES ('p-fk', 0, 'nobody:available', 1)`)
		})
		require.Error(t, err, "the foreign key from entries to accounts holds")
	})
}

// exerciseCobIntents checks that a cob intent is kept until deleted and
// found once stale.
func exerciseCobIntents(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("A cob intent is kept until deleted and found once stale", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		require.NoError(t, db.InsertCobIntent(ctx, pix.CobIntent{TxID: "txid-old", ClientID: c.ID, CreatedAt: t0}))
		require.NoError(t, db.InsertCobIntent(ctx, pix.CobIntent{TxID: "txid-new", ClientID: c.ID, CreatedAt: t0.Add(time.Minute), Due: true}))
		stale, err := db.StaleCobIntents(ctx, t0.Add(30*time.Second), 10)
		require.NoError(t, err)
		require.Len(t, stale, 1)
		require.Equal(t, pix.CobIntent{TxID: "txid-old", ClientID: c.ID, CreatedAt: t0}, stale[0])
		gone, err := db.DeleteCobIntent(ctx, "txid-old")
		require.NoError(t, err)
		require.True(t, gone)
		gone, err = db.DeleteCobIntent(ctx, "txid-old")
		require.NoError(t, err)
		require.False(t, gone)
		stale, err = db.StaleCobIntents(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Len(t, stale, 1)
		require.Equal(t, "txid-new", stale[0].TxID)
		require.True(t, stale[0].Due, "the intent of a charge with a due date says so")
	})
}

// exerciseCreditedAmounts checks that a charge's paid amount and fee are
// stored when it is credited.
func exerciseCreditedAmounts(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("A charge's paid amount and fee are stored when credited", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		ch := newTx(c, pix.TypeCashin, "ch-paid", 10000, t0)
		ch.TxID = "txidpaid" + uuid.NewString()[:8]
		ok, err := db.InsertTransaction(ctx, ch)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			ok, err := tx.CreditCharge(ctx, ch.ID, pix.StatusPending, t0.Add(time.Second), "E1234567820261101120012345678901", 1, 0, 0)
			if err == nil && !ok {
				err = errors.New("not credited")
			}
			return err
		}))
		got, err := db.Transaction(ctx, c.ID, ch.ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, got.Status)
		require.Equal(t, pix.Amount(1), got.PaidAmount)
		require.Zero(t, got.Tax)
		require.True(t, got.AmountMismatch())
		require.Equal(t, pix.Amount(1), got.Refundable())
	})
}

// exercisePayer checks that who paid a charge is stored with its credit, and
// reads empty until then.
func exercisePayer(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Who paid a charge is stored with its credit, and reads empty until then", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		ch := newTx(c, pix.TypeCashin, "ch-payer", 2590, t0)
		ch.TxID = "txidpayer" + uuid.NewString()[:8]
		ok, err := db.InsertTransaction(ctx, ch)
		require.NoError(t, err)
		require.True(t, ok)
		got, err := db.Transaction(ctx, c.ID, ch.ID)
		require.NoError(t, err)
		require.Empty(t, got.PayerName)
		require.Empty(t, got.PayerDocument)
		const e2e = "E1234567820261101120012345678903"
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			ok, err := tx.CreditCharge(ctx, ch.ID, pix.StatusPending, t0.Add(time.Second), e2e, 2590, 0, 0)
			if err == nil && !ok {
				err = errors.New("not credited")
			}
			if err != nil {
				return err
			}
			return tx.SetChargePayer(ctx, ch.ID, "João da Silva", "***.982.247-**")
		}))
		for _, read := range []func() (pix.Transaction, error){
			func() (pix.Transaction, error) { return db.Transaction(ctx, c.ID, ch.ID) },
			func() (pix.Transaction, error) { return db.TransactionByTxID(ctx, ch.TxID) },
			func() (pix.Transaction, error) {
				rows, _, err := db.History(ctx, c.ID, store.HistoryFilter{Limit: 10})
				if err != nil || len(rows) != 1 {
					return pix.Transaction{}, errors.Join(err, fmt.Errorf("history: %d rows", len(rows)))
				}
				return rows[0], nil
			},
		} {
			got, err := read()
			require.NoError(t, err)
			require.Equal(t, e2e, got.EndToEndID)
			require.Equal(t, ch.TxID, got.TxID)
			require.Equal(t, "João da Silva", got.PayerName)
			require.Equal(t, "***.982.247-**", got.PayerDocument)
		}
	})
}

// exerciseDueTerms checks that a charge's due terms, and the amount expected
// when it was paid, are stored.
func exerciseDueTerms(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("A charge's due terms and the amount expected when it was paid are stored", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		due := &pix.Due{Date: pix.Date{Year: 2026, Month: 12, Day: 10}, DaysAfter: 30, Fine: pix.DueFine{PercentBP: 200}, InterestBP: 100,
			Discounts: []pix.DueDiscount{{Until: pix.Date{Year: 2026, Month: 12, Day: 1}, Amount: 5000}, {Until: pix.Date{Year: 2026, Month: 12, Day: 5}, Amount: 2000}}}
		ch := newTx(c, pix.TypeCashin, "ch-due", 100000, t0)
		ch.TxID, ch.Due = "txiddue"+uuid.NewString()[:8], due
		ok, err := db.InsertTransaction(ctx, ch)
		require.NoError(t, err)
		require.True(t, ok)
		imm := newTx(c, pix.TypeCashin, "ch-immediate", 100000, t0)
		imm.TxID = "txidimm" + uuid.NewString()[:8]
		ok, err = db.InsertTransaction(ctx, imm)
		require.NoError(t, err)
		require.True(t, ok)
		got, err := db.Transaction(ctx, c.ID, imm.ID)
		require.NoError(t, err)
		require.Nil(t, got.Due, "an immediate charge has no terms")

		got, err = db.Transaction(ctx, c.ID, ch.ID)
		require.NoError(t, err)
		require.Equal(t, due, got.Due)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			ok, err := tx.CreditCharge(ctx, ch.ID, pix.StatusPending, t0.Add(time.Second), "E1234567820261101120012345678902", 102033, 0, 102033)
			if err == nil && !ok {
				err = errors.New("not credited")
			}
			return err
		}))
		got, err = db.Transaction(ctx, c.ID, ch.ID)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(102033), got.ExpectedAmount)
		require.False(t, got.AmountMismatch(), "paid what was due that day, more than the amount")
		require.Equal(t, pix.Amount(100000), got.Refundable())
	})
}
