package postgres_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/postgres"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestClaimPlanKeepsTheOrderedIndexScan reproduces what made claiming
// webhook events expensive under load: statistics taken while no event was
// pending, then a backlog of due events. The planner then reads every due
// event and sorts them for each claim; with the dialect's ClaimPlan it
// walks the due index in order and stops at the limit.
func TestClaimPlanKeepsTheOrderedIndexScan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testkit.MigratedPostgresURL(t)
	raw := rawDB(t, url)
	exec := func(q string) { execSQL(t, raw, q) }
	// Analyzed while 2 events in 2,000 were pending; then 20,000 fall due,
	// their next attempts out of insertion order (retries, leases).
	exec(`INSERT INTO events (id, client_id, transaction_id, type, url, payload, created_at, next_attempt_at, status)
		SELECT 'evt_d' || i, 'c', 't', 'x', 'u', '{}', i, (i * 7919) % 2000, CASE WHEN i % 700 = 0 THEN 'pending' ELSE 'delivered' END
		FROM generate_series(1, 2000) i`)
	exec(`ANALYZE events`)
	exec(`INSERT INTO events (id, client_id, transaction_id, type, url, payload, created_at, next_attempt_at)
		SELECT 'evt_p' || i, 'c', 't', 'x', 'u', '{}', 2000 + i, 2000 + (i * 7919) % 20000 FROM generate_series(1, 20000) i`)

	// The claim's inner query (store.Tx.ClaimEvents), as a custom plan.
	const claim = `EXPLAIN SELECT id FROM events WHERE status = 'pending' AND next_attempt_at <= 99999 AND lease_until <= 99999
		ORDER BY next_attempt_at LIMIT 32 FOR UPDATE SKIP LOCKED`
	plan := func(setup string) string { return planIn(t, raw, setup, claim) }
	def := plan("")
	t.Logf("default plan:\n%s", def)
	require.Contains(t, def, "Sort", "the statistics no longer mislead the planner; this test no longer shows the problem")

	var opts string
	require.NoError(t, raw.QueryRowContext(ctx, `SELECT coalesce(array_to_string(reloptions, ','), '') FROM pg_class WHERE relname = 'events'`).Scan(&opts))
	require.Contains(t, opts, "fillfactor=70", "room in events' pages for HOT lease updates (migration 5)")

	got := plan(postgres.ClaimPlan)
	require.NotContains(t, got, "Sort", got)
	require.NotContains(t, got, "Bitmap", got)
	require.Contains(t, got, "Index Scan using events_due", got)
}

// migrated opens the database at url through pixgate, applies the
// migrations and returns it (closed with the test).
func migrated(t *testing.T, url string) *store.DB {
	t.Helper()
	db := openPG(t, url)
	_, err := db.Migrate(context.Background())
	require.NoError(t, err)
	return db
}

// openPG opens the database at url through pixgate (closed with the test).
func openPG(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, 4)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// rawDB is a plain database/sql handle on url, for what a test does
// behind pixgate's back.
func rawDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("pgx", url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })
	return raw
}

// execSQL runs q on raw.
func execSQL(t *testing.T, raw *sql.DB, q string) {
	t.Helper()
	_, err := raw.ExecContext(context.Background(), q)
	require.NoError(t, err)
}

// planIn returns the plan of the EXPLAIN statement q in a transaction that
// first runs setup (none when "") and is then rolled back.
func planIn(t *testing.T, raw *sql.DB, setup, q string) string {
	t.Helper()
	ctx := context.Background()
	tx, err := raw.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	if setup != "" {
		_, err = tx.ExecContext(ctx, setup)
		require.NoError(t, err)
	}
	return explain(t, tx, q)
}

func explain(t *testing.T, tx *sql.Tx, q string) string {
	t.Helper()
	rows, err := tx.QueryContext(context.Background(), q)
	require.NoError(t, err)
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		require.NoError(t, rows.Scan(&l))
		lines = append(lines, l)
	}
	require.NoError(t, rows.Err())
	return strings.Join(lines, "\n")
}
