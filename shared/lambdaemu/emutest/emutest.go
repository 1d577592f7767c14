// Package emutest runs real Lambda bootstraps in tests: it builds a function's main package for
// the host and starts it under the Runtime API emulator.
package emutest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/lambdaemu"
)

// Start builds the Lambda main package pkg (a path relative to the test's directory) as a
// bootstrap, as the Makefile does but for this host, and runs it under the emulator with env
// until the test ends.
func Start(t testing.TB, ctx context.Context, pkg string, env []string) *lambdaemu.Emulator {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bootstrap")
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", bin, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "build %s: %s", pkg, out)
	emu, err := lambdaemu.Start(ctx, lambdaemu.Config{Binary: bin, Env: env, Stdout: t.Output(), Stderr: t.Output()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = emu.Close() })
	return emu
}
