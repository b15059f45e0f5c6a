package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseHistory runs the behaviours of a client's transaction history:
// keyset pages, newest first, and its filters.
func exerciseHistory(t *testing.T, open Opener) {
	ctx := context.Background()

	t.Run("History pages by key, newest first, stable under inserts", func(t *testing.T) {
		t.Parallel()
		db := open(t)
		c := NewClient(t, db)
		other := NewClient(t, db)
		var ids []string
		require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
			for i := 0; i < 25; i++ {
				typ := pix.TypeCashin
				if i%2 == 1 {
					typ = pix.TypeCashout
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
		var seen []pix.Transaction
		cursor := ""
		for page := 0; ; page++ {
			rows, next, err := db.History(ctx, c.ID, store.HistoryFilter{Limit: 7, Cursor: cursor})
			require.NoError(t, err)
			seen = append(seen, rows...)
			if page == 0 {
				// New rows arriving between pages must not shift later pages.
				require.NoError(t, db.Write(ctx, func(tx *store.Tx) error {
					_, err := tx.InsertTransaction(ctx, newTx(c, pix.TypeCashin, "late", 1, t0.Add(time.Hour)))
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

		rows, _, err := db.History(ctx, c.ID, store.HistoryFilter{Limit: 100, Type: pix.TypeCashout})
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
}
