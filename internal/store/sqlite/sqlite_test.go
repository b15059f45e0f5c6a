package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/sqlite"
	"github.com/pixgate/pixgate/internal/store/storetest"
)

func TestStore(t *testing.T) {
	t.Parallel()
	open := func(t *testing.T) *store.DB {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sub", "pixgate.db"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		_, err = db.Migrate(context.Background())
		require.NoError(t, err)
		return db
	}
	storetest.Exercise(t, open)
	storetest.ExerciseAdmin(t, open)
	storetest.ExerciseMigrations(t, func(t *testing.T) *store.DB {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "pixgate.db"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db
	})
}

func TestPath(t *testing.T) {
	t.Parallel()
	require.Equal(t, "./data/pixgate.db", sqlite.Path("./data/pixgate.db"))
	require.Equal(t, "/tmp/x.db", sqlite.Path("sqlite:///tmp/x.db"))
	require.Equal(t, "rel/x.db", sqlite.Path("sqlite://rel/x.db"))
}

// TestEventQueriesReadOnlyTheirFewRows: as on PostgreSQL, the event queries
// that lost their status indexes in migration 7 read the partial index
// holding only their rows.
func TestEventQueriesReadOnlyTheirFewRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pixgate.db")
	db, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	_, err = db.Migrate(ctx)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer raw.Close()
	for _, c := range []struct {
		query string
		args  []any
		index string
	}{
		{`SELECT id FROM events WHERE (status = 'failed' OR (status = 'pending' AND attempts > 0)) AND (?1 = '' OR client_id = ?1)
			ORDER BY created_at DESC, id DESC LIMIT 20`, []any{"c1"}, "events_failing"},
		{`SELECT COUNT(*), MIN(created_at) FROM events WHERE status = 'pending'`, nil, "events_due"},
		{`SELECT COUNT(*) FROM events WHERE status = 'pending' AND client_id IN (?1, ?2)`, []any{"c1", "c2"}, "events_due"},
		// The panel's every-client disputes page (store.DisputeHistory with AllClients).
		{`SELECT id FROM disputes WHERE 1 = 1 AND status = ?1 AND (opened_at, id) < (?2, ?3) ORDER BY opened_at DESC, id DESC LIMIT ?4`,
			[]any{"OPEN", 1, "d1", 51}, "disputes_opened"},
	} {
		rows, err := raw.QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.query, c.args...)
		require.NoError(t, err)
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, rows.Err())
		rows.Close()
		require.Contains(t, strings.Join(plan, "\n"), "USING INDEX "+c.index, "%s\n%v", c.query, plan)
	}
}
