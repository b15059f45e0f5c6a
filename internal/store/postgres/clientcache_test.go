package postgres_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/storetest"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestClientsInMemory: two processes' views of one database, each with its
// own store.DB. Node A and node B authenticate from memory (WatchClients);
// the writer changes clients through the store as the CLI does. A change
// returns only once both nodes dropped the client, so the very next read on
// either sees it — every time, not just eventually. A change made behind
// the store's back (plain SQL, no announcement) is not seen, which shows
// the clients really come from memory. If a node's listening connection is
// cut, it reads the database again until it listens again.
func TestClientsInMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testkit.MigratedPostgresURL(t)
	writer := openPG(t, url)
	raw := rawDB(t, url)

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	nodes := []*store.DB{openPG(t, url), openPG(t, url)}
	for _, n := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.WatchClients(wctx, log) }()
	}

	c := storetest.NewClient(t, writer)
	// behindTheBackBy and readBy fail through tt: the test, or the
	// collector of a condition that runs in a goroutine of its own.
	behindTheBackBy := func(tt require.TestingT, hash string) {
		_, err := raw.ExecContext(ctx, `UPDATE clients SET secret_hash = $2 WHERE id = $1`, c.ID, hash)
		require.NoError(tt, err)
	}
	readBy := func(tt require.TestingT, n *store.DB) pix.Client {
		got, err := n.Client(ctx, c.ID)
		require.NoError(tt, err)
		return got
	}
	behindTheBack := func(hash string) { behindTheBackBy(t, hash) }
	read := func(n *store.DB) pix.Client { return readBy(t, n) }
	// cached waits until node n serves the client from memory: a change
	// made behind the store's back stays unseen.
	cached := func(n *store.DB) {
		t.Helper()
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			want := readBy(ct, n).SecretHash
			behindTheBackBy(ct, want+"-unannounced")
			defer behindTheBackBy(ct, want)
			assert.Equal(ct, want, readBy(ct, n).SecretHash)
		}, 10*time.Second, 20*time.Millisecond, "the node never served the client from memory")
	}
	for _, n := range nodes {
		cached(n)
	}

	for i := range 30 {
		hash := fmt.Sprintf("hash-%d", i)
		require.NoError(t, writer.Write(ctx, func(tx *store.Tx) error { return tx.SetClientSecret(ctx, c.ID, hash) }))
		for k, n := range nodes {
			require.Equal(t, hash, read(n).SecretHash, "round %d, node %d: a rotated secret is seen at once", i, k)
		}
	}
	cached(nodes[0])
	require.NoError(t, writer.Write(ctx, func(tx *store.Tx) error {
		return tx.SetClientFees(ctx, c.ID, pix.FeeRule{PercentBP: 99}, pix.FeeRule{Fixed: 200})
	}))
	require.Equal(t, pix.FeeRule{Fixed: 200}, read(nodes[0]).PayoutFee, "changed fees are seen at once")
	require.NoError(t, writer.Write(ctx, func(tx *store.Tx) error {
		return tx.SetWebhookSecret(ctx, c.ID, "whsec_new", time.Now().Add(time.Hour))
	}))
	require.Equal(t, "whsec_new", read(nodes[0]).WebhookSecret, "a rotated webhook secret is seen at once")
	require.NoError(t, writer.Write(ctx, func(tx *store.Tx) error { return tx.SetClientStatus(ctx, c.ID, pix.ClientDisabled) }))
	for k, n := range nodes {
		require.Equal(t, pix.ClientDisabled, read(n).Status, "node %d: a disabled client is seen at once", k)
	}

	// Node A's listening connection is cut: until it listens again, it
	// reads the database (it can no longer hear changes).
	cached(nodes[0])
	_, err := raw.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'pixgate-clients'`)
	require.NoError(t, err)
	behindTheBack("while-deaf")
	require.EventuallyWithT(t, func(ct *assert.CollectT) { assert.Equal(ct, "while-deaf", readBy(ct, nodes[0]).SecretHash) }, 5*time.Second, 10*time.Millisecond,
		"a node that cannot hear changes must not answer from memory")
	// It listens again, and changes reach it at once again.
	cached(nodes[0])
	require.NoError(t, writer.Write(ctx, func(tx *store.Tx) error { return tx.SetClientSecret(ctx, c.ID, "after-reconnect") }))
	require.Equal(t, "after-reconnect", read(nodes[0]).SecretHash)
}
