package testkit

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/postgres"
	"github.com/pixgate/pixgate/internal/store/sqlite"
)

// Opener returns a fresh, migrated, empty database for one test.
type Opener func(t *testing.T) *store.DB

// OpenSQLite returns a fresh migrated SQLite database in the test's temp
// dir, closed when the test ends.
func OpenSQLite(t *testing.T) *store.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "pixgate.db"))
	if err != nil {
		t.Fatal(err)
	}
	return migrated(t, db)
}

// OpenPostgres returns a fresh migrated PostgreSQL database, a copy of the
// migrated template (see MigratedPostgresURL), closed when the test ends.
func OpenPostgres(t *testing.T) *store.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), MigratedPostgresURL(t), 16)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// OpenPostgresURL opens and migrates the PostgreSQL database at url — a
// second node's pool on the same database, for instance.
func OpenPostgresURL(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := postgres.Open(context.Background(), url, 16)
	if err != nil {
		t.Fatal(err)
	}
	return migrated(t, db)
}

func migrated(t *testing.T, db *store.DB) *store.DB {
	t.Helper()
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// Databases runs fn as parallel subtests "sqlite" and "postgres", each with
// an opener of fresh databases of that kind.
func Databases(t *testing.T, fn func(t *testing.T, open Opener)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); fn(t, OpenSQLite) })
	t.Run("postgres", func(t *testing.T) { t.Parallel(); fn(t, OpenPostgres) })
}

// OpenURL opens the database behind a --database-url value (a SQLite path
// or sqlite:// URL, or a PostgreSQL URL) directly, as an auditor would,
// without migrating it; it is closed when the test ends.
func OpenURL(t testing.TB, dbURL string) *store.DB {
	t.Helper()
	var db *store.DB
	var err error
	if strings.HasPrefix(dbURL, "postgres") {
		db, err = postgres.Open(context.Background(), dbURL, 4)
	} else {
		db, err = sqlite.Open(context.Background(), sqlite.Path(dbURL))
	}
	if err != nil {
		t.Fatalf("testkit: opening the database: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
