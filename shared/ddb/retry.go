package ddb

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff returns a full-jitter delay for retry attempt n (1-based): uniform in
// [0, min(2ms * 2^n, 100ms)). Writers contending on one counter spread out instead of
// colliding again in lockstep.
func backoff(n int) time.Duration {
	ceiling := min(2*time.Millisecond<<min(n, 10), 100*time.Millisecond)
	return rand.N(ceiling) + time.Millisecond
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
