package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseTransactions runs the behaviours of transaction rows: unique inserts
// (also under concurrency), status transitions and all-or-nothing commits.
func exerciseTransactions(t *testing.T, open Opener) {
	exerciseUniqueTransactions(t, open)
	exerciseConcurrentInserts(t, open)
	exerciseGroupedInserts(t, open)
	exerciseTransition(t, open)
	exerciseAtomicWrites(t, open)
}

// exerciseUniqueTransactions checks that a transaction inserts once per
// external_id, txid and idempotency key.
func exerciseUniqueTransactions(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Transactions insert once per external_id, txid and idempotency key", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		other := NewClient(t, db)
		tr := newTx(c, pix.TypeCashin, "order-1", 1050, t0)
		tr.TxID, tr.QRCode, tr.Details, tr.CallbackURL = "TX1", "000201", `{"a":1}`, "https://example.com/h"
		insert := func(tr pix.Transaction) bool {
			var ok bool
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				var err error
				ok, err = tx.InsertTransaction(ctx, tr)
				return err
			}))
			return ok
		}
		require.True(t, insert(tr))
		dup := newTx(c, pix.TypeCashout, "order-1", 5, t0)
		require.False(t, insert(dup), "same client and external_id")
		require.True(t, insert(newTx(other, pix.TypeCashin, "order-1", 5, t0)), "external_id is per client")
		sameTxID := newTx(other, pix.TypeCashin, "order-2", 5, t0)
		sameTxID.TxID = "TX1"
		require.False(t, insert(sameTxID))
		k1 := newTx(c, pix.TypeCashout, "", 5, t0)
		k1.IdempotencyKey = "key-1"
		require.True(t, insert(k1))
		k2 := newTx(c, pix.TypeCashout, "", 5, t0)
		k2.IdempotencyKey = "key-1"
		require.False(t, insert(k2))
		require.True(t, insert(newTx(c, pix.TypeCashout, "", 5, t0)), "no external_id and no key never conflict")

		got, err := db.Transaction(ctx, c.ID, tr.ID)
		require.NoError(t, err)
		require.Equal(t, tr, got)
		_, err = db.Transaction(ctx, other.ID, tr.ID)
		require.ErrorIs(t, err, store.ErrNotFound, "scoped to the client")
		got, err = db.TransactionByExternalID(ctx, c.ID, "order-1")
		require.NoError(t, err)
		require.Equal(t, tr.ID, got.ID)
		got, err = db.TransactionByTxID(ctx, "TX1")
		require.NoError(t, err)
		require.Equal(t, tr.ID, got.ID)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			locked, err := tx.ChargeByTxIDForUpdate(ctx, "TX1")
			require.Equal(t, tr.ID, locked.ID)
			return err
		}))
		got, err = db.TransactionByIdempotencyKey(ctx, c.ID, "key-1")
		require.NoError(t, err)
		require.Equal(t, k1.ID, got.ID)
	})
}

// exerciseConcurrentInserts checks that concurrent inserts of one
// external_id store one row.
func exerciseConcurrentInserts(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Concurrent inserts of one external_id store one row", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		var inserted atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
					ok, err := tx.InsertTransaction(ctx, newTx(c, pix.TypeCashin, "same", 100, t0))
					if ok {
						inserted.Add(1)
					} else if err == nil {
						_, err = tx.TransactionByExternalID(ctx, c.ID, "same")
					}
					return err
				}))
			}()
		}
		// The same race through the autocommitted insert.
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := db.InsertTransaction(ctx, newTx(c, pix.TypeCashin, "same-autocommit", 100, t0))
				require.NoError(t, err)
				if ok {
					inserted.Add(1)
				} else {
					_, err := db.TransactionByExternalID(ctx, c.ID, "same-autocommit")
					require.NoError(t, err, "a refused duplicate finds the committed row")
				}
			}()
		}
		wg.Wait()
		require.Equal(t, int32(2), inserted.Load())
	})
}

// exerciseGroupedInserts checks that concurrent autocommitted inserts share
// statements without mixing up their answers.
func exerciseGroupedInserts(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Concurrent autocommitted inserts share statements without mixing up their answers", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		const distinct = 60
		type answer struct {
			tr       pix.Transaction
			inserted bool
			err      error
		}
		answers := make(chan answer, 3*distinct)
		var wg sync.WaitGroup
		for i := 0; i < distinct; i++ {
			for dup := 0; dup < 2; dup++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					tr := newTx(c, pix.TypeCashin, fmt.Sprintf("g%d", i), pix.Amount(100+i), t0)
					ok, err := db.InsertTransaction(ctx, tr)
					answers <- answer{tr, ok, err}
				}()
			}
			if i%10 == 0 {
				// A row the database refuses (amount must be > 0) fails
				// alone, not the rows that shared its statement.
				wg.Add(1)
				go func() {
					defer wg.Done()
					tr := newTx(c, pix.TypeCashin, fmt.Sprintf("bad%d", i), 0, t0)
					ok, err := db.InsertTransaction(ctx, tr)
					answers <- answer{tr, ok, err}
				}()
			}
		}
		wg.Wait()
		close(answers)
		won := map[string]string{}
		for a := range answers {
			if a.tr.Amount == 0 {
				require.Error(t, a.err, a.tr.ExternalID)
				require.False(t, a.inserted)
				continue
			}
			require.NoError(t, a.err)
			if a.inserted {
				require.NotContains(t, won, a.tr.ExternalID, "two inserts reported for one external_id")
				won[a.tr.ExternalID] = a.tr.ID
			}
		}
		require.Len(t, won, distinct)
		for ext, id := range won {
			got, err := db.TransactionByExternalID(ctx, c.ID, ext)
			require.NoError(t, err)
			require.Equal(t, id, got.ID, "the caller told it inserted is the one stored")
		}
		_, err := db.TransactionByExternalID(ctx, c.ID, "bad0")
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// exerciseTransition checks that a status transition happens once.
func exerciseTransition(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Transition happens once", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		tr := newTx(c, pix.TypeCashin, "", 100, t0)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { _, err := tx.InsertTransaction(ctx, tr); return err }))
		var moved []bool
		for i := 0; i < 2; i++ {
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				ok, err := tx.TransitionTransaction(ctx, tr.ID, "PENDING", "PAID", t0.Add(time.Minute))
				moved = append(moved, ok)
				return err
			}))
		}
		require.Equal(t, []bool{true, false}, moved)
		got, err := db.Transaction(ctx, c.ID, tr.ID)
		require.NoError(t, err)
		require.Equal(t, pix.StatusPaid, got.Status)
		require.Equal(t, t0.Add(time.Minute), got.ConfirmedAt)
	})
}

// exerciseAtomicWrites checks that a transaction's writes commit together or
// not at all.
func exerciseAtomicWrites(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("A transaction's writes commit together or not at all", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.Post(ctx, uuid.NewString(), c.ID, "in", ledger.CashinPaid(1000, 0), t0)
		}))
		reserve := func(tx *store.Tx, tr pix.Transaction) error {
			if err := tx.CreateTransaction(ctx, tr); err != nil {
				return err
			}
			return tx.Post(ctx, uuid.NewString(), c.ID, tr.ID, ledger.PayoutReserved(tr.Amount, 0), t0)
		}
		absent := func(tr pix.Transaction) {
			t.Helper()
			_, err := db.Transaction(ctx, c.ID, tr.ID)
			require.ErrorIs(t, err, store.ErrNotFound)
			ps, err := db.Postings(ctx, tr.ID)
			require.NoError(t, err)
			require.Empty(t, ps)
		}

		// Refused by the balance: the insert before it is undone too.
		big := newTx(c, pix.TypeCashout, "big", 1001, t0)
		require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error { return reserve(tx, big) }), store.ErrInsufficientFunds)
		absent(big)

		// Reads inside the transaction see its queued writes.
		first := newTx(c, pix.TypeCashout, "first", 400, t0)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if err := reserve(tx, first); err != nil {
				return err
			}
			got, err := tx.TransactionForUpdate(ctx, c.ID, first.ID)
			if err != nil {
				return err
			}
			require.Equal(t, first.ExternalID, got.ExternalID)
			return tx.SetSettleAt(ctx, first.ID, t0.Add(time.Minute))
		}))
		got, err := db.Transaction(ctx, c.ID, first.ID)
		require.NoError(t, err)
		require.Equal(t, t0.Add(time.Minute), got.SettleAt)

		// A duplicate external_id fails with ErrConflict and moves nothing.
		dup := newTx(c, pix.TypeCashout, "first", 100, t0)
		require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error { return reserve(tx, dup) }), store.ErrConflict)
		absent(dup)

		// A failure after a read undoes what went out with the read.
		late := newTx(c, pix.TypeCashout, "late", 100, t0)
		require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error {
			if err := reserve(tx, late); err != nil {
				return err
			}
			if _, err := tx.TransactionForUpdate(ctx, c.ID, late.ID); err != nil {
				return err
			}
			return tx.Post(ctx, uuid.NewString(), c.ID, late.ID, ledger.PayoutReserved(600, 0), t0)
		}), store.ErrInsufficientFunds)
		absent(late)

		if db.Dialect() == "postgres" {
			// Queued writes fail when they go out. A caller that ignores
			// the error still cannot commit the rest.
			sloppy := newTx(c, pix.TypeCashout, "sloppy", 5000, t0)
			err := db.Write(ctx, func(tx *store.Tx) error {
				_ = reserve(tx, sloppy)
				_, _ = tx.TransactionForUpdate(ctx, c.ID, sloppy.ID)
				return tx.InsertEvent(ctx, pix.Event{ID: "evt_sloppy", ClientID: c.ID, TransactionID: sloppy.ID,
					Type: "x", URL: "https://example.com", Payload: "{}", CreatedAt: t0})
			})
			require.ErrorIs(t, err, store.ErrInsufficientFunds)
			absent(sloppy)
			evs, err := db.Events(ctx, sloppy.ID)
			require.NoError(t, err)
			require.Empty(t, evs)
		}

		requireBalances(t, db, c.ID, 600, 400)
		require.NoError(t, db.CheckLedger(ctx))
	})
}
