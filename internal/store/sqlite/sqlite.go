// Package sqlite opens a pixgate database on SQLite (modernc.org/sqlite, pure
// Go): WAL journal, synchronous=FULL so a commit survives power loss, a busy
// timeout, and a single writer connection so writes never contend.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/pressly/goose/v3"
	msqlite "modernc.org/sqlite"

	"github.com/pixgate/pixgate/internal/store"
)

// SQLite extended result codes this package classifies.
const (
	codeBusy             = 5
	codeIOErr            = 10
	codeFull             = 13
	codeCantOpen         = 14
	codeConstraintCheck  = 275
	codeConstraintPK     = 1555
	codeConstraintUnique = 2067
)

var dialect = &store.Dialect{
	Name:         "sqlite",
	GroupInserts: 1, // one writer connection: one group at a time
	GroupPayouts: 1,
	Goose:        goose.DialectSQLite3,
	Classify: func(err error) error {
		var e *msqlite.Error
		if errors.As(err, &e) {
			switch e.Code() {
			case codeConstraintUnique, codeConstraintPK:
				return fmt.Errorf("%w: %w", store.ErrConflict, err)
			case codeConstraintCheck:
				return fmt.Errorf("%w: %w", store.ErrInsufficientFunds, err)
			}
		}
		return err
	},
	Retryable: func(err error) bool {
		var e *msqlite.Error
		return errors.As(err, &e) && e.Code()&0xff == codeBusy
	},
	// A disk full, an I/O error, a file that cannot be opened: the database
	// cannot store anything until the operator acts.
	Unreachable: func(err error) bool {
		var e *msqlite.Error
		if !errors.As(err, &e) {
			return false
		}
		switch e.Code() & 0xff {
		case codeIOErr, codeFull, codeCantOpen:
			return true
		}
		return false
	},
}

// Path returns the file path named by a database setting: a plain path, or
// sqlite://path (sqlite:///abs/path for an absolute one).
func Path(dsn string) string {
	if rest, ok := strings.CutPrefix(dsn, "sqlite://"); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		return rest
	}
	return dsn
}

// Open opens (creating it and its directory if needed) the SQLite database
// at path. It does not migrate; call Migrate.
func Open(ctx context.Context, path string) (*store.DB, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("create database directory: %w", err)
		}
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	base := "file:" + (&url.URL{Path: path}).EscapedPath()
	wq := url.Values{"_pragma": q["_pragma"], "_txlock": {"immediate"}}
	writer, err := sql.Open("sqlite", base+"?"+wq.Encode())
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := writer.PingContext(ctx); err != nil {
		_ = writer.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	rq := url.Values{"_pragma": append(q["_pragma"], "query_only(ON)")}
	reader, err := sql.Open("sqlite", base+"?"+rq.Encode())
	if err != nil {
		_ = writer.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	n := max(2, runtime.GOMAXPROCS(0)*2)
	reader.SetMaxOpenConns(n)
	reader.SetMaxIdleConns(n)
	reader.SetConnMaxIdleTime(0)
	return store.New(writer, reader, dialect), nil
}
