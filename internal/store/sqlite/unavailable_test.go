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
)

// TestDiskFullIsUnavailable: a real SQLite database that cannot grow (its
// page limit reached, as a full disk stops it) fails writes with an error
// DB.Unavailable tells apart, so the API answers 503 and the loops back
// off; a write the schema refuses is no outage.
func TestDiskFullIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "full.db")+"?_pragma=max_page_count(8)")
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })
	raw.SetMaxOpenConns(1)
	db := store.New(raw, raw, sqlite.Dialect)
	_, err = raw.ExecContext(ctx, `CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)`)
	require.NoError(t, err)
	_, err = raw.ExecContext(ctx, `INSERT INTO t VALUES (1, 'x')`)
	require.NoError(t, err)

	_, err = raw.ExecContext(ctx, `INSERT INTO t VALUES (1, 'again')`)
	require.Error(t, err)
	require.False(t, db.Unavailable(err), "a constraint is not an outage: %v", err)

	var full error
	for i := 2; i < 100 && full == nil; i++ {
		_, full = raw.ExecContext(ctx, `INSERT INTO t VALUES (?, ?)`, i, strings.Repeat("x", 2000))
	}
	require.Error(t, full, "the database fills up")
	require.Contains(t, full.Error(), "full")
	require.True(t, db.Unavailable(full), "%v", full)
	require.True(t, db.Unavailable(store.ErrUnavailable))
	require.False(t, db.Unavailable(nil))
	require.False(t, db.Unavailable(store.ErrNotFound))
}
