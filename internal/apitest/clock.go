package apitest

import (
	"sync"
	"time"
)

// Clock is a test's time, moved by hand: its Now is Options.Clock. It is safe for concurrent
// use (the API reads it while the test moves it).
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
