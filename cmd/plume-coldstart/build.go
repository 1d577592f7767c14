package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
)

// hello is the logical id the table gives the hello world.
const hello = "hello world"

// helloTarget is the make target that builds the hello world with the Makefile's own
// LAMBDA_BUILD (added with --eval, so that its flags are the functions' to the letter).
const helloTarget = "build-ColdstartHello: ; $(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./cmd/plume-coldstart/hello"

// buildTarget is a function's target in the Makefile, as infra's drift test requires it.
var buildTarget = regexp.MustCompile(`(?m)^build-(\w+):\n\t\$\(LAMBDA_BUILD\) -o \$\(ARTIFACTS_DIR\)/bootstrap (\./\S+)$`)

// readTargets returns the logical ids of the Makefile's build targets matching only, in the
// Makefile's order, the hello world first.
func readTargets(root, only string) ([]string, error) {
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, err
	}
	var keep *regexp.Regexp
	if only != "" {
		if keep, err = regexp.Compile(only); err != nil {
			return nil, fmt.Errorf("-only: %w", err)
		}
	}
	ids := []string{hello}
	for _, m := range buildTarget.FindAllStringSubmatch(string(mk), -1) {
		if keep == nil || keep.MatchString(m[1]) {
			ids = append(ids, m[1])
		}
	}
	if len(ids) == 1 {
		return nil, fmt.Errorf("no build target of the Makefile matches %q", only)
	}
	return ids, nil
}

// binary is one function built twice.
type binary struct {
	name     string // logical id, or hello
	host     string // path of the bootstrap built for this machine
	deployed int64  // size in bytes of the arm64 bootstrap
}

// buildAll builds every target of the checkout at root for arm64 and for the host through
// make, the same recipe `sam build` runs, into out; each row's name is the id and suffix.
func buildAll(ctx context.Context, root, out, suffix string, ids []string) ([]binary, error) {
	out, err := filepath.Abs(out)
	if err != nil {
		return nil, err
	}
	var bins []binary
	for _, id := range ids {
		b := binary{name: id + suffix}
		for _, arch := range []string{"arm64", runtime.GOARCH} {
			dir := filepath.Join(out, arch, filepath.Base(targetOf(id)))
			if err := makeTarget(ctx, root, id, arch, dir); err != nil {
				return nil, err
			}
			bin := filepath.Join(dir, "bootstrap")
			fi, err := os.Stat(bin)
			if err != nil {
				return nil, err
			}
			if arch == "arm64" {
				b.deployed = fi.Size()
			}
			b.host = bin
		}
		bins = append(bins, b)
	}
	return bins, nil
}

func targetOf(id string) string {
	if id == hello {
		return "build-ColdstartHello"
	}
	return "build-" + id
}

func makeTarget(ctx context.Context, root, id, arch, dir string) error {
	args := []string{"--no-print-directory", "-C", root, "ARTIFACTS_DIR=" + dir, "GOARCH_LAMBDA=" + arch}
	if id == hello {
		args = append(args, "--eval", helloTarget)
	}
	args = append(args, targetOf(id))
	cmd := exec.CommandContext(ctx, "make", args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("make %s (%s): %w\n%s", targetOf(id), arch, err, stderr.Bytes())
	}
	return nil
}
