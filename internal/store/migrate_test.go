package store

import (
	"io/fs"
	"slices"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"
)

// dialects are the databases with a directory of their own migrations.
var dialects = []string{"postgres", "sqlite"}

// versions returns the migration versions of the files in dir of fsys,
// each with its file name.
func versions(t *testing.T, fsys fs.FS, dir string) map[int64]string {
	t.Helper()
	entries, err := fs.ReadDir(fsys, dir)
	require.NoError(t, err)
	out := map[int64]string{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		v, err := goose.NumericComponent(e.Name())
		require.NoError(t, err, "%s/%s is not named as a migration", dir, e.Name())
		require.NotContains(t, out, v, "%s/%s: version %d twice", dir, e.Name(), v)
		out[v] = e.Name()
	}
	return out
}

// TestMigrationFiles: every version a dialect holds on its own, every other
// dialect holds too under the same name (a no-op where the change does not
// apply), no shared version is also a dialect's own, and each dialect's
// merged sequence runs from 1 without a gap.
func TestMigrationFiles(t *testing.T) {
	t.Parallel()
	shared := versions(t, migrationsFS, "migrations")
	require.NotEmpty(t, shared)
	own := map[string]map[int64]string{}
	for _, d := range dialects {
		own[d] = versions(t, migrationsFS, "migrations/"+d)
	}
	for _, d := range dialects {
		for v, name := range own[d] {
			require.NotContains(t, shared, v, "migrations/%s/%s: version %d is also shared (%s)", d, name, v, shared[v])
			for _, other := range dialects {
				require.Equal(t, name, own[other][v], "migrations/%s/%s has no counterpart in migrations/%s/", d, name, other)
			}
		}
	}
	for _, d := range dialects {
		files, err := Migrations(d)
		require.NoError(t, err)
		merged := versions(t, files, ".")
		require.Len(t, merged, len(shared)+len(own[d]), d)
		got := make([]int64, 0, len(merged))
		for v := range merged {
			got = append(got, v)
		}
		slices.Sort(got)
		for i, v := range got {
			require.Equal(t, int64(i+1), v, "%s: versions run from 1 without a gap: %v", d, got)
		}
		for v, name := range merged {
			body, err := fs.ReadFile(files, name)
			require.NoError(t, err, "%s: version %d", d, v)
			require.Contains(t, string(body), "-- +goose Up", "%s/%s", d, name)
		}
	}
	_, err := Migrations("oracle")
	require.Error(t, err, "a dialect without a directory of its own has no migrations")
}
