package postgres_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/postgres"
	"github.com/pixgate/pixgate/internal/testkit"
)

// TestOutageIsUnavailable: on a real PostgreSQL, a server that is not
// there (no socket) and a connection the server ends (an administrator's
// pg_terminate_backend, as a shutdown does) are told apart by
// DB.Unavailable; an error of the query itself is not.
func TestOutageIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw, err := sql.Open("pgx", testkit.MigratedPostgresURL(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = raw.Close() })
	db := store.New(raw, raw, postgres.Dialect)

	gone, err := postgres.Open(ctx, "postgres://postgres@/postgres?host=/nonexistent-pixgate&sslmode=disable&connect_timeout=2", 1)
	if err == nil {
		t.Cleanup(func() { _ = gone.Close() })
		err = gone.Ping(ctx)
	}
	require.Error(t, err)
	require.True(t, db.Unavailable(err), "no server: %v", err)

	conn, err := raw.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	var pid int
	require.NoError(t, conn.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
	other, err := raw.Conn(ctx)
	require.NoError(t, err)
	_, err = other.ExecContext(ctx, `SELECT pg_terminate_backend($1)`, pid)
	require.NoError(t, err)
	other.Close()
	_, err = conn.ExecContext(ctx, `SELECT 1`)
	require.Error(t, err)
	require.True(t, db.Unavailable(err), "terminated: %v", err)

	_, err = raw.ExecContext(ctx, `SELECT 1/0`)
	require.Error(t, err)
	require.False(t, db.Unavailable(err), "a query's own error: %v", err)
}
