package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/postgres"
	"github.com/pixgate/pixgate/internal/store/storetest"
	"github.com/pixgate/pixgate/internal/testkit"
)

func TestStore(t *testing.T) {
	t.Parallel()
	open := func(t *testing.T) *store.DB {
		db, err := postgres.Open(context.Background(), testkit.MigratedPostgresURL(t), 8)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	storetest.Exercise(t, open)
	storetest.ExerciseAdmin(t, open)
	storetest.ExerciseMigrations(t, func(t *testing.T) *store.DB {
		db, err := postgres.Open(context.Background(), testkit.PostgresURL(t), 8)
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db
	})
}
