// Package storetest is the one behaviour suite for pixgate storage. Every
// driver runs Exercise unchanged, so a behaviour that is not tested here does
// not exist (River's riverdrivertest idea).
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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

// Opener returns a fresh, migrated, empty database for one test.
type Opener func(t *testing.T) *store.DB

var t0 = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// NewClient inserts an active sandbox client with a random id.
func NewClient(t *testing.T, db *store.DB) store.Client {
	t.Helper()
	c := store.Client{
		ID: "cli_" + uuid.NewString()[:8], Name: "test", Environment: "sandbox", SecretHash: "00",
		WebhookSecret: "whsec_x", Status: store.ClientActive, CreatedAt: t0,
		CashinFee: pix.FeeRule{PercentBP: 150, Fixed: 10},
	}
	require.NoError(t, db.Write(context.Background(), func(tx *store.Tx) error { return tx.InsertClient(context.Background(), c) }))
	return c
}

func newTx(c store.Client, typ, ext string, amount pix.Amount, at time.Time) store.Transaction {
	return store.Transaction{
		ID: uuid.NewString(), ClientID: c.ID, Type: typ, ExternalID: ext, RequestHash: "h", Status: "PENDING",
		Amount: amount, CreatedAt: at, ExpiresAt: at.Add(time.Hour),
	}
}

// newPayout is a PENDING payout of 100 created at t0 and due to settle at
// settleAt.
func newPayout(c store.Client, ext string, settleAt time.Time) store.Transaction {
	p := newTx(c, store.TypeCashout, ext, 100, t0)
	p.ExpiresAt, p.SettleAt = time.Time{}, settleAt
	return p
}

// Exercise runs every storage behaviour against the driver.
func Exercise(t *testing.T, open Opener) {
	ctx := context.Background()
	exerciseRefunds(t, open)

	t.Run("Migrate is idempotent and Ping answers", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		_, err := db.Migrate(ctx)
		require.NoError(t, err)
		require.NoError(t, db.Ping(ctx))
	})

	t.Run("Clients", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		n, err := db.CountClients(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		c := NewClient(t, db)
		got, err := db.Client(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)
		_, err = db.Client(ctx, "nope")
		require.ErrorIs(t, err, store.ErrNotFound)
		err = db.Write(ctx, func(tx *store.Tx) error { return tx.InsertClient(ctx, c) })
		require.ErrorIs(t, err, store.ErrConflict)

		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if err := tx.SetClientSecret(ctx, c.ID, "ff"); err != nil {
				return err
			}
			return tx.SetClientStatus(ctx, c.ID, store.ClientDisabled)
		}))
		got, err = db.Client(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "ff", got.SecretHash)
		require.Equal(t, store.ClientDisabled, got.Status)
		require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error { return tx.SetClientSecret(ctx, "nope", "aa") }), store.ErrNotFound)

		until := t0.Add(24 * time.Hour)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.SetWebhookSecret(ctx, c.ID, "whsec_new", until) }))
		got, err = db.Client(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "whsec_new", got.WebhookSecret)
		require.Equal(t, "whsec_x", got.PrevWebhookSecret)
		require.Equal(t, until, got.PrevWebhookUntil)

		all, err := db.Clients(ctx)
		require.NoError(t, err)
		require.Len(t, all, 1)
		b, err := db.Balances(ctx, c.ID)
		require.NoError(t, err)
		require.Len(t, b, len(store.AccountKinds))
	})

	t.Run("Concurrent client reads each get their own client, and see changes made before them", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		var clients []store.Client
		for i := 0; i < 5; i++ {
			clients = append(clients, NewClient(t, db))
		}
		var wg sync.WaitGroup
		for i := 0; i < 200; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch {
				case i%17 == 0:
					_, err := db.Client(ctx, fmt.Sprintf("missing-%d", i))
					require.ErrorIs(t, err, store.ErrNotFound)
				case i%29 == 0:
					// A malformed id fails (PostgreSQL refuses invalid
					// UTF-8) or finds nothing (SQLite), alone.
					_, err := db.Client(ctx, "bad-\xff")
					require.Error(t, err)
				default:
					want := clients[i%len(clients)]
					got, err := db.Client(ctx, want.ID)
					require.NoError(t, err)
					require.Equal(t, want, got)
				}
			}()
		}
		wg.Wait()
		for i, c := range clients {
			hash := fmt.Sprintf("%064d", i)
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.SetClientSecret(ctx, c.ID, hash) }))
			got, err := db.Client(ctx, c.ID)
			require.NoError(t, err)
			require.Equal(t, hash, got.SecretHash, "a read after the commit sees the new secret")
		}
	})

	t.Run("ClaimBootstrap is granted once under concurrency", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		var granted atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.Write(ctx, func(tx *store.Tx) error {
					ok, err := tx.ClaimBootstrap(ctx, "sandbox", t0)
					if ok {
						granted.Add(1)
					}
					return err
				})
				require.NoError(t, err)
			}()
		}
		wg.Wait()
		require.Equal(t, int32(1), granted.Load())
	})

	t.Run("Transactions insert once per external_id, txid and idempotency key", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		other := NewClient(t, db)
		tr := newTx(c, store.TypeCashin, "order-1", 1050, t0)
		tr.TxID, tr.QRCode, tr.Details, tr.CallbackURL = "TX1", "000201", `{"a":1}`, "https://example.com/h"
		insert := func(tr store.Transaction) bool {
			var ok bool
			require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
				var err error
				ok, err = tx.InsertTransaction(ctx, tr)
				return err
			}))
			return ok
		}
		require.True(t, insert(tr))
		dup := newTx(c, store.TypeCashout, "order-1", 5, t0)
		require.False(t, insert(dup), "same client and external_id")
		require.True(t, insert(newTx(other, store.TypeCashin, "order-1", 5, t0)), "external_id is per client")
		sameTxID := newTx(other, store.TypeCashin, "order-2", 5, t0)
		sameTxID.TxID = "TX1"
		require.False(t, insert(sameTxID))
		k1 := newTx(c, store.TypeCashout, "", 5, t0)
		k1.IdempotencyKey = "key-1"
		require.True(t, insert(k1))
		k2 := newTx(c, store.TypeCashout, "", 5, t0)
		k2.IdempotencyKey = "key-1"
		require.False(t, insert(k2))
		require.True(t, insert(newTx(c, store.TypeCashout, "", 5, t0)), "no external_id and no key never conflict")

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
					ok, err := tx.InsertTransaction(ctx, newTx(c, store.TypeCashin, "same", 100, t0))
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
				ok, err := db.InsertTransaction(ctx, newTx(c, store.TypeCashin, "same-autocommit", 100, t0))
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

	t.Run("Concurrent autocommitted inserts share statements without mixing up their answers", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		const distinct = 60
		type answer struct {
			tr       store.Transaction
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
					tr := newTx(c, store.TypeCashin, fmt.Sprintf("g%d", i), pix.Amount(100+i), t0)
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
					tr := newTx(c, store.TypeCashin, fmt.Sprintf("bad%d", i), 0, t0)
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

	t.Run("Transition happens once", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		tr := newTx(c, store.TypeCashin, "", 100, t0)
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
		require.Equal(t, "PAID", got.Status)
		require.Equal(t, t0.Add(time.Minute), got.ConfirmedAt)
	})

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

	t.Run("The database itself refuses a negative available balance", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		err := db.Write(ctx, func(tx *store.Tx) error {
			return store.RawExec(ctx, tx, `UPDATE accounts SET balance = -1 WHERE id = $1`, store.AccountID(c.ID, ledger.Available))
		})
		require.ErrorIs(t, err, store.ErrInsufficientFunds)
	})

	t.Run("A transaction's writes commit together or not at all", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.Post(ctx, uuid.NewString(), c.ID, "in", ledger.CashinPaid(1000, 0), t0)
		}))
		reserve := func(tx *store.Tx, tr store.Transaction) error {
			if err := tx.CreateTransaction(ctx, tr); err != nil {
				return err
			}
			return tx.Post(ctx, uuid.NewString(), c.ID, tr.ID, ledger.PayoutReserved(tr.Amount, 0), t0)
		}
		absent := func(tr store.Transaction) {
			t.Helper()
			_, err := db.Transaction(ctx, c.ID, tr.ID)
			require.ErrorIs(t, err, store.ErrNotFound)
			ps, err := db.Postings(ctx, tr.ID)
			require.NoError(t, err)
			require.Empty(t, ps)
		}

		// Refused by the balance: the insert before it is undone too.
		big := newTx(c, store.TypeCashout, "big", 1001, t0)
		require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error { return reserve(tx, big) }), store.ErrInsufficientFunds)
		absent(big)

		// Reads inside the transaction see its queued writes.
		first := newTx(c, store.TypeCashout, "first", 400, t0)
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
		dup := newTx(c, store.TypeCashout, "first", 100, t0)
		require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error { return reserve(tx, dup) }), store.ErrConflict)
		absent(dup)

		// A failure after a read undoes what went out with the read.
		late := newTx(c, store.TypeCashout, "late", 100, t0)
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
			sloppy := newTx(c, store.TypeCashout, "sloppy", 5000, t0)
			err := db.Write(ctx, func(tx *store.Tx) error {
				_ = reserve(tx, sloppy)
				_, _ = tx.TransactionForUpdate(ctx, c.ID, sloppy.ID)
				return tx.InsertEvent(ctx, store.Event{ID: "evt_sloppy", ClientID: c.ID, TransactionID: sloppy.ID,
					Type: "x", URL: "https://example.com", Payload: "{}", CreatedAt: t0})
			})
			require.ErrorIs(t, err, store.ErrInsufficientFunds)
			absent(sloppy)
			evs, err := db.Events(ctx, sloppy.ID)
			require.NoError(t, err)
			require.Empty(t, evs)
		}

		b, err := db.Balances(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(600), b[ledger.Available])
		require.Equal(t, pix.Amount(400), b[ledger.Pending])
		require.NoError(t, db.CheckLedger(ctx))
	})

	t.Run("Batches of postings across clients move each balance once and never deadlock", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		clients := make([]store.Client, 6)
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
		b2, err := db.Balances(ctx, clients[2].ID)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(1_000_000), b2[ledger.Available], "nothing of the refused batch stays")

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
		b, err := db.Balances(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(0), b[ledger.Available])
		require.Equal(t, pix.Amount(1000), b[ledger.Pending])
		require.NoError(t, db.CheckLedger(ctx))
	})

	t.Run("Concurrent payouts share transactions, and each gets its own answer", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		poor, rich := NewClient(t, db), NewClient(t, db)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.PostAll(ctx, []store.PostingWrite{
				{ID: uuid.NewString(), ClientID: poor.ID, TransactionID: "in1", Posting: ledger.CashinPaid(1000, 0)},
				{ID: uuid.NewString(), ClientID: rich.ID, TransactionID: "in2", Posting: ledger.CashinPaid(100_000, 0)},
			}, t0)
		}))
		type answer struct {
			p   store.NewPayout
			err error
		}
		payout := func(c store.Client, ext string, amount, tax pix.Amount, i int) store.NewPayout {
			tr := newTx(c, store.TypeCashout, ext, amount, t0.Add(time.Duration(i)*time.Millisecond))
			tr.Tax, tr.ExpiresAt, tr.SettleAt = tax, time.Time{}, tr.CreatedAt.Add(time.Minute)
			return store.NewPayout{Transaction: tr, Posting: store.PostingWrite{ID: uuid.NewString(), ClientID: c.ID,
				TransactionID: tr.ID, Posting: ledger.PayoutReserved(amount, tax)}}
		}
		run := func(ps []store.NewPayout) chan answer {
			answers := make(chan answer, len(ps))
			var wg sync.WaitGroup
			for _, p := range ps {
				wg.Add(1)
				go func() {
					defer wg.Done()
					answers <- answer{p, db.CreatePayout(ctx, p)}
				}()
			}
			wg.Wait()
			close(answers)
			return answers
		}
		// First payouts that all succeed, so that groups commit whole; then
		// groups that hold refused and duplicate payouts among good ones.
		var good, mixed []store.NewPayout
		for i := range 100 {
			good = append(good, payout(rich, fmt.Sprintf("g%d", i), 400, 0, i))
		}
		for i := range 30 { // 100 each: ten fit in the poor client's 1,000
			mixed = append(mixed, payout(poor, fmt.Sprintf("p%d", i), 90, 10, i))
		}
		for i := range 40 { // twenty external_ids, each sent twice
			mixed = append(mixed, payout(rich, fmt.Sprintf("r%d", i/2), 50, 0, i))
		}
		count := map[string]int{}
		for a := range run(good) {
			require.NoError(t, a.err)
			posts, err := db.Postings(ctx, a.p.Transaction.ID)
			require.NoError(t, err)
			require.Len(t, posts, 1)
			require.True(t, a.p.Transaction.CreatedAt.Equal(posts[0].CreatedAt), "each posting keeps its own payout's time")
		}
		for a := range run(mixed) {
			tr := a.p.Transaction
			got, err := db.Transaction(ctx, tr.ClientID, tr.ID)
			switch {
			case a.err == nil:
				count[tr.ClientID+" ok"]++
				require.NoError(t, err, "an acknowledged payout is stored")
				require.Equal(t, tr.Amount, got.Amount)
				require.True(t, tr.SettleAt.Equal(got.SettleAt))
				posts, err := db.Postings(ctx, tr.ID)
				require.NoError(t, err)
				require.Len(t, posts, 1)
				require.Equal(t, "cashout.reserved", posts[0].Kind)
				require.True(t, tr.CreatedAt.Equal(posts[0].CreatedAt), "each posting keeps its own payout's time")
			case errors.Is(a.err, store.ErrInsufficientFunds):
				count[tr.ClientID+" refused"]++
				require.ErrorIs(t, err, store.ErrNotFound, "a refused payout leaves no row")
			case errors.Is(a.err, store.ErrConflict):
				count[tr.ClientID+" duplicate"]++
				require.ErrorIs(t, err, store.ErrNotFound, "a duplicate leaves no row")
				_, err := db.TransactionByExternalID(ctx, tr.ClientID, tr.ExternalID)
				require.NoError(t, err, "the payout it duplicates is stored")
			default:
				t.Fatal(a.err)
			}
		}
		require.Equal(t, map[string]int{poor.ID + " ok": 10, poor.ID + " refused": 20,
			rich.ID + " ok": 20, rich.ID + " duplicate": 20}, count)
		b, err := db.Balances(ctx, poor.ID)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(0), b[ledger.Available])
		require.Equal(t, pix.Amount(1000), b[ledger.Pending])
		b, err = db.Balances(ctx, rich.ID)
		require.NoError(t, err)
		require.Equal(t, pix.Amount(100_000-40_000-1000), b[ledger.Available])
		require.Equal(t, pix.Amount(41_000), b[ledger.Pending])
		require.NoError(t, db.CheckLedger(ctx))
	})

	t.Run("Thousands of random postings agree with the pure model", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		clients := []store.Client{NewClient(t, db), NewClient(t, db), NewClient(t, db)}
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

	t.Run("History pages by key, newest first, stable under inserts", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		other := NewClient(t, db)
		var ids []string
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for i := 0; i < 25; i++ {
				typ := store.TypeCashin
				if i%2 == 1 {
					typ = store.TypeCashout
				}
				tr := newTx(c, typ, fmt.Sprintf("e%d", i), pix.Amount(100+i), t0.Add(time.Duration(i/3)*time.Second))
				if _, err := tx.InsertTransaction(ctx, tr); err != nil {
					return err
				}
				ids = append(ids, tr.ID)
				if _, err := tx.InsertTransaction(ctx, newTx(other, typ, fmt.Sprintf("e%d", i), 1, t0)); err != nil {
					return err
				}
			}
			return nil
		}))
		var seen []store.Transaction
		cursor := ""
		for page := 0; ; page++ {
			rows, next, err := db.History(ctx, c.ID, store.HistoryFilter{Limit: 7, Cursor: cursor})
			require.NoError(t, err)
			seen = append(seen, rows...)
			if page == 0 {
				// New rows arriving between pages must not shift later pages.
				require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
					_, err := tx.InsertTransaction(ctx, newTx(c, store.TypeCashin, "late", 1, t0.Add(time.Hour)))
					return err
				}))
			}
			if next == "" {
				break
			}
			cursor = next
		}
		require.Len(t, seen, 25)
		uniq := map[string]bool{}
		for i, tr := range seen {
			require.Equal(t, c.ID, tr.ClientID)
			uniq[tr.ID] = true
			if i > 0 {
				prev := seen[i-1]
				require.True(t, prev.CreatedAt.After(tr.CreatedAt) || (prev.CreatedAt.Equal(tr.CreatedAt) && prev.ID > tr.ID))
			}
		}
		require.Len(t, uniq, 25)

		rows, _, err := db.History(ctx, c.ID, store.HistoryFilter{Limit: 100, Type: store.TypeCashout})
		require.NoError(t, err)
		require.Len(t, rows, 12)
		rows, _, err = db.History(ctx, c.ID, store.HistoryFilter{Limit: 100, From: t0.Add(time.Second), To: t0.Add(3 * time.Second)})
		require.NoError(t, err)
		require.Len(t, rows, 6)
		rows, _, err = db.History(ctx, c.ID, store.HistoryFilter{Limit: 100, Status: "PAID"})
		require.NoError(t, err)
		require.Empty(t, rows)
		_, _, err = db.History(ctx, c.ID, store.HistoryFilter{Limit: 10, Cursor: "!!"})
		require.ErrorIs(t, err, store.ErrBadCursor)
	})

	t.Run("Settlement steps and their events are written for a whole batch at once", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		var ps []store.Transaction
		for i := range 4 {
			p := newPayout(c, fmt.Sprint("settle-", i), t0.Add(time.Second))
			if i == 3 {
				p.ConfirmedAt = t0 // confirmed earlier: a zero Confirmed keeps it
			}
			ps = append(ps, p)
		}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for _, p := range ps {
				if err := tx.CreateTransaction(ctx, p); err != nil {
					return err
				}
			}
			return nil
		}))
		at := t0.Add(time.Minute)
		steps := []store.Settled{
			{ID: ps[0].ID, Status: "PAID", Confirmed: at},
			{ID: ps[1].ID, Status: "CANCELLED"},
			{ID: ps[2].ID, Status: "PAID", Confirmed: at, Next: at.Add(2 * time.Second)},
			{ID: ps[3].ID, Status: "REVERSED"},
		}
		var events []store.Event
		for i, p := range ps {
			events = append(events, store.Event{ID: fmt.Sprint("evt_settle", i), ClientID: c.ID, TransactionID: p.ID, Type: "x",
				URL: "u", Payload: fmt.Sprint(`{"n":`, i, `}`), CreatedAt: at})
		}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			if _, err := tx.ClaimSettlements(ctx, []string{ps[0].ID, ps[1].ID, ps[2].ID, ps[3].ID}, at); err != nil {
				return err
			}
			if err := tx.SetSettledAll(ctx, steps); err != nil {
				return err
			}
			return tx.InsertEvents(ctx, events)
		}))
		for i, p := range ps {
			got, err := db.Transaction(ctx, c.ID, p.ID)
			require.NoError(t, err)
			require.Equal(t, steps[i].Status, got.Status, "payout %d", i)
			want := steps[i].Confirmed
			if i == 3 {
				want = t0
			}
			require.Equal(t, want, got.ConfirmedAt.UTC(), "payout %d", i)
			require.Equal(t, steps[i].Next, got.SettleAt.UTC(), "payout %d", i)
			evs, err := db.Events(ctx, p.ID)
			require.NoError(t, err)
			require.Len(t, evs, 1, "payout %d", i)
			require.Equal(t, events[i].Payload, evs[0].Payload)
			require.Equal(t, "pending", evs[0].Status)
		}
		due, err := db.DueSettlements(ctx, at.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, []string{ps[2].ID}, ids(due), "only the payout to be returned is scheduled again")
	})

	t.Run("Settlement steps guarded by the row as read", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		var ps []store.Transaction
		for i := range 3 {
			p := newPayout(c, fmt.Sprint("guard-", i), t0.Add(time.Duration(i+1)*time.Second))
			ps = append(ps, p)
			_, err := db.InsertTransaction(ctx, p)
			require.NoError(t, err)
		}
		at := t0.Add(time.Minute)
		due, err := db.DueSettlements(ctx, at, 10)
		require.NoError(t, err)
		require.Equal(t, []string{ps[0].ID, ps[1].ID, ps[2].ID}, ids(due), "earliest first, whole rows")
		require.Equal(t, ps[1].Details, due[1].Details)
		require.Equal(t, ps[1].SettleAt, due[1].SettleAt.UTC())
		step := func(t store.Transaction, status string, next time.Time) store.Settled {
			return store.Settled{ID: t.ID, Status: status, Confirmed: at, Next: next, WasStatus: t.Status, WasSettleAt: t.SettleAt}
		}
		// Another node settles the second payout (PAID, returned later)
		// after the rows were read.
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.SetSettledIfUnchanged(ctx, []store.Settled{step(due[1], "PAID", at.Add(time.Hour))})
		}))
		// A batch decided from the stale rows changes nothing, not even the
		// rows that were still as read.
		stale := []store.Settled{step(due[0], "PAID", time.Time{}), step(due[1], "PAID", time.Time{}), step(due[2], "CANCELLED", time.Time{})}
		err = db.Write(ctx, func(tx *store.Tx) error {
			if err := tx.SetSettledIfUnchanged(ctx, stale); err != nil {
				return err
			}
			return tx.InsertEvents(ctx, []store.Event{{ID: "evt_guard", ClientID: c.ID, TransactionID: ps[0].ID, Type: "x", URL: "u", Payload: "{}", CreatedAt: at}})
		})
		require.ErrorIs(t, err, store.ErrChanged)
		for i, want := range []struct {
			status string
			settle time.Time
		}{{"PENDING", ps[0].SettleAt}, {"PAID", at.Add(time.Hour)}, {"PENDING", ps[2].SettleAt}} {
			got, err := db.Transaction(ctx, c.ID, ps[i].ID)
			require.NoError(t, err)
			require.Equal(t, want.status, got.Status, "payout %d", i)
			require.Equal(t, want.settle, got.SettleAt.UTC(), "payout %d", i)
		}
		evs, err := db.Events(ctx, ps[0].ID)
		require.NoError(t, err)
		require.Empty(t, evs, "nothing of the abandoned batch committed")

		// Read again, the same batch applies: the returned payout's next
		// step is decided from its new status and settle_at.
		due, err = db.DueSettlements(ctx, at.Add(2*time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, []string{ps[0].ID, ps[2].ID, ps[1].ID}, ids(due))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.SetSettledIfUnchanged(ctx, []store.Settled{step(due[0], "PAID", time.Time{}), step(due[1], "CANCELLED", time.Time{}), step(due[2], "REVERSED", time.Time{})})
		}))
		for i, want := range []string{"PAID", "REVERSED", "CANCELLED"} {
			got, err := db.Transaction(ctx, c.ID, ps[i].ID)
			require.NoError(t, err)
			require.Equal(t, want, got.Status, "payout %d", i)
			require.True(t, got.SettleAt.IsZero(), "payout %d: nothing left to settle", i)
		}
		due, err = db.DueSettlements(ctx, at.Add(3*time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, due)
	})

	t.Run("Due charges and settlements", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		due := newTx(c, store.TypeCashin, "", 100, t0)
		notDue := newTx(c, store.TypeCashin, "", 100, t0.Add(2*time.Hour))
		payout := newPayout(c, "", t0.Add(time.Second))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for _, tr := range []store.Transaction{due, notDue, payout} {
				if _, err := tx.InsertTransaction(ctx, tr); err != nil {
					return err
				}
			}
			return nil
		}))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			rows, err := tx.DueCharges(ctx, t0.Add(time.Hour), 10)
			require.NoError(t, err)
			require.Len(t, rows, 1)
			require.Equal(t, due.ID, rows[0].ID)
			return nil
		}))
		dueSettle, err := db.DueSettlements(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, []string{payout.ID}, ids(dueSettle))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			got, err := tx.ClaimSettlements(ctx, []string{payout.ID, due.ID, "missing"}, t0.Add(time.Hour))
			require.NoError(t, err)
			require.Len(t, got, 1, "only the scheduled payout is due")
			require.Equal(t, payout.ID, got[0].ID)
			got, err = tx.ClaimSettlements(ctx, []string{payout.ID}, t0) // not due yet at t0
			require.NoError(t, err)
			require.Empty(t, got)
			return tx.SetSettleAt(ctx, payout.ID, time.Time{})
		}))
		dueSettle, err = db.DueSettlements(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, dueSettle, "unscheduled")

		// Refunds are due, claimed and finished the same way, once.
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			_, err := tx.InsertRefund(ctx, store.Refund{ID: "rf-1", ClientID: c.ID, TransactionID: due.ID, RequestHash: "h",
				Status: store.RefundPending, Amount: 10, CreatedAt: t0, SettleAt: t0.Add(time.Second)})
			return err
		}))
		dueRefunds, err := db.DueRefunds(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Equal(t, []store.DueRefund{{ID: "rf-1", ChargeID: due.ID}}, dueRefunds)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			r, ok, err := tx.ClaimRefund(ctx, "rf-1", t0.Add(time.Hour))
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, pix.Amount(10), r.Amount)
			done, err := tx.FinishRefund(ctx, "rf-1", store.RefundCompleted, t0.Add(time.Hour))
			require.True(t, done)
			return err
		}))
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			done, err := tx.FinishRefund(ctx, "rf-1", store.RefundFailed, t0.Add(time.Hour))
			require.False(t, done, "finished once")
			return err
		}))
		dueRefunds, err = db.DueRefunds(ctx, t0.Add(time.Hour), 10)
		require.NoError(t, err)
		require.Empty(t, dueRefunds)
	})

	t.Run("Event leases: one holder at a time, taken over when they run out", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			return tx.InsertEvent(ctx, store.Event{ID: "evt_lease", ClientID: c.ID, TransactionID: "t1", Type: "x", URL: "u", Payload: "{}", CreatedAt: t0})
		}))
		claim := func(owner string, now time.Time) []store.Event {
			var evs []store.Event
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
				kept, err = tx.FinishAttempt(ctx, owner, store.Attempt{ID: "att-" + owner, EventID: "evt_lease", At: t0.Add(14 * time.Second)},
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

	t.Run("Claims take the oldest due events; leased ones wait for their lease, released ones are due again", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for i := range 6 {
				// Inserted newest first, so id and insertion order disagree with due order.
				at := t0.Add(time.Duration(5-i) * time.Second)
				if err := tx.InsertEvent(ctx, store.Event{ID: fmt.Sprint("evt_q", 5-i), ClientID: c.ID, TransactionID: "tq", Type: "x",
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

	t.Run("Concurrent attempt records share transactions and each get their own answer", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		const n = 60
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for i := range n {
				if err := tx.InsertEvent(ctx, store.Event{ID: fmt.Sprint("evt_g", i), ClientID: c.ID, TransactionID: "t1", Type: "x",
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
					Attempt: store.Attempt{ID: fmt.Sprint("att-g", i), EventID: fmt.Sprint("evt_g", i), At: t0, StatusCode: 200 + i, Latency: time.Duration(i) * time.Millisecond}})
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

	t.Run("Events are stored with their transaction", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		ev := store.Event{ID: "evt_1", ClientID: c.ID, TransactionID: "t1", Type: "pix.cashin.paid", URL: "https://x.test/h", Payload: `{"a":1}`, CreatedAt: t0}
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error { return tx.InsertEvent(ctx, ev) }))
		// A rolled-back transaction leaves no event behind.
		boom := errors.New("boom")
		require.ErrorIs(t, db.Write(ctx, func(tx *store.Tx) error {
			if err := tx.InsertEvent(ctx, store.Event{ID: "evt_2", ClientID: c.ID, TransactionID: "t1", Type: "x", URL: "u", Payload: "{}", CreatedAt: t0}); err != nil {
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

// ids are the ids of ts, in order.
func ids(ts []store.Transaction) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.ID
	}
	return out
}
