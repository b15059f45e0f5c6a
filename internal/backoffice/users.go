package backoffice

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/store"
)

// This file holds what the administration panel stores: its users, their
// sessions and the log of login attempts. The panel (internal/admin) owns
// the rules (roles, passwords, rate limits); these operations keep the rows.

// CreateUser stores a new panel user. Errors: ENotFound (u.ClientID names no
// client), EConflict (the e-mail address is taken).
func (s *Service) CreateUser(ctx context.Context, u pix.User) error {
	err := s.db.Write(ctx, func(tx *store.Tx) error {
		if u.ClientID != "" {
			if _, err := tx.Client(ctx, u.ClientID); errors.Is(err, store.ErrNotFound) {
				return pix.Errorf(pix.ENotFound, "client %q not found", u.ClientID)
			} else if err != nil {
				return err
			}
		}
		return tx.InsertUser(ctx, u)
	})
	if errors.Is(err, store.ErrConflict) {
		return pix.Errorf(pix.EConflict, "a user with e-mail %q exists", u.Email)
	}
	if err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	return nil
}

// HasUsers reports whether any panel user exists.
func (s *Service) HasUsers(ctx context.Context) (bool, error) {
	n, err := s.db.CountUsers(ctx)
	if err != nil {
		return false, fmt.Errorf("count users: %w", err)
	}
	return n > 0, nil
}

// CreateFirstUser stores u only when no panel user exists yet and no other
// process has done so (the sandbox's first start); created reports whether
// it did.
func (s *Service) CreateFirstUser(ctx context.Context, u pix.User) (created bool, err error) {
	err = s.db.Write(ctx, func(tx *store.Tx) error {
		created = false
		ok, err := tx.ClaimBootstrap(ctx, "sandbox-admin", s.now().UTC())
		if err != nil || !ok {
			return err
		}
		if n, err := tx.CountUsers(ctx); err != nil || n > 0 {
			return err
		}
		if err := tx.InsertUser(ctx, u); err != nil {
			return err
		}
		created = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("create first user: %w", err)
	}
	return created, nil
}

// UserByEmail returns the panel user with that (lower-case) e-mail address.
// Errors: ENotFound.
func (s *Service) UserByEmail(ctx context.Context, email string) (pix.User, error) {
	u, err := s.db.UserByEmail(ctx, email)
	if errors.Is(err, store.ErrNotFound) {
		return pix.User{}, pix.Errorf(pix.ENotFound, "no user with e-mail %q", email)
	}
	if err != nil {
		return pix.User{}, fmt.Errorf("user by e-mail: %w", err)
	}
	return u, nil
}

// SetUserPassword replaces the user's password hash and ends every session
// of the user, in one transaction, returning how many ended. Errors:
// ENotFound.
func (s *Service) SetUserPassword(ctx context.Context, userID, passwordHash string) (sessionsEnded int64, err error) {
	err = s.db.Write(ctx, func(tx *store.Tx) error {
		sessionsEnded, err = tx.ResetUserPassword(ctx, userID, passwordHash)
		return err
	})
	if errors.Is(err, store.ErrNotFound) {
		return 0, pix.Errorf(pix.ENotFound, "no user %q", userID)
	}
	if err != nil {
		return 0, fmt.Errorf("set user password: %w", err)
	}
	return sessionsEnded, nil
}

// SessionUser returns the live session with that id and its user: one that
// has not expired at now and whose user's client, if any, is active.
// Errors: ENotFound.
func (s *Service) SessionUser(ctx context.Context, sessionID string, now time.Time) (pix.Session, pix.User, error) {
	sess, u, err := s.db.SessionUser(ctx, sessionID, now)
	if errors.Is(err, store.ErrNotFound) {
		return pix.Session{}, pix.User{}, pix.Errorf(pix.ENotFound, "no session")
	}
	if err != nil {
		return pix.Session{}, pix.User{}, fmt.Errorf("session: %w", err)
	}
	return sess, u, nil
}

// LoginLimit is the panel's login rate limit: at most PerPair attempts per
// e-mail and address, and PerIP per address, in any Window.
type LoginLimit struct {
	PerPair, PerIP int
	Window         time.Duration
}

// NoteLoginAttempt records an attempt to log in as email from ip at now,
// unless the limit is already reached: limited reports that, and then
// nothing is recorded. Counting before the password is checked makes
// concurrent guesses count too.
func (s *Service) NoteLoginAttempt(ctx context.Context, email, ip string, now time.Time, l LoginLimit) (limited bool, err error) {
	err = s.db.Write(ctx, func(tx *store.Tx) error {
		limited = false
		pair, fromIP, err := tx.LoginAttempts(ctx, email, ip, now.Add(-l.Window))
		if err != nil {
			return err
		}
		if pair >= l.PerPair || fromIP >= l.PerIP {
			limited = true
			return nil
		}
		return tx.RecordLoginAttempt(ctx, email, ip, now)
	})
	if err != nil {
		return false, fmt.Errorf("note login attempt: %w", err)
	}
	return limited, nil
}

// StartSession stores the session of a successful login, in one
// transaction: it ends the session replaced (replacedID, if not ""), clears
// the attempts of email from ip, and prunes attempts older than window and
// expired sessions.
func (s *Service) StartSession(ctx context.Context, sess pix.Session, replacedID, email, ip string, window time.Duration) error {
	now := sess.CreatedAt
	err := s.db.Write(ctx, func(tx *store.Tx) error {
		if replacedID != "" {
			if err := tx.DeleteSession(ctx, replacedID); err != nil {
				return err
			}
		}
		if err := tx.ClearLoginAttempts(ctx, email, ip); err != nil {
			return err
		}
		if err := tx.PruneLoginAttempts(ctx, now.Add(-window)); err != nil {
			return err
		}
		if _, err := tx.DeleteExpiredSessions(ctx, now); err != nil {
			return err
		}
		return tx.InsertSession(ctx, sess)
	})
	if err != nil {
		return fmt.Errorf("start session: %w", err)
	}
	return nil
}

// EndSession ends a session (logout); ending a missing one is no error.
func (s *Service) EndSession(ctx context.Context, sessionID string) error {
	if err := s.db.Write(ctx, func(tx *store.Tx) error { return tx.DeleteSession(ctx, sessionID) }); err != nil {
		return fmt.Errorf("end session: %w", err)
	}
	return nil
}
