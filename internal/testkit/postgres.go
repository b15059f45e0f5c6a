// Package testkit holds test-only helpers shared by the test suites of
// pixgate: it is imported from _test.go files only, never by production code.
// The Chromium launcher is its own package, testkit/chromium, so that only
// browser tests link chromedp.
package testkit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pixgate/pixgate/internal/store"
	"github.com/pixgate/pixgate/internal/store/postgres"
)

// PostgresURLEnv names the environment variable holding the URL of a
// PostgreSQL server the tests may create databases on, as printed by
// scripts/start-postgres.sh.
const PostgresURLEnv = "PIXGATE_TEST_POSTGRES_URL"

// RequirePostgres ends the test when no PostgreSQL server is configured
// (PIXGATE_TEST_POSTGRES_URL unset or empty): it fails the test when the
// environment variable CI is "true", where PostgreSQL is mandatory, and skips
// it otherwise. It returns only when the variable is set.
func RequirePostgres(t testing.TB) {
	t.Helper()
	if os.Getenv(PostgresURLEnv) != "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(PostgresURLEnv + " is not set; CI requires PostgreSQL")
	}
	t.Skip(PostgresURLEnv + " is not set; skipping test that needs PostgreSQL " +
		"(start one with: export " + PostgresURLEnv + "=$(scripts/start-postgres.sh $(mktemp -d)))")
}

// PostgresURL creates a fresh, empty database named pixgate_test_<16 hex
// digits> on the server of PIXGATE_TEST_POSTGRES_URL and returns a URL for it
// (same host, user and parameters; only the database differs). The database
// is dropped, with any connection still open to it, when the test and its
// subtests end. Each call yields a distinct database, so tests may run in
// parallel. Without a configured server it behaves like RequirePostgres.
// Tests of migrations need it empty; the others want MigratedPostgresURL.
func PostgresURL(t testing.TB) string {
	t.Helper()
	RequirePostgres(t)
	return createDatabase(t, os.Getenv(PostgresURLEnv), "")
}

// MigratedPostgresURL is PostgresURL with every migration already applied:
// the database is created as a copy of a template database that holds the
// migrated schema (CREATE DATABASE … TEMPLATE), which takes a fraction of
// the time of migrating each new database. The template is built once per
// server and set of migrations (see migratedTemplate).
func MigratedPostgresURL(t testing.TB) string {
	t.Helper()
	RequirePostgres(t)
	adminURL := os.Getenv(PostgresURLEnv)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	name, err := TemplateName()
	if err != nil {
		t.Fatalf("testkit: %v", err)
	}
	if err := migratedTemplate(ctx, adminURL, name); err != nil {
		t.Fatalf("testkit: template database %s: %v", name, err)
	}
	return createDatabase(t, adminURL, name)
}

// createDatabase creates a database with a fresh random name on the server
// of adminURL, as a copy of template (the server's default when ""), drops
// it when the test ends and returns its URL.
func createDatabase(t testing.TB, adminURL, template string) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	name := "pixgate_test_" + hex.EncodeToString(b[:])
	dbURL, err := withDatabase(adminURL, name)
	if err != nil {
		t.Fatalf("testkit: %s: %v", PostgresURLEnv, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	create := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		create += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if err := adminExec(ctx, adminURL, create); err != nil {
		t.Fatalf("testkit: creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		// t.Context() is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := adminExec(ctx, adminURL, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("testkit: dropping database %s: %v", name, err)
		}
	})
	return dbURL
}

// TemplateName is the name of the template database of the current
// migrations: pixgate_tmpl_ and 16 hex digits of a SHA-256 over the
// PostgreSQL migration files' names and contents, so that a changed or added
// migration gets a template of its own and a stale one is never copied.
func TemplateName() (string, error) {
	files, err := store.Migrations("postgres")
	if err != nil {
		return "", err
	}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return "", fmt.Errorf("migrations: %w", err)
	}
	h := sha256.New()
	for _, e := range entries { // sorted by name
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			return "", fmt.Errorf("migrations: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	return "pixgate_tmpl_" + hex.EncodeToString(h.Sum(nil)[:8]), nil
}

// templateLock is the advisory lock key under which a template database is
// built, so that test binaries running at once on one server build it once.
const templateLock = 0x70697867 // "pixg"

// migratedTemplate makes sure the server of adminURL holds the template
// database name with every migration applied. A template is finished once
// it is marked IS_TEMPLATE (and closed to connections, so that nothing can
// change it or keep a copy from being made); one found unmarked is what a
// test binary killed while building it left behind, and is built again.
// Templates stay on the server for the next runs.
func migratedTemplate(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	ready := func() (bool, error) {
		var ok bool
		err := conn.QueryRow(ctx, "SELECT datistemplate FROM pg_database WHERE datname = $1", name).Scan(&ok)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		return ok, err
	}
	if ok, err := ready(); err != nil || ok {
		return err
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", templateLock); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", templateLock) }()
	if ok, err := ready(); err != nil || ok { // built while this one waited
		return err
	}
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return err
	}
	dbURL, err := withDatabase(adminURL, name)
	if err != nil {
		return err
	}
	db, err := postgres.Open(ctx, dbURL, 1)
	if err != nil {
		return err
	}
	_, err = db.Migrate(ctx)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "ALTER DATABASE "+ident+" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false")
	return err
}

// adminExec runs one statement on a short-lived connection to the server's
// administrative database; no connection is held between calls.
func adminExec(ctx context.Context, adminURL, sql string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns connString with its database replaced by name. It
// accepts URLs, including the socket form
// postgres://user@/db?host=/socket/dir whose host lives in the query, and
// keyword/value strings ("host=... dbname=...").
func withDatabase(connString, name string) (string, error) {
	if !strings.HasPrefix(connString, "postgres://") && !strings.HasPrefix(connString, "postgresql://") {
		if strings.Contains(connString, "://") || !strings.Contains(connString, "=") {
			return "", fmt.Errorf("not a PostgreSQL URL or keyword/value string: %q", connString)
		}
		// In keyword/value form the last occurrence of a keyword wins.
		return connString + " dbname=" + name, nil
	}
	u, err := url.Parse(connString)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	u.RawPath = ""
	if q := u.Query(); q.Has("dbname") {
		// pgx lets a dbname query parameter override the path.
		q.Set("dbname", name)
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}
