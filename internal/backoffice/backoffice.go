// Package backoffice holds what the administration panel needs that is not
// money: its users, their sessions and the log of login attempts, and the
// read-only views an operator or a merchant user looks at (the overview,
// the pages of transactions, one transaction with its postings, refunds and
// webhook attempts). It writes only the panel's own tables (users,
// sessions, login attempts); every change of money or of a client goes
// through gateway's use cases. Its reads go to the store directly: they
// change nothing, so they need none of the use cases' transactions and
// rules (docs/decisions.md).
package backoffice

import (
	"crypto/rand"
	"errors"
	"io"
	"time"

	"github.com/pixgate/pixgate/internal/store"
)

// Config is everything a Service is built from.
type Config struct {
	// DB is the store; required.
	DB *store.DB
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Rand is the source of the panel's ids, passwords and tokens; nil
	// means crypto/rand.
	Rand io.Reader
}

// Service runs the back office's operations.
type Service struct {
	db   *store.DB
	now  func() time.Time
	rand io.Reader
}

// New returns the Service c describes.
func New(c Config) (*Service, error) {
	if c.DB == nil {
		return nil, errors.New("backoffice: DB is required")
	}
	s := &Service{db: c.DB, now: c.Now, rand: c.Rand}
	if s.now == nil {
		s.now = time.Now
	}
	if s.rand == nil {
		s.rand = rand.Reader
	}
	return s, nil
}

// Now returns the back office's current time: the panel's clock, injected
// so that tests can move it.
func (s *Service) Now() time.Time { return s.now() }

// Rand returns the source the panel draws ids, passwords and tokens from.
func (s *Service) Rand() io.Reader { return s.rand }
