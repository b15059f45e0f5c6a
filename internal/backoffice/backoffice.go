// Package backoffice holds what the administration panel needs that is not
// the merchant's API: its users, their sessions and the log of login
// attempts; the operators' tools (clients, their credentials and fees, the
// receipts that matched no charge, the suspense balance, the PSP's
// health); and the read-only views an operator or a merchant user looks at
// (the overview, the pages of transactions, one transaction with its
// postings, refunds and webhook attempts). It writes the panel's own
// tables (users, sessions, login attempts) and the clients' settings, and
// never money: every change of a balance goes through gateway's use cases.
// Its reads go to the store directly: they change nothing, so they need
// none of the use cases' transactions and rules (docs/decisions.md).
package backoffice

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// Config is everything a Service is built from; New validates it whole.
type Config struct {
	// DB is the store; required.
	DB *store.DB
	// Env is the environment the clients created here belong to and
	// authenticate in: pix.EnvSandbox or pix.EnvProduction; required.
	Env string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Rand is the source of the panel's ids, passwords and tokens and of
	// the clients' ids and secrets; nil means crypto/rand.
	Rand io.Reader
	// Provider is the PSP, read only for what it has seen of its PSP
	// (PSPHealth); nil means none.
	Provider provider.Provider
}

// Validate reports every problem of c at once, one error per line.
func (c *Config) Validate() error {
	var errs []error
	if c.DB == nil {
		errs = append(errs, errors.New("backoffice: DB is required"))
	}
	if c.Env != pix.EnvSandbox && c.Env != pix.EnvProduction {
		errs = append(errs, fmt.Errorf("backoffice: Env must be sandbox or production, not %q", c.Env))
	}
	return errors.Join(errs...)
}

// Service runs the back office's operations.
type Service struct {
	db       *store.DB
	env      string
	now      func() time.Time
	rand     io.Reader
	provider provider.Provider
}

// New returns the Service c describes, or every problem of c.
func New(c Config) (*Service, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	s := &Service{db: c.DB, env: c.Env, now: c.Now, rand: c.Rand, provider: c.Provider}
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

// stamp is the current time as the clients' rows record it: UTC, to the
// millisecond, as gateway's use cases stamp theirs, so that both databases
// read back the same instant.
func (s *Service) stamp() time.Time { return s.now().UTC().Truncate(time.Millisecond) }
