package storetest

import (
	"context"
	"errors"
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

// exercisePayouts runs the behaviours of grouped payout creation
// (DB.CreatePayout).
func exercisePayouts(t *testing.T, open Opener) {
	ctx := context.Background()

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
		payout := func(c pix.Client, ext string, amount, tax pix.Amount, i int) store.NewPayout {
			tr := newTx(c, pix.TypeCashout, ext, amount, t0.Add(time.Duration(i)*time.Millisecond))
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
			// A posting keeps its payout's time unless a movement of the
			// account applied before it is later (groups commit in any order).
			require.False(t, posts[0].CreatedAt.Before(a.p.Transaction.CreatedAt), "a posting is never earlier than its payout")
			require.False(t, posts[0].CreatedAt.After(t0.Add(99*time.Millisecond)), "a posting is never later than the latest payout")
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
				require.False(t, posts[0].CreatedAt.Before(tr.CreatedAt), "a posting is never earlier than its payout")
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
		requireBalances(t, db, poor.ID, 0, 1000)
		requireBalances(t, db, rich.ID, 100_000-40_000-1000, 41_000)
		require.NoError(t, db.CheckLedger(ctx))
	})
}
