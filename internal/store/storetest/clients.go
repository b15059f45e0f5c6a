package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// exerciseClients runs the behaviours of clients: their rows, secrets and
// status, concurrent reads, and the one-time bootstrap claim.
func exerciseClients(t *testing.T, open Opener) {
	ctx := context.Background()

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
			return tx.SetClientStatus(ctx, c.ID, pix.ClientDisabled)
		}))
		got, err = db.Client(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "ff", got.SecretHash)
		require.Equal(t, pix.ClientDisabled, got.Status)
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
		var clients []pix.Client
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
}
