package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// MaxClockOffset bounds how far a sandbox client may advance its clock in
// all (docs/api.md, "Sandbox clock"): past a year and a month nothing more is learnt, and
// every date stays far from the calendar's end.
const MaxClockOffset = 400 * 24 * time.Hour

// clockRefresh bounds how stale this node's view of the clients' clocks
// may be: an advance made through another node is seen by this node's
// background jobs within it (well within the 5 s the contract allows).
const clockRefresh = time.Second

// A sandbox client's clock is the real time plus an offset stored on its
// row (docs/decisions.md, "A sandbox client's clock"). Everything of that
// client is written and compared on its clock: a request carries the
// offset in its context (WithClientClock), and a background job that
// handles the client's rows puts it there (forClient) before calling
// anything, the sandbox provider included. In production no client has an
// offset and nothing here reads the database.

// clientClocks is this node's view of the clients whose clock runs ahead,
// read at most every clockRefresh.
type clientClocks struct {
	mu   sync.Mutex
	read time.Time // real time of the last reading; zero before the first
	list []store.ClientClock
	m    map[string]time.Duration
}

// WithClientClock returns ctx carrying client c's clock: every use case
// called with it reads the time, and the São Paulo date, on c's clock.
func WithClientClock(ctx context.Context, c pix.Client) context.Context {
	return provider.WithClockOffset(ctx, c.ClockOffset)
}

// clock is the current time on the clock of the client ctx is for
// (WithClientClock, forClient): the real time when it carries none.
func (s *Service) clock(ctx context.Context) time.Time {
	return s.now().Add(provider.ClockOffset(ctx))
}

// todayFor is the São Paulo date on the clock of the client ctx is for.
func (s *Service) todayFor(ctx context.Context) pix.Date { return s.dateOf(s.clock(ctx)) }

// ClientNow is the current time on client c's clock.
func (s *Service) ClientNow(c pix.Client) time.Time { return s.now().Add(c.ClockOffset) }

// ClientToday is the São Paulo date on client c's clock, by which its
// charges' due terms are priced.
func (s *Service) ClientToday(c pix.Client) pix.Date { return s.dateOf(s.ClientNow(c)) }

// TodayOf is the São Paulo date on the clock of client id as this node
// last read it: for a page that shows one of the client's charges without
// the client's credentials (the payer's page).
func (s *Service) TodayOf(ctx context.Context, id string) pix.Date {
	return s.todayFor(s.forClient(ctx, id))
}

// advancedClocks returns the clients whose clock runs ahead, read again
// when the last reading is older than clockRefresh. Outside the sandbox it
// is empty without a query, which keeps production's jobs as they are. A
// reading that fails keeps the last one (and is logged).
func (s *Service) advancedClocks(ctx context.Context) []store.ClientClock {
	if !s.SandboxPayments() {
		return nil
	}
	cc := s.clocks
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !cc.read.IsZero() && time.Since(cc.read) < clockRefresh {
		return cc.list
	}
	list, err := s.db.ClientClocks(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.Log.WarnContext(ctx, "could not read the sandbox clients' clocks; using the last reading", "error", err.Error())
		}
		return cc.list
	}
	cc.read, cc.list = time.Now(), list
	cc.m = make(map[string]time.Duration, len(list))
	for _, c := range list {
		cc.m[c.ClientID] = c.Offset
	}
	return list
}

// offsetOf is client id's clock offset as this node last read it, without
// reading the database (it is called inside transactions).
func (s *Service) offsetOf(id string) time.Duration {
	cc := s.clocks
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.m[id]
}

// forClient returns ctx carrying the clock of client id, for a background
// job about to handle one of its rows.
func (s *Service) forClient(ctx context.Context, id string) context.Context {
	if s.advancedClocks(ctx) == nil {
		return ctx
	}
	return provider.WithClockOffset(ctx, s.offsetOf(id))
}

// eachClock calls read for every client whose clock runs ahead, with ctx
// carrying that client's clock and at its current time, and returns what
// they read after first: the work a job finds due on those clients' clocks
// beyond what it found due on the real clock (which every client's clock
// has reached: clocks only move forward). Duplicates of first are left
// out. A read that fails is logged and left for the job's next look, so
// that one client's rows never hold up what was read for everyone.
func eachClock[T any](s *Service, ctx context.Context, first []T, key func(T) string,
	read func(ctx context.Context, c store.ClientClock, now time.Time) ([]T, error)) []T {
	clocks := s.advancedClocks(ctx)
	if len(clocks) == 0 {
		return first
	}
	seen := make(map[string]bool, len(first))
	for _, v := range first {
		seen[key(v)] = true
	}
	for _, c := range clocks {
		more, err := read(provider.WithClockOffset(ctx, c.Offset), c, s.now().Add(c.Offset))
		if err != nil && ctx.Err() == nil {
			s.Log.WarnContext(ctx, "could not read the work due on a sandbox client's clock", "client", c.ClientID, "error", err.Error())
		}
		for _, v := range more {
			if !seen[key(v)] {
				seen[key(v)] = true
				first = append(first, v)
			}
		}
	}
	return first
}

// ClockView is a sandbox client's clock as the API shows it.
type ClockView struct {
	Now    time.Time
	Offset time.Duration
}

// Clock returns client c's clock. Errors: ENotFound outside the sandbox.
func (s *Service) Clock(ctx context.Context, c pix.Client) (ClockView, error) {
	if !s.SandboxPayments() {
		return ClockView{}, pix.Errorf(pix.ENotFound, "Not Found")
	}
	cur, err := s.db.Client(ctx, c.ID)
	if err != nil {
		return ClockView{}, fmt.Errorf("clock of %s: %w", c.ID, err)
	}
	return ClockView{Now: s.ClientNow(cur), Offset: cur.ClockOffset}, nil
}

// AdvanceClock moves client c's clock forward by d, which must be positive
// and keep the clock within MaxClockOffset of the real time. This node's
// jobs see it at once, every other node's within clockRefresh. Errors:
// EInvalid (with details), ENotFound outside the sandbox.
func (s *Service) AdvanceClock(ctx context.Context, c pix.Client, d time.Duration) (ClockView, error) {
	if !s.SandboxPayments() {
		return ClockView{}, pix.Errorf(pix.ENotFound, "Not Found")
	}
	d = d.Truncate(time.Millisecond)
	if d <= 0 {
		return ClockView{}, clockInvalid("must be a positive duration of at least 1ms")
	}
	if d > MaxClockOffset {
		return ClockView{}, clockInvalid(tooFar)
	}
	var offset time.Duration
	var ok bool
	err := s.db.Write(ctx, func(tx *store.Tx) (err error) {
		if offset, ok, err = tx.AdvanceClock(ctx, c.ID, d, MaxClockOffset); err != nil || !ok {
			return err
		}
		// The cycle job runs at most every RecurrenceEvery: the next look
		// takes the windows this advance opened.
		return tx.ReadingDueNow(ctx, recurrenceCycles)
	})
	if err != nil {
		return ClockView{}, fmt.Errorf("advance clock of %s: %w", c.ID, err)
	}
	if !ok {
		return ClockView{}, clockInvalid(tooFar)
	}
	s.clocks.mu.Lock()
	s.clocks.read = time.Time{} // read again at the next look
	s.clocks.mu.Unlock()
	s.wake()
	c.ClockOffset = offset
	return ClockView{Now: s.ClientNow(c), Offset: offset}, nil
}

// tooFar says why an advance was refused for its size.
const tooFar = "the clock may run at most 400 days (9600h) ahead in all"

// clockInvalid is the 400 of a bad advance.
func clockInvalid(issue string) error {
	return &pix.Error{Code: pix.EInvalid, Message: "Invalid request parameters",
		Details: []pix.FieldIssue{{Field: "advance", Issue: issue}}}
}
