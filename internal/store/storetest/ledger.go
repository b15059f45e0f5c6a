package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/ledger"
	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// errBoom is a write's own failure.
var errBoom = errors.New("boom")

// exerciseLedger runs the behaviours of ledger postings: balances move, never
// below zero (also under concurrency and in batches), and agree with the pure
// ledger model.
func exerciseLedger(t *testing.T, open Opener) {
	exercisePostings(t, open)
	exerciseGroupedWrites(t, open)
	exerciseNegativeAvailable(t, open)
	exerciseLedgerSigns(t, open)
	exercisePostingBatches(t, open)
	exerciseConcurrentReservations(t, open)
	exerciseLedgerModel(t, open)
}

// exercisePostings checks that postings move balances and keep the ledger
// consistent.
func exercisePostings(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Postings move balances and keep the ledger consistent", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		post := func(p ledger.Posting) error {
			return db.Write(ctx, func(tx *store.Tx) error { return tx.Post(ctx, uuid.Must(uuid.NewV7()).String(), c.ID, "tx-1", p, t0) })
		}
		require.ErrorIs(t, post(ledger.PayoutReserved(1, 0)), store.ErrInsufficientFunds)
		require.NoError(t, post(ledger.CashinPaid(1000, 25)))
		require.NoError(t, post(ledger.PayoutReserved(900, 75)))
		require.ErrorIs(t, post(ledger.PayoutReserved(1, 0)), store.ErrInsufficientFunds)
		b, err := db.Balances(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, ledger.Balances{ledger.Available: 0, ledger.Pending: 975, ledger.Settlement: -1000, ledger.Fees: 25}, b)
		require.NoError(t, db.CheckLedger(ctx))
		ps, err := db.Postings(ctx, "tx-1")
		require.NoError(t, err)
		require.Len(t, ps, 2)
		require.Equal(t, "cashin.paid", ps[0].Kind)
		require.Equal(t, ledger.CashinPaid(1000, 25).Entries, ps[0].Entries)
		require.Equal(t, ledger.PayoutReserved(900, 75).Entries, ps[1].Entries)
		require.Error(t, post(ledger.Posting{Kind: "bad", Entries: []ledger.Entry{{Account: ledger.Available, Amount: 1}, {Account: ledger.Fees, Amount: 1}}}))
	})
}

// exerciseGroupedWrites checks that concurrent grouped writes each get their
// own answer and post once.
func exerciseGroupedWrites(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Concurrent grouped writes each get their own answer and post once", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		clients := []pix.Client{NewClient(t, db), NewClient(t, db), NewClient(t, db)}
		const n = 60
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := clients[i%len(clients)]
				errs[i] = db.WriteGrouped(ctx, func(tx *store.Tx) error {
					if i%10 == 7 {
						// Overdraws: its write fails alone, whoever shares its transaction.
						return tx.Post(ctx, uuid.NewString(), c.ID, fmt.Sprint("g-", i), ledger.PayoutReserved(1_000_000, 0), t0)
					}
					if i%10 == 3 {
						return errBoom
					}
					return tx.Post(ctx, uuid.NewString(), c.ID, fmt.Sprint("g-", i), ledger.CashinPaid(100, 1), t0)
				})
			}()
		}
		wg.Wait()
		credited := make(map[string]int64)
		for i, err := range errs {
			switch i % 10 {
			case 7:
				require.ErrorIs(t, err, store.ErrInsufficientFunds, "write %d", i)
			case 3:
				require.ErrorIs(t, err, errBoom, "write %d", i)
			default:
				require.NoError(t, err, "write %d", i)
				credited[clients[i%len(clients)].ID] += 99
			}
		}
		for _, c := range clients {
			b, err := db.Balances(ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, credited[c.ID], int64(b[ledger.Available]), "only the writes that succeeded moved money")
		}
		for i := range n {
			ps, err := db.Postings(ctx, fmt.Sprint("g-", i))
			require.NoError(t, err)
			if i%10 == 7 || i%10 == 3 {
				require.Empty(t, ps, "write %d", i)
			} else {
				require.Len(t, ps, 1, "write %d posted once", i)
			}
		}
		require.NoError(t, db.CheckLedger(ctx))
	})
}

// exerciseNegativeAvailable checks that the database itself refuses a
// negative available balance.
func exerciseNegativeAvailable(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("The database itself refuses a negative available balance", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		err := db.Write(ctx, func(tx *store.Tx) error {
			return store.RawExec(ctx, tx, `UPDATE accounts SET balance = -1 WHERE id = $1`, store.AccountID(c.ID, ledger.Available))
		})
		require.ErrorIs(t, err, store.ErrInsufficientFunds)
	})
}

// exerciseLedgerSigns checks that CheckLedger finds an account on the wrong
// side of zero by itself: each bad row is a balanced posting whose entries
// agree with the balances, written in SQL past the schema's CHECKs, so the
// sign check is the only one that can see it.
func exerciseLedgerSigns(t *testing.T, open Opener) {
	ctx := context.Background()
	for _, c := range []struct {
		name       string
		wrong, pay ledger.Kind // wrong goes 100 past zero, paid by (or paying) pay
		delta      pix.Amount  // wrong's move
		sign       string
	}{
		{"a negative blocked account", ledger.Blocked, ledger.Available, -100, "negative"},
		{"a positive debt account", ledger.Debt, ledger.Available, 100, "positive"},
		{"a negative available account", ledger.Available, ledger.Blocked, -1100, "negative"},
		{"a negative pending account", ledger.Pending, ledger.Available, -100, "negative"},
	} {
		t.Run("CheckLedger finds "+c.name, func(t *testing.T) {
			t.Parallel()
			db := open(t)
			cl := NewClient(t, db)
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				if err := tx.OpenMEDAccounts(ctx, cl.ID); err != nil {
					return err
				}
				return tx.Post(ctx, uuid.NewString(), cl.ID, "in", ledger.CashinPaid(1000, 0), t0)
			}))
			require.NoError(t, db.CheckLedger(ctx), "consistent before the bad row")

			posting := uuid.NewString()
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				return withoutChecks(ctx, db, tx, func() error {
					for _, q := range []struct {
						sql  string
						args []any
					}{
						{`INSERT INTO postings (id, client_id, transaction_id, kind, created_at) VALUES ($1, $2, 'bad', 'test.bad', $3)`,
							[]any{posting, cl.ID, t0.UnixMilli()}},
						{`INSERT INTO entries (posting_id, seq, account_id, amount) VALUES ($1, 0, $2, $3), ($1, 1, $4, $5)`,
							[]any{posting, store.AccountID(cl.ID, c.wrong), int64(c.delta), store.AccountID(cl.ID, c.pay), int64(-c.delta)}},
						{`UPDATE accounts SET balance = balance + $2 WHERE id = $1`, []any{store.AccountID(cl.ID, c.wrong), int64(c.delta)}},
						{`UPDATE accounts SET balance = balance + $2 WHERE id = $1`, []any{store.AccountID(cl.ID, c.pay), int64(-c.delta)}},
					} {
						if err := store.RawExec(ctx, tx, q.sql, q.args...); err != nil {
							return err
						}
					}
					return nil
				})
			}))
			b, err := db.Balances(ctx, cl.ID)
			require.NoError(t, err)
			require.Equal(t, c.delta+map[ledger.Kind]pix.Amount{ledger.Available: 1000}[c.wrong], b[c.wrong], "the bad row is in")

			err = db.CheckLedger(ctx)
			require.ErrorIs(t, err, store.ErrLedgerInconsistent)
			require.ErrorContains(t, err, fmt.Sprintf("%s account %s is %s", c.wrong, store.AccountID(cl.ID, c.wrong), c.sign))
		})
	}
}

// withoutChecks runs fn inside tx with the accounts' CHECK constraints off,
// so that a test can write a row the schema refuses: SQLite ignores them
// for the connection until they are turned on again at the end of tx;
// PostgreSQL drops them from this test's own database (the DDL is part of
// tx).
func withoutChecks(ctx context.Context, db *store.DB, tx *store.Tx, fn func() error) error {
	if db.Dialect() == "sqlite" {
		if err := store.RawExec(ctx, tx, `PRAGMA ignore_check_constraints = ON`); err != nil {
			return fmt.Errorf("checks off: %w", err)
		}
		err := fn()
		if on := store.RawExec(ctx, tx, `PRAGMA ignore_check_constraints = OFF`); on != nil && err == nil {
			err = fmt.Errorf("checks on: %w", on)
		}
		return err
	}
	err := store.RawExec(ctx, tx, `DO $$ DECLARE c text; BEGIN
		FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = 'accounts'::regclass AND contype = 'c' LOOP
			EXECUTE 'ALTER TABLE accounts DROP CONSTRAINT ' || quote_ident(c);
		END LOOP; END $$`)
	if err != nil {
		return fmt.Errorf("drop checks: %w", err)
	}
	return fn()
}

// exercisePostingBatches checks that a batch of postings across clients
// moves each balance once and never deadlocks with another.
func exercisePostingBatches(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Batches of postings across clients move each balance once and never deadlock", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		clients := make([]pix.Client, 6)
		for i := range clients {
			clients[i] = NewClient(t, db)
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				return tx.Post(ctx, uuid.NewString(), clients[i].ID, "in", ledger.CashinPaid(1_000_000, 0), t0)
			}))
		}
		// One batch: two postings of one client and one of another, written
		// as separate postings with their own entries.
		batch := []store.PostingWrite{
			{ID: uuid.Must(uuid.NewV7()).String(), ClientID: clients[0].ID, TransactionID: "b-1", Posting: ledger.PayoutReserved(100, 10)},
			{ID: uuid.Must(uuid.NewV7()).String(), ClientID: clients[1].ID, TransactionID: "b-2", Posting: ledger.PayoutReserved(200, 20)},
			{ID: uuid.Must(uuid.NewV7()).String(), ClientID: clients[0].ID, TransactionID: "b-1", Posting: ledger.PayoutCompleted(100, 10)},
		}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.PostAll(ctx, batch, t0) }))
		b0, err := db.Balances(ctx, clients[0].ID)
		require.NoError(t, err)
		require.Equal(t, ledger.Balances{ledger.Available: 1_000_000 - 110, ledger.Pending: 0, ledger.Settlement: -1_000_000 + 100, ledger.Fees: 10}, b0)
		ps, err := db.Postings(ctx, "b-1")
		require.NoError(t, err)
		require.Len(t, ps, 2)
		require.Equal(t, ledger.PayoutReserved(100, 10).Entries, ps[0].Entries)
		require.Equal(t, ledger.PayoutCompleted(100, 10).Entries, ps[1].Entries)

		// A batch that overdraws one client refuses the whole batch.
		over := []store.PostingWrite{
			{ID: uuid.NewString(), ClientID: clients[2].ID, TransactionID: "o-1", Posting: ledger.PayoutReserved(1, 0)},
			{ID: uuid.NewString(), ClientID: clients[3].ID, TransactionID: "o-2", Posting: ledger.PayoutReserved(2_000_000, 0)},
		}
		require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error { return tx.PostAll(ctx, over, t0) }), store.ErrInsufficientFunds)
		requireBalances(t, db, clients[2].ID, 1_000_000, 0) // nothing of the refused batch stays

		// Batches over all clients in shuffled orders, beside single
		// postings, all at once: every lock is taken in account-id order,
		// so none deadlocks (PostgreSQL would abort one with 40P01).
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for round := 0; round < 15; round++ {
					err := db.Write(ctx, func(tx *store.Tx) error {
						if g%2 == 1 {
							c := clients[(g+round)%len(clients)]
							return tx.Post(ctx, uuid.NewString(), c.ID, "single", ledger.PayoutReserved(3, 1), t0)
						}
						var ws []store.PostingWrite
						for _, i := range rand.Perm(len(clients)) {
							ws = append(ws, store.PostingWrite{ID: uuid.NewString(), ClientID: clients[i].ID, TransactionID: "batch",
								Posting: ledger.PayoutReserved(5, 1)})
						}
						return tx.PostAll(ctx, ws, t0)
					})
					if err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		require.NoError(t, db.CheckLedger(ctx))
		var total pix.Amount
		for _, c := range clients {
			b, err := db.Balances(ctx, c.ID)
			require.NoError(t, err)
			total += b[ledger.Available] + b[ledger.Pending]
		}
		require.Equal(t, pix.Amount(6*1_000_000-110), total, "only the completed payout left; reservations moved money within each client")
	})
}

// exerciseConcurrentReservations checks that concurrent reservations never
// overdraw.
func exerciseConcurrentReservations(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Concurrent reservations never overdraw", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.Post(ctx, uuid.NewString(), c.ID, "in", ledger.CashinPaid(1000, 0), t0)
		}))
		var ok, refused atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 30; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.Write(ctx, func(tx *store.Tx) error {
					return tx.Post(ctx, uuid.NewString(), c.ID, "out", ledger.PayoutReserved(90, 10), t0)
				})
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, store.ErrInsufficientFunds):
					refused.Add(1)
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		require.Equal(t, int32(10), ok.Load())
		require.Equal(t, int32(20), refused.Load())
		requireBalances(t, db, c.ID, 0, 1000)
		require.NoError(t, db.CheckLedger(ctx))
	})
}

// exerciseLedgerModel checks that thousands of random postings agree with
// the pure ledger model.
func exerciseLedgerModel(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("Thousands of random postings agree with the pure model", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		clients := []pix.Client{NewClient(t, db), NewClient(t, db), NewClient(t, db)}
		model := map[string]ledger.Balances{}
		for _, c := range clients {
			model[c.ID] = ledger.Balances{}
		}
		r := rand.New(rand.NewPCG(7, 11))
		refused := 0
		for i := 0; i < 2000; i++ {
			c := clients[r.IntN(len(clients))]
			amount := pix.Amount(1 + r.IntN(50000))
			var p ledger.Posting
			switch r.IntN(8) {
			case 0, 1:
				p = ledger.CashinPaid(amount, pix.Amount(r.Int64N(int64(amount)+1)))
			case 2:
				p = ledger.PayoutReserved(amount, pix.Amount(r.IntN(300)))
			case 3:
				p = ledger.PayoutCompleted(amount, pix.Amount(r.IntN(300)))
			case 4:
				p = ledger.PayoutFailed(amount, 0)
			case 5:
				p = ledger.PayoutReversed(amount)
			case 6:
				p = ledger.RefundReserved(amount)
			default:
				p = ledger.RefundCompleted(amount)
			}
			want, modelErr := model[c.ID].Apply(p)
			err := db.Write(ctx, func(tx *store.Tx) error {
				return tx.Post(ctx, uuid.Must(uuid.NewV7()).String(), c.ID, "rand", p, t0)
			})
			if modelErr != nil {
				require.ErrorIs(t, err, store.ErrInsufficientFunds, "the database refuses what the model refuses (%s)", p.Kind)
				refused++
				continue
			}
			require.NoError(t, err, p.Kind)
			model[c.ID] = want
		}
		require.Greater(t, refused, 0)
		for _, c := range clients {
			got, err := db.Balances(ctx, c.ID)
			require.NoError(t, err)
			for _, k := range store.AccountKinds {
				require.Equal(t, model[c.ID][k], got[k], "%s %s", c.ID, k)
			}
			require.GreaterOrEqual(t, int64(got[ledger.Available]), int64(0))
			require.GreaterOrEqual(t, int64(got[ledger.Pending]), int64(0))
		}
		require.NoError(t, db.CheckLedger(ctx))
	})
}
