package clock

import (
	"sync"
	"time"
)

// Backoffs remembers, per key, when a failed attempt may be tried again;
// its zero value is ready to use and safe for concurrent use.
type Backoffs struct {
	mu   sync.Mutex
	next map[string]time.Time
}

// Ready reports whether key's wait is over; a wait that is over is
// forgotten, so that keys nobody asks about again do not pile up.
func (b *Backoffs) Ready(key string, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	until, ok := b.next[key]
	if ok && !now.Before(until) {
		delete(b.next, key)
	}
	return !now.Before(until)
}

// Wait makes key wait until until.
func (b *Backoffs) Wait(key string, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next == nil {
		b.next = make(map[string]time.Time)
	}
	b.next[key] = until
}

// Done forgets key's wait.
func (b *Backoffs) Done(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.next, key)
}
