// Package emutest runs real Lambda bootstraps in tests: it builds a function's main package for
// the host and starts it under the Runtime API emulator.
package emutest

import (
	"context"
	"fmt"
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
	require.NoError(t, Build(pkg, bin))
	emu, err := lambdaemu.Start(ctx, lambdaemu.Config{Binary: bin, Env: env, Stdout: t.Output(), Stderr: t.Output()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = emu.Close() })
	return emu
}

// Build builds the Lambda main package pkg for this host into bin, as the Makefile builds it
// for Lambda (static, lambda.norpc).
func Build(pkg, bin string) error {
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", bin, pkg)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w: %s", pkg, err, out)
	}
	return nil
}
