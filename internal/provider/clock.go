package provider

import (
	"context"
	"time"
)

// clockKey carries, in a call's context, how far the clock of the client
// the call is for runs ahead of the real time (a sandbox client's clock).
type clockKey struct{}

// WithClockOffset returns ctx carrying offset: a provider that keeps time
// itself (the sandbox's settlement and approval timers) reads the time of
// the client a call is for as its real time plus offset. A real PSP's time
// is its own, so its providers ignore it.
func WithClockOffset(ctx context.Context, offset time.Duration) context.Context {
	if offset == 0 && ClockOffset(ctx) == 0 {
		return ctx
	}
	return context.WithValue(ctx, clockKey{}, offset)
}

// ClockOffset is the offset ctx carries (WithClockOffset); zero when none.
func ClockOffset(ctx context.Context) time.Duration {
	d, _ := ctx.Value(clockKey{}).(time.Duration)
	return d
}
