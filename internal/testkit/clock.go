package testkit

import (
	"sync/atomic"
	"time"
)

// Clock is a fake clock for the gateway's injected Now: the real clock plus
// an offset the test moves forward, so expiry and settlement are reached
// without sleeping while timestamps still advance between calls. The zero
// value reads the real time; it is safe for concurrent use.
type Clock struct{ offset atomic.Int64 }

// Now returns the real time plus the offset.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// Set moves the clock so that it reads t now (and runs on from there).
func (c *Clock) Set(t time.Time) { c.offset.Store(int64(time.Until(t))) }
