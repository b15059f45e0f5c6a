package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store/storetest"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestAccountsMigration: migration 26 keeps every column, index and row
// of the tables it changes (storetest).
func TestAccountsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testkit.PostgresURL(t)
	db := openPG(t, url)
	raw := rawDB(t, url)
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
		return strs(t, `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`, table),
			strs(t, `SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1`, table)
	})
}
