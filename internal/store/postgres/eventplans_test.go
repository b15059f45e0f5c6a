package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/testkit"
)

// TestEventQueriesReadOnlyTheirFewRows checks the plans of the queries that
// lost their status indexes in migration 7: on a table of delivered events
// with a few pending and failed ones, each reads a partial index holding
// only its few rows, never the whole table.
func TestEventQueriesReadOnlyTheirFewRows(t *testing.T) {
	t.Parallel()
	url := testkit.MigratedPostgresURL(t)
	raw := rawDB(t, url)
	execSQL(t, raw, `INSERT INTO events (id, client_id, transaction_id, type, url, payload, created_at, next_attempt_at, status, attempts)
		SELECT 'evt_' || i, 'c' || (i % 50), 't' || i, 'x', 'u', '{}', i, i,
			CASE WHEN i % 5000 = 0 THEN 'failed' WHEN i % 3000 = 0 THEN 'pending' ELSE 'delivered' END,
			CASE WHEN i % 5000 = 0 OR i % 6000 = 0 THEN 3 ELSE 1 END
		FROM generate_series(1, 60000) i`)
	execSQL(t, raw, `ANALYZE events`)

	for _, c := range []struct{ name, query, index string }{
		// store.Q.FailingEvents, for every client and for one.
		{"failing", `EXPLAIN SELECT id FROM events WHERE (status = 'failed' OR (status = 'pending' AND attempts > 0)) AND ('' = '' OR client_id = '')
			ORDER BY created_at DESC, id DESC LIMIT 20`, "events_failing"},
		{"failing of a client", `EXPLAIN SELECT id FROM events WHERE (status = 'failed' OR (status = 'pending' AND attempts > 0)) AND ('c0' = '' OR client_id = 'c0')
			ORDER BY created_at DESC, id DESC LIMIT 20`, "events_failing"},
		// store.Q.OutboxLag.
		{"lag", `EXPLAIN SELECT COUNT(*), MIN(created_at) FROM events WHERE status = 'pending'`, "events_due"},
		// store.Q.PendingEvents.
		{"pending of clients", `EXPLAIN SELECT COUNT(*) FROM events WHERE status = 'pending' AND client_id IN ('c1', 'c2')`, "events_due"},
	} {
		plan := planIn(t, raw, "", c.query)
		require.Contains(t, plan, c.index, "%s:\n%s", c.name, plan)
		require.NotContains(t, plan, "Seq Scan", "%s:\n%s", c.name, plan)
	}
}
