package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/recurrence"
	"github.com/pixgate/pixgate/internal/store"
)

// MaxClockOffset bounds how far a sandbox client may advance its clock in
// all (docs/api.md, "Sandbox clock"): past a year and a month nothing more is learnt, and
// every date stays far from the calendar's end.
const MaxClockOffset = 400 * 24 * time.Hour

// WithClientClock returns ctx carrying client c's clock: every use case
// called with it reads the time, and the São Paulo date, on c's clock.
func WithClientClock(ctx context.Context, c pix.Client) context.Context {
	return provider.WithClockOffset(ctx, c.ClockOffset)
}

// ClientNow is the current time on client c's clock.
func (s *Service) ClientNow(c pix.Client) time.Time { return s.now().Add(c.ClockOffset) }

// ClientToday is the São Paulo date on client c's clock, by which its
// charges' due terms are priced.
func (s *Service) ClientToday(c pix.Client) pix.Date { return s.dateOf(s.ClientNow(c)) }

// TodayOf is the São Paulo date on the clock of client id as this node
// last read it: for a page that shows one of the client's charges without
// the client's credentials (the payer's page).
func (s *Service) TodayOf(ctx context.Context, id string) pix.Date {
	return s.clocks.Today(s.clocks.For(ctx, id))
}

// ClockView is a sandbox client's clock as the API shows it.
type ClockView struct {
	Now    time.Time
	Offset time.Duration
}

// Clock returns client c's clock. Errors: ENotFound outside the sandbox.
func (x *Sandbox) Clock(ctx context.Context, c pix.Client) (ClockView, error) {
	if x == nil {
		return ClockView{}, pix.Errorf(pix.ENotFound, "Not Found")
	}
	s := x.s
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
func (x *Sandbox) AdvanceClock(ctx context.Context, c pix.Client, d time.Duration) (ClockView, error) {
	if x == nil {
		return ClockView{}, pix.Errorf(pix.ENotFound, "Not Found")
	}
	s := x.s
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
		return tx.ReadingDueNow(ctx, recurrence.CyclesReading)
	})
	if err != nil {
		return ClockView{}, fmt.Errorf("advance clock of %s: %w", c.ID, err)
	}
	if !ok {
		return ClockView{}, clockInvalid(tooFar)
	}
	s.clocks.Forget() // read again at the next look
	s.w.WakeDispatcher()
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
