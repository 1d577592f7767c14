package optimize_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/optimize"
)

// TestTransitions: every pair of states, allowed or a conflict.
func TestTransitions(t *testing.T) {
	states := []string{optimize.StatusQueued, optimize.StatusRunning, optimize.StatusSucceeded, optimize.StatusFailed, optimize.StatusCancelled}
	allowed := map[[2]string]bool{
		{optimize.StatusQueued, optimize.StatusRunning}:    true,
		{optimize.StatusQueued, optimize.StatusCancelled}:  true,
		{optimize.StatusQueued, optimize.StatusFailed}:     true,
		{optimize.StatusRunning, optimize.StatusSucceeded}: true,
		{optimize.StatusRunning, optimize.StatusFailed}:    true,
		{optimize.StatusRunning, optimize.StatusCancelled}: true,
	}
	for _, from := range states {
		for _, to := range states {
			err := optimize.CheckTransition(from, to)
			if allowed[[2]string{from, to}] {
				assert.NoError(t, err, "%s -> %s", from, to)
			} else {
				assert.Equal(t, errs.CodeConflict, errs.CodeOf(err), "%s -> %s", from, to)
			}
		}
		assert.Equal(t, from != optimize.StatusQueued && from != optimize.StatusRunning, optimize.Final(from), from)
	}
}
