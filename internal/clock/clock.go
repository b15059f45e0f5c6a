// Package clock owns the time every use case reads: the real time, and a
// sandbox client's clock, which is the real time plus an offset stored on
// its row (docs/decisions.md, "A sandbox client's clock"). Everything of
// that client is written and compared on its clock: a request carries the
// offset in its context (provider.WithClockOffset), and a background job
// that handles the client's rows puts it there (For) before calling
// anything, the sandbox provider included. In production no client has an
// offset and nothing here reads the database.
package clock

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/pixgate/pixgate/internal/pix"
	"github.com/pixgate/pixgate/internal/provider"
	"github.com/pixgate/pixgate/internal/store"
)

// Refresh bounds how stale this node's view of the clients' clocks may
// be: an advance made through another node is seen by this node's
// background jobs within it (well within the 5 s the contract allows).
const Refresh = time.Second

// Clients is this node's view of the clients whose clock runs ahead, read
// at most every Refresh.
type Clients struct {
	// DB is where the clocks are stored.
	DB *store.DB
	// Log receives a failed reading.
	Log *slog.Logger
	// Real is the real time.
	Real func() time.Time
	// Advancing reports whether clients' clocks may run ahead here (the
	// sandbox with payers on request); otherwise none is ever read.
	Advancing func() bool
	// Loc is America/Sao_Paulo, whose calendar dates charges and payments.
	Loc *time.Location

	mu   sync.Mutex
	read time.Time // real time of the last reading; zero before the first
	list []store.ClientClock
	m    map[string]time.Duration
}

// Now is the real time, in UTC to the millisecond, as rows store it.
func (c *Clients) Now() time.Time { return c.Real().UTC().Truncate(time.Millisecond) }

// At is the current time on the clock of the client ctx is for (its
// offset put there by a request or by For): the real time when it carries
// none.
func (c *Clients) At(ctx context.Context) time.Time {
	return c.Now().Add(provider.ClockOffset(ctx))
}

// Today is the São Paulo date on the clock of the client ctx is for.
func (c *Clients) Today(ctx context.Context) pix.Date { return c.DateOf(c.At(ctx)) }

// DateOf is the São Paulo calendar date of t.
func (c *Clients) DateOf(t time.Time) pix.Date { return pix.DateOf(t.In(c.Loc)) }

// Advanced returns the clients whose clock runs ahead, read again when
// the last reading is older than Refresh. Where clocks do not advance it
// is empty without a query, which keeps production's jobs as they are. A
// reading that fails keeps the last one (and is logged).
func (c *Clients) Advanced(ctx context.Context) []store.ClientClock {
	if c.Advancing == nil || !c.Advancing() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.read.IsZero() && time.Since(c.read) < Refresh {
		return c.list
	}
	list, err := c.DB.ClientClocks(ctx)
	if err != nil {
		if ctx.Err() == nil {
			c.Log.WarnContext(ctx, "could not read the sandbox clients' clocks; using the last reading", "error", err.Error())
		}
		return c.list
	}
	c.read, c.list = time.Now(), list
	c.m = make(map[string]time.Duration, len(list))
	for _, cc := range list {
		c.m[cc.ClientID] = cc.Offset
	}
	return list
}

// Offset is client id's clock offset as this node last read it, without
// reading the database (it is called inside transactions).
func (c *Clients) Offset(id string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id]
}

// Forget makes the next look read the clocks again (one was advanced).
func (c *Clients) Forget() {
	c.mu.Lock()
	c.read = time.Time{}
	c.mu.Unlock()
}

// For returns ctx carrying the clock of client id, for a background job
// about to handle one of its rows.
func (c *Clients) For(ctx context.Context, id string) context.Context {
	if c.Advanced(ctx) == nil {
		return ctx
	}
	return provider.WithClockOffset(ctx, c.Offset(id))
}

// Each calls read for every client whose clock runs ahead, with ctx
// carrying that client's clock and at its current time, and returns what
// they read after first: the work a job finds due on those clients' clocks
// beyond what it found due on the real clock (which every client's clock
// has reached: clocks only move forward). Duplicates of first are left
// out. A read that fails is logged and left for the job's next look, so
// that one client's rows never hold up what was read for everyone.
func Each[T any](c *Clients, ctx context.Context, first []T, key func(T) string,
	read func(ctx context.Context, cc store.ClientClock, now time.Time) ([]T, error)) []T {
	clocks := c.Advanced(ctx)
	if len(clocks) == 0 {
		return first
	}
	seen := make(map[string]bool, len(first))
	for _, v := range first {
		seen[key(v)] = true
	}
	for _, cc := range clocks {
		more, err := read(provider.WithClockOffset(ctx, cc.Offset), cc, c.Now().Add(cc.Offset))
		if err != nil && ctx.Err() == nil {
			c.Log.WarnContext(ctx, "could not read the work due on a sandbox client's clock", "client", cc.ClientID, "error", err.Error())
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
