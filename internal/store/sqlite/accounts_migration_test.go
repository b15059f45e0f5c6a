package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store/sqlite"
	"github.com/pixgate/pixgate/internal/store/storetest"
)

// TestAccountsMigration: migration 26 rebuilds transactions and accounts
// without losing a column, an index or a row (storetest).
func TestAccountsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pixgate.db")
	db, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	raw, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })
	strs := func(t *testing.T, q string, args ...any) []string {
		rows, err := raw.QueryContext(ctx, q, args...)
		require.NoError(t, err)
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			require.NoError(t, rows.Scan(&s))
			out = append(out, s)
		}
		require.NoError(t, rows.Err())
		return out
	}
	storetest.ExerciseAccountsMigration(t, db, func(t *testing.T, table string) ([]string, []string) {
		return strs(t, `SELECT name FROM pragma_table_info(?)`, table),
			strs(t, `SELECT name || ': ' || sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`, table)
	})
}
