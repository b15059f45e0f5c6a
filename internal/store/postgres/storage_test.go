package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// TestStorageMigrations: PostgreSQL's own migrations (migrations/postgres/)
// set its storage parameters — room in events' pages (5), a gentler
// autovacuum (8) and smaller statistics samples (9) on the tables every
// payout writes, room in transactions' pages for a claim (19) — and
// migrating again applies nothing.
func TestStorageMigrations(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testkit.PostgresURL(t)
	db := migrated(t, url)
	raw := rawDB(t, url)

	options := func(table string) []string {
		var opts []string
		rows, err := raw.QueryContext(ctx, `SELECT unnest(coalesce(reloptions, '{}')) FROM pg_class WHERE relname = $1 AND relkind = 'r'`, table)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var o string
			require.NoError(t, rows.Scan(&o))
			opts = append(opts, o)
		}
		require.NoError(t, rows.Err())
		return opts
	}
	for _, table := range []string{"transactions", "events", "postings", "entries", "delivery_attempts"} {
		require.Contains(t, options(table), "autovacuum_vacuum_cost_delay=10", table)
	}
	require.ElementsMatch(t, []string{"fillfactor=70", "autovacuum_vacuum_cost_delay=10"}, options("events"))
	require.ElementsMatch(t, []string{"fillfactor=70", "autovacuum_vacuum_cost_delay=10"}, options("transactions"))
	for _, table := range []string{"accounts", "clients", "refunds", "users", "sessions"} {
		require.Empty(t, options(table), "%s keeps PostgreSQL's defaults", table)
	}

	// targets: each column's statistics target, -1 for the server's default
	// (NULL on PostgreSQL 17).
	targets := func(table string) map[string]int {
		out := map[string]int{}
		rows, err := raw.QueryContext(ctx, `SELECT attname, coalesce(attstattarget, -1) FROM pg_attribute
			WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`, table)
		require.NoError(t, err)
		defer rows.Close()
		for rows.Next() {
			var name string
			var target int
			require.NoError(t, rows.Scan(&name, &target))
			out[name] = target
		}
		require.NoError(t, rows.Err())
		require.NotEmpty(t, out, table)
		return out
	}
	for _, table := range []string{"transactions", "events", "postings", "entries", "delivery_attempts"} {
		for column, target := range targets(table) {
			require.Equal(t, 10, target, "%s.%s", table, column)
		}
	}
	for _, table := range []string{"accounts", "clients", "refunds"} {
		for column, target := range targets(table) {
			require.Equal(t, -1, target, "%s.%s keeps the default", table, column)
		}
	}

	var version int64
	require.NoError(t, raw.QueryRowContext(ctx, `SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&version))
	require.EqualValues(t, 26, version)
	applied, err := db.Migrate(ctx)
	require.NoError(t, err)
	require.Empty(t, applied)
}
