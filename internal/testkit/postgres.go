// Package testkit holds test-only helpers shared by the test suites of
// pixgate: it is imported from _test.go files only, never by production code.
// The Chromium launcher is its own package, testkit/chromium, so that only
// browser tests link chromedp.
package testkit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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
func PostgresURL(t testing.TB) string {
	t.Helper()
	RequirePostgres(t)
	adminURL := os.Getenv(PostgresURLEnv)

	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand since Go 1.24)
	name := "pixgate_test_" + hex.EncodeToString(b[:])
	dbURL, err := withDatabase(adminURL, name)
	if err != nil {
		t.Fatalf("testkit: %s: %v", PostgresURLEnv, err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := adminExec(ctx, adminURL, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
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
