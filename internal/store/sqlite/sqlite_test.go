package sqlite_test

import (
	"context"
	"path/filepath"
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
}

func TestPath(t *testing.T) {
	t.Parallel()
	require.Equal(t, "./data/pixgate.db", sqlite.Path("./data/pixgate.db"))
	require.Equal(t, "/tmp/x.db", sqlite.Path("sqlite:///tmp/x.db"))
	require.Equal(t, "rel/x.db", sqlite.Path("sqlite://rel/x.db"))
}
