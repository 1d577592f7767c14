package testlog

import (
	"bytes"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
)

// recorder is a testing.TB whose output is a buffer, so that a test can read what Capture
// sent to it.
type recorder struct {
	testing.TB
	out      bytes.Buffer
	cleanups []func()
}

func (r *recorder) Output() io.Writer { return &r.out }
func (r *recorder) Cleanup(f func())  { r.cleanups = append(r.cleanups, f) }
func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestCapture: a line logged while a test captures goes to that test's output, the latest
// one's when two capture; once a test ends, its output gets nothing more.
func TestCapture(t *testing.T) {
	first, second := &recorder{TB: t}, &recorder{TB: t}
	Capture(first)
	slog.Info("request", "path", "/one")
	Capture(second)
	slog.Info("request", "path", "/two")
	second.end()
	slog.Info("request", "path", "/three")
	first.end()

	assert.Contains(t, first.out.String(), `"path":"/one"`)
	assert.NotContains(t, first.out.String(), `"path":"/two"`)
	assert.Contains(t, first.out.String(), `"path":"/three"`)
	assert.Contains(t, second.out.String(), `"path":"/two"`)
	assert.NotContains(t, second.out.String(), `"path":"/three"`)
	assert.Contains(t, first.out.String(), `"level":"INFO"`, "production's JSON format")
}
