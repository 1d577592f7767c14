package feedback

import (
	"sync"
	"time"
)

// Unknown link tokens cost a read each. A client (a source address) that tries more than
// MaxUnknownTokens of them within a minute is refused (429) without a read for the rest of that
// minute, on that instance: a cheap brake on guessing, not a global limit (each warm Lambda
// instance counts alone; tokens are 256 random bits, so guessing cannot succeed anyway).
const MaxUnknownTokens = 20

// maxTrackedClients bounds the limiter's memory; past it, new clients are not counted.
const maxTrackedClients = 10000

// missLimiter counts unknown tokens per client in the current minute.
type missLimiter struct {
	mu     sync.Mutex
	minute int64
	counts map[string]int
}

// roll starts a new count when now is in a later minute than the counts. m.mu is held.
func (m *missLimiter) roll(now time.Time) {
	if minute := now.Unix() / 60; minute != m.minute || m.counts == nil {
		m.minute, m.counts = minute, map[string]int{}
	}
}

// blocked reports whether client has used up its unknown tokens of the minute of now.
func (m *missLimiter) blocked(client string, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll(now)
	return m.counts[client] >= MaxUnknownTokens
}

// miss counts one unknown token of client.
func (m *missLimiter) miss(client string, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.roll(now)
	if _, ok := m.counts[client]; ok || len(m.counts) < maxTrackedClients {
		m.counts[client]++
	}
}
