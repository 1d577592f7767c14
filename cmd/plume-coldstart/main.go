// Command plume-coldstart measures every function's cold start and size beside an
// aws-lambda-go hello world built with the same flags, side by side in one run (`make bench`
// runs it). For each build-<LogicalId> target of the Makefile it builds the bootstrap twice
// with the Makefile's LAMBDA_BUILD flags: for arm64 (the deployed size) and for this host
// (amd64, to run it). It then starts every host bootstrap in turn against a tiny fake Runtime
// API, -runs rounds of all of them, and times process start to the first
// GET /2018-06-01/runtime/invocation/next: the Lambda init phase. The table shows each
// function's median and its ratio to the hello world's median of the same rounds, so a loaded
// machine slows both alike. With -inittrace it also runs each bootstrap once with
// GODEBUG=inittrace=1 and prints the packages whose init took longest.
//
// With -base, the same functions built from an earlier checkout are measured in the same rounds,
// each row beside its own: a before and after measured side by side.
//
// Limits the table is read against (issue 31): init within 2x the hello world, bootstrap at most
// 15 MB; rows past either are marked, and a bootstrap past 15 MB (of an after row, not @base, nor
// one sizeOwed lists) fails the command, so `make bench` fails. Init is also shown in CPU time
// (user and system), which a loaded machine distorts far less than the wall clock.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "plume-coldstart:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	root      string // the repository, holding the Makefile
	base      string // another checkout whose functions are measured in the same rounds; "" for none
	out       string // where the bootstraps are built
	runs      int    // rounds of starts
	only      string // a regexp of logical ids to measure; all when empty
	inittrace int    // top packages by init time to print per function; 0: none
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet("plume-coldstart", flag.ContinueOnError)
	fs.StringVar(&o.root, "root", ".", "the repository root (holding the Makefile)")
	fs.StringVar(&o.base, "base", "", "another checkout (git archive of an earlier commit) measured in the same rounds, its rows marked @base")
	fs.StringVar(&o.out, "out", ".cache/coldstart", "where the bootstraps are built")
	fs.IntVar(&o.runs, "runs", 20, "rounds of starts; each function's median is taken over them")
	fs.StringVar(&o.only, "only", "", "a regexp of the logical ids to measure (all when empty)")
	fs.IntVar(&o.inittrace, "inittrace", 0, "print the n packages whose init took longest, per function")
	if err := fs.Parse(args); err != nil {
		return err
	}
	targets, err := readTargets(o.root, o.only)
	if err != nil {
		return err
	}
	bins, err := buildAll(ctx, o.root, o.out, "", targets)
	if err != nil {
		return err
	}
	if o.base != "" {
		// A function the earlier checkout does not build yet has no @base row.
		had, err := readTargets(o.base, o.only)
		if err != nil {
			return err
		}
		before, err := buildAll(ctx, o.base, o.out+"/base", baseSuffix, common(targets[1:], had[1:]))
		if err != nil {
			return err
		}
		bins = interleave(bins, before)
	}
	res, err := measure(ctx, bins, o.runs)
	if err != nil {
		return err
	}
	over := printTable(stdout, res, o.runs)
	if o.inittrace > 0 {
		if err := printInitTrace(ctx, stdout, bins, o.inittrace); err != nil {
			return err
		}
	}
	if len(over) > 0 {
		return fmt.Errorf("bootstraps over the limit:\n%s", strings.Join(over, "\n"))
	}
	return nil
}

// baseSuffix marks the rows of the -base checkout.
const baseSuffix = " @base"

// common returns the ids of want that are also in have, in want's order.
func common(want, have []string) []string {
	var out []string
	for _, id := range want {
		if slices.Contains(have, id) {
			out = append(out, id)
		}
	}
	return out
}

// interleave puts each function's @base row, when it has one, after its own (after[0] is the
// hello world, which has none).
func interleave(after, before []binary) []binary {
	out := []binary{after[0]}
	for _, b := range after[1:] {
		out = append(out, b)
		if i := slices.IndexFunc(before, func(x binary) bool { return x.name == b.name+baseSuffix }); i >= 0 {
			out = append(out, before[i])
		}
	}
	return out
}
