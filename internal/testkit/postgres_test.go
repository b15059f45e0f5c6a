package testkit

import (
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/postgres"
)

func connect(t *testing.T, connString string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), connString)
	if err != nil {
		t.Fatalf("connect %q: %v", connString, err)
	}
	return conn
}

func currentDatabase(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var name string
	if err := conn.QueryRow(t.Context(), "SELECT current_database()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestPostgresURLConnectsToFreshDistinctDatabases(t *testing.T) {
	seen := map[string]bool{}
	for range 2 {
		u := PostgresURL(t)
		conn := connect(t, u)
		name := currentDatabase(t, conn)
		if !strings.HasPrefix(name, "pixgate_test_") || len(name) != len("pixgate_test_")+16 {
			t.Errorf("database name %q, want pixgate_test_<16 hex digits>", name)
		}
		if seen[name] {
			t.Errorf("database %q returned twice", name)
		}
		seen[name] = true

		var tables int
		if err := conn.QueryRow(t.Context(),
			"SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil {
			t.Fatal(err)
		}
		if tables != 0 {
			t.Errorf("fresh database %s has %d tables", name, tables)
		}
		if _, err := conn.Exec(t.Context(), "CREATE TABLE t (id int)"); err != nil {
			t.Fatal(err)
		}
		conn.Close(context.Background())
	}
	if len(seen) != 2 {
		t.Errorf("got %d distinct databases from 2 calls", len(seen))
	}
}

func TestPostgresURLDropsDatabaseAfterCleanup(t *testing.T) {
	RequirePostgres(t)

	var name string
	var lingering *pgx.Conn
	t.Run("user", func(t *testing.T) {
		lingering = connect(t, PostgresURL(t))
		// Deliberately left open when the cleanup drops the database:
		// DROP DATABASE ... WITH (FORCE) must not be blocked by it.
		name = currentDatabase(t, lingering)
	})
	if t.Failed() {
		return
	}
	defer lingering.Close(context.Background())

	admin := connect(t, os.Getenv(PostgresURLEnv))
	defer admin.Close(context.Background())
	var n int
	if err := admin.QueryRow(t.Context(),
		"SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after the subtest's cleanup", name)
	}
	if err := lingering.Ping(t.Context()); err == nil {
		t.Errorf("connection to dropped database %s is still alive", name)
	}
}

// recorder is a testing.TB whose Fatal and Skip record the message and end
// the calling goroutine, as the real ones do, without ending the real test.
type recorder struct {
	testing.TB
	fatal, skip string
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatal(args ...any)     { r.fatal = fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Skip(args ...any)      { r.skip = fmt.Sprint(args...); runtime.Goexit() }
func (r *recorder) Fatalf(string, ...any) { r.fatal = "Fatalf"; runtime.Goexit() }
func (r *recorder) Skipf(string, ...any)  { r.skip = "Skipf"; runtime.Goexit() }

// run calls f with a recorder on its own goroutine and reports whether f
// returned normally (rather than through Fatal or Skip).
func run(t *testing.T, f func(testing.TB)) (r *recorder, returned bool) {
	r = &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
		returned = true
	}()
	<-done
	return r, returned
}

func TestWithoutPostgresFailsInCIAndSkipsElsewhere(t *testing.T) {
	for _, fn := range []struct {
		name string
		f    func(testing.TB)
	}{
		{"RequirePostgres", RequirePostgres},
		{"PostgresURL", func(tb testing.TB) { PostgresURL(tb) }},
		{"MigratedPostgresURL", func(tb testing.TB) { MigratedPostgresURL(tb) }},
	} {
		t.Run(fn.name, func(t *testing.T) {
			t.Setenv(PostgresURLEnv, "")

			t.Setenv("CI", "true")
			r, returned := run(t, fn.f)
			if returned || r.fatal != "PIXGATE_TEST_POSTGRES_URL is not set; CI requires PostgreSQL" || r.skip != "" {
				t.Errorf("CI=true: returned=%v fatal=%q skip=%q; want the CI failure", returned, r.fatal, r.skip)
			}

			t.Setenv("CI", "")
			r, returned = run(t, fn.f)
			if returned || r.fatal != "" || !strings.HasPrefix(r.skip, "PIXGATE_TEST_POSTGRES_URL is not set") {
				t.Errorf("CI unset: returned=%v fatal=%q skip=%q; want a skip", returned, r.fatal, r.skip)
			}
		})
	}
}

func TestWithDatabase(t *testing.T) {
	const name = "pixgate_test_0123456789abcdef"
	for _, tc := range []struct{ in, want string }{
		{
			"postgres://postgres@/postgres?host=/tmp/tmp.AbC&sslmode=disable",
			"postgres://postgres@/" + name + "?host=/tmp/tmp.AbC&sslmode=disable",
		},
		{
			"postgres://postgres@/?host=/tmp/x",
			"postgres://postgres@/" + name + "?host=/tmp/x",
		},
		{
			"postgresql://u:p%40ss@db.example:5433/app?sslmode=require",
			"postgresql://u:p%40ss@db.example:5433/" + name + "?sslmode=require",
		},
		{
			"postgres://u@localhost",
			"postgres://u@localhost/" + name,
		},
		{
			"postgres://u@localhost/app?dbname=other&sslmode=disable",
			"postgres://u@localhost/" + name + "?dbname=" + name + "&sslmode=disable",
		},
		{
			"host=/tmp/x user=postgres dbname=postgres",
			"host=/tmp/x user=postgres dbname=postgres dbname=" + name,
		},
	} {
		got, err := withDatabase(tc.in, name)
		if err != nil || got != tc.want {
			t.Errorf("withDatabase(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if cfg, err := pgx.ParseConfig(got); err != nil || cfg.Database != name {
			t.Errorf("pgx.ParseConfig(%q): database %q, err %v; want %q", got, cfg.Database, err, name)
		}
	}
	for _, bad := range []string{"mysql://u@h/db", "not a url"} {
		if got, err := withDatabase(bad, name); err == nil {
			t.Errorf("withDatabase(%q) = %q, want an error", bad, got)
		}
	}
}

func TestPostgresURLInParallel(t *testing.T) {
	RequirePostgres(t)
	for i := range 8 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			conn := connect(t, PostgresURL(t))
			defer conn.Close(context.Background())
			if _, err := conn.Exec(t.Context(), "CREATE TABLE t (id int PRIMARY KEY)"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// schemaVersion returns the latest migration recorded in the database of
// conn, and how many tables it has.
func schemaVersion(t *testing.T, conn *pgx.Conn) (version int64, tables int) {
	t.Helper()
	if err := conn.QueryRow(t.Context(), "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables == 0 {
		return 0, 0
	}
	if err := conn.QueryRow(t.Context(), "SELECT max(version_id) FROM goose_db_version").Scan(&version); err != nil {
		t.Fatal(err)
	}
	return version, tables
}

// latestMigration is the version of the newest migration file.
func latestMigration(t *testing.T) int64 {
	t.Helper()
	files, err := store.Migrations("postgres")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		t.Fatal(err)
	}
	var v int64
	if _, err := fmt.Sscanf(entries[len(entries)-1].Name(), "%d_", &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestMigratedPostgresURLInParallel: parallel calls each get a distinct
// database holding every migration, copied from one template, and what one
// test writes is not seen by another.
func TestMigratedPostgresURLInParallel(t *testing.T) {
	RequirePostgres(t)
	want := latestMigration(t)
	for i := range 6 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			u := MigratedPostgresURL(t)
			conn := connect(t, u)
			defer conn.Close(context.Background())
			version, tables := schemaVersion(t, conn)
			if version != want || tables == 0 {
				t.Fatalf("database at migration %d with %d tables, want migration %d", version, tables, want)
			}
			// Each copy is its own: in a shared database the second
			// subtest's CREATE TABLE would fail.
			if _, err := conn.Exec(t.Context(), "CREATE TABLE isolation (id int)"); err != nil {
				t.Fatal(err)
			}
			// Migrating a copy applies nothing.
			db, err := postgres.Open(t.Context(), u, 1)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if applied, err := db.Migrate(t.Context()); err != nil || len(applied) != 0 {
				t.Errorf("Migrate on a copy applied %v, %v; want nothing", applied, err)
			}
		})
	}
}

// TestTemplateNameFollowsMigrations: the template's name is derived from
// the migration files, so a run on changed migrations builds a new one.
func TestTemplateNameFollowsMigrations(t *testing.T) {
	name, err := TemplateName()
	if err != nil {
		t.Fatal(err)
	}
	again, err := TemplateName()
	if err != nil || again != name {
		t.Fatalf("TemplateName() = %q, %v then %q", name, err, again)
	}
	if !strings.HasPrefix(name, "pixgate_tmpl_") || len(name) != len("pixgate_tmpl_")+16 {
		t.Errorf("template name %q, want pixgate_tmpl_<16 hex digits>", name)
	}
}

// TestMigratedTemplateRebuildsAnUnfinishedOne: a template database left
// without its IS_TEMPLATE mark (a test binary killed while building it) is
// built again, and a finished one is closed to connections.
func TestMigratedTemplateRebuildsAnUnfinishedOne(t *testing.T) {
	RequirePostgres(t)
	adminURL := os.Getenv(PostgresURLEnv)
	name := "pixgate_tmpl_test_" + strings.ToLower(rand.Text()[:8])
	ident := pgx.Identifier{name}.Sanitize()
	admin := connect(t, adminURL)
	defer admin.Close(context.Background())
	t.Cleanup(func() {
		ctx := context.Background()
		_, _ = admin.Exec(ctx, "ALTER DATABASE "+ident+" WITH IS_TEMPLATE false")
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
	})
	if _, err := admin.Exec(t.Context(), "CREATE DATABASE "+ident); err != nil {
		t.Fatal(err)
	}
	u, err := withDatabase(adminURL, name)
	if err != nil {
		t.Fatal(err)
	}
	half := connect(t, u) // half-built: one table, no mark
	if _, err := half.Exec(t.Context(), "CREATE TABLE leftover (id int)"); err != nil {
		t.Fatal(err)
	}
	half.Close(context.Background())

	if err := migratedTemplate(t.Context(), adminURL, name); err != nil {
		t.Fatal(err)
	}
	var isTemplate, allowConn bool
	if err := admin.QueryRow(t.Context(), "SELECT datistemplate, datallowconn FROM pg_database WHERE datname = $1", name).
		Scan(&isTemplate, &allowConn); err != nil {
		t.Fatal(err)
	}
	if !isTemplate || allowConn {
		t.Errorf("template %s: datistemplate %v, datallowconn %v; want true, false", name, isTemplate, allowConn)
	}
	copied := createDatabase(t, adminURL, name)
	conn := connect(t, copied)
	defer conn.Close(context.Background())
	if version, _ := schemaVersion(t, conn); version != latestMigration(t) {
		t.Errorf("copy of the rebuilt template at migration %d, want %d", version, latestMigration(t))
	}
	var leftover bool
	if err := conn.QueryRow(t.Context(), "SELECT to_regclass('leftover') IS NOT NULL").Scan(&leftover); err != nil {
		t.Fatal(err)
	}
	if leftover {
		t.Error("the unfinished template was copied, not rebuilt")
	}
	// Built already: a second call changes nothing.
	if err := migratedTemplate(t.Context(), adminURL, name); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkMigratedDatabase compares the two ways of getting a migrated
// database for a test: create an empty one and migrate it, or copy the
// migrated template (docs/decisions.md has the figures).
func BenchmarkMigratedDatabase(b *testing.B) {
	RequirePostgres(b)
	b.Run("migrate", func(b *testing.B) {
		for b.Loop() {
			db, err := postgres.Open(b.Context(), PostgresURL(b), 1)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := db.Migrate(b.Context()); err != nil {
				b.Fatal(err)
			}
			_ = db.Close()
		}
	})
	b.Run("template", func(b *testing.B) {
		MigratedPostgresURL(b) // the template, built outside the measure
		for b.Loop() {
			MigratedPostgresURL(b)
		}
	})
}
