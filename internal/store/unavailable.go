package store

import (
	"database/sql/driver"
	"errors"
	"net"
	"syscall"
)

// ErrUnavailable marks an error as the database being out of reach; a
// caller may wrap it where no driver error is left to recognise.
var ErrUnavailable = errors.New("store: database unavailable")

// Unavailable reports whether err says that the database cannot be reached
// or cannot store anything now (connection refused or reset, the server
// shutting down, a disk full, an I/O error), as opposed to a request that
// is wrong or a row that does not fit: nothing a client or a job can fix,
// only waiting until the database is back. This is the one place that
// tells those errors apart (docs/production.md, "Outages of the database").
func (db *DB) Unavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	if db.d.Unreachable != nil && db.d.Unreachable(err) {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.ENETUNREACH, syscall.EHOSTUNREACH, syscall.ENOSPC, syscall.EIO} {
		if errors.Is(err, errno) {
			return true
		}
	}
	// A dial that failed in any other way (a PostgreSQL socket whose file is
	// gone while the server is down, a name that does not resolve).
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
