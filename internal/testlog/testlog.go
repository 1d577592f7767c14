// Package testlog sends what a test process logs through slog's default logger (the API's
// request lines, metrics lines, warnings and errors) to the output of the test that caused it,
// testing.TB.Output, so that a passing test prints nothing and a failing one shows its own
// lines beside its failure, in `go test -v` and in the output of a failing package alike.
// Production logging is untouched: the Lambda mains and plume-local install their own logger.
//
// The test harnesses that start the API (internal/apitest) call Capture; a test that logs
// without them can call it too. Lines logged when no capturing test runs go to standard
// error, as before. Tests running in parallel share the default logger: a line goes to the
// latest of them that is still running, so under t.Parallel a line may show beside another
// test's failure, never nowhere.
package testlog

import (
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/plumehq/plume/shared/web"
)

var (
	install sync.Once
	mu      sync.Mutex
	// outputs are the outputs of the capturing tests that have not ended, the latest last.
	outputs []io.Writer
)

// Capture sends the default logger's lines to t's output from now until t's cleanup, in the
// format production logs in (JSON with the request id, at info).
func Capture(t testing.TB) {
	install.Do(func() { slog.SetDefault(web.NewLogger(router{}, slog.LevelInfo)) })
	out := t.Output()
	mu.Lock()
	outputs = append(outputs, out)
	mu.Unlock()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if i := slices.Index(outputs, out); i >= 0 {
			outputs = slices.Delete(outputs, i, i+1)
		}
	})
}

// router writes each line to the latest capturing test's output, or to standard error when no
// such test is running. It holds the lock while writing, so that no line reaches a test's
// output after the test has ended (which the testing package refuses with a panic).
type router struct{}

func (router) Write(p []byte) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	if len(outputs) == 0 {
		return os.Stderr.Write(p)
	}
	return outputs[len(outputs)-1].Write(p)
}
