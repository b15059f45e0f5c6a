package store

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/pressly/goose/v3"
)

// The schema's migrations are SQL files applied by goose, numbered in one
// sequence that both databases share: version N is the same step on SQLite
// and on PostgreSQL, and goose_db_version records the same versions on both.
//
//   - migrations/*.sql hold the steps whose one SQL text serves both
//     databases (most of them).
//   - migrations/postgres/ and migrations/sqlite/ hold the steps that differ
//     by database, one file per database under the same version. A step
//     that only one database has (PostgreSQL's storage parameters: versions
//     5, 8 and 9) is a file that changes nothing (SELECT 1) on the other, so
//     the sequence has no gap on either.
//
// Migrations merges the shared files with the dialect's own into the one
// directory goose reads; TestMigrationFiles keeps the layout whole.
//
//go:embed migrations/*.sql migrations/postgres/*.sql migrations/sqlite/*.sql
var migrationsFS embed.FS

// Migrations returns the migration files applied on the named dialect
// ("sqlite" or "postgres"): the shared files of migrations/ and those of
// migrations/<dialect>/, as one flat directory.
func Migrations(dialect string) (fs.FS, error) {
	own, err := fs.Sub(migrationsFS, path.Join("migrations", dialect))
	if err != nil {
		return nil, fmt.Errorf("migrations of %q: %w", dialect, err)
	}
	if _, err := fs.ReadDir(own, "."); err != nil {
		return nil, fmt.Errorf("migrations of %q: %w", dialect, err)
	}
	shared, err := fs.Sub(migrationsFS, "migrations")
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return mergedDir{shared, own}, nil
}

// mergedDir shows the files (not the subdirectories) of several
// directories as one, because goose reads its migrations from one.
type mergedDir []fs.FS

// Open opens the file name from the first directory that holds it.
func (m mergedDir) Open(name string) (fs.File, error) {
	if name != "." && !strings.Contains(name, "/") {
		for _, dir := range m {
			f, err := dir.Open(name)
			if !errors.Is(err, fs.ErrNotExist) {
				return f, err
			}
		}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// ReadDir lists the files of every directory, sorted by name. A name in two
// of them is an error: one version would hide the other.
func (m mergedDir) ReadDir(name string) ([]fs.DirEntry, error) {
	if name != "." {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	var out []fs.DirEntry
	seen := map[string]bool{}
	for _, dir := range m {
		entries, err := fs.ReadDir(dir, ".")
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.IsDir() {
				continue
			}
			if seen[e.Name()] {
				return nil, fmt.Errorf("migration %s is both shared and a dialect's own", e.Name())
			}
			seen[e.Name()] = true
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// Migrate applies every pending migration and returns the versions it
// applied. Concurrent callers on one PostgreSQL serialize on an advisory lock.
func (db *DB) Migrate(ctx context.Context) ([]int64, error) {
	return db.MigrateTo(ctx, math.MaxInt64)
}

// MigrateTo applies the pending migrations up to and including version, as
// Migrate does: an upgrade in steps, and the tests of a migration's effect
// on rows written before it.
func (db *DB) MigrateTo(ctx context.Context, version int64) ([]int64, error) {
	files, err := Migrations(db.d.Name)
	if err != nil {
		return nil, err
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	if db.d.Locker != nil {
		l, err := db.d.Locker()
		if err != nil {
			return nil, fmt.Errorf("migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(l))
	}
	p, err := goose.NewProvider(db.d.Goose, db.writer, files, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	res, err := p.UpTo(ctx, version)
	if err != nil {
		return nil, fmt.Errorf("apply migrations: %w", err)
	}
	applied := make([]int64, 0, len(res))
	for _, r := range res {
		applied = append(applied, r.Source.Version)
	}
	return applied, nil
}
