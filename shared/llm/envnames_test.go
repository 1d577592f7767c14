package llm_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/llm"
)

// TestEnvNames: EnvNames is exactly what ConfigFromEnv asks for, so that a variable it starts
// reading is also one a provider secret may set.
func TestEnvNames(t *testing.T) {
	asked := map[string]bool{}
	llm.ConfigFromEnv(func(name string) string {
		asked[name] = true
		return "" // every provider unset: ConfigFromEnv still asks for every name
	})
	var names []string
	for name := range asked {
		names = append(names, name)
	}
	assert.ElementsMatch(t, names, llm.EnvNames())

	// Set, the variables lead to different branches; those must ask for no other names.
	llm.ConfigFromEnv(func(name string) string {
		asked[name] = true
		return "127.0.0.1:1"
	})
	for name := range asked {
		assert.Contains(t, llm.EnvNames(), name)
	}
}
