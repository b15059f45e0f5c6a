package redis

import (
	"context"
	"fmt"
	"log/slog"

	goredis "github.com/redis/go-redis/v9"
)

// SetDriverLogger sends the go-redis driver's own log lines (it prints one
// to stderr for every failed dial, i.e. on every request during an outage)
// to l at debug level; nil discards them. It affects every go-redis client
// in the process, so call it once at start. Allow's errors carry the same
// information for the caller to log as it sees fit.
func SetDriverLogger(l *slog.Logger) {
	goredis.SetLogger(driverLogger{l})
}

type driverLogger struct{ l *slog.Logger }

// Printf implements go-redis's internal Logging interface.
func (d driverLogger) Printf(ctx context.Context, format string, v ...any) {
	if d.l == nil {
		return
	}
	d.l.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}
