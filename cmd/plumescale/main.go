// Command plumescale is the scale harness (`make scale`, scripts/scale.sh): it loads a project
// through the real ingest path at two sizes ten times apart and prices every read route at
// both by AWS's billing rules, so that a query whose cost follows the project rather than its
// page shows as a ratio above 1.
//
// It runs the whole stack in-process (internal/stack, mounted as plume-local mounts it, behind
// Lambda's limits) against the DynamoDB endpoint of the SDK's configuration
// (AWS_ENDPOINT_URL_DYNAMODB: make scale points it at /work/shared/tools/ddbtap.py in front of a
// DynamoDB Local of its own) and an embedded S3 (gofakes3), with the table's change stream
// applied in-process (app.Env.StreamConsumer) as RollupFunction applies it. The loading posts
// SDK-shaped span batches to POST /spans in parallel, judge evaluations and feedback on some of
// them, then drains the stream; every measured request runs alone, in a phase of ddbtap's log
// of its own (GET /__phase/NAME), and its read units, requests and write units are summed from
// that log. What it prints: the ingest cost of each load step per million spans, and per query
// the read units, requests, answer bytes and wall time at both sizes with their ratios (ratios
// above 1.5 flagged). docs/scale.md says how to read them.
//
// Usage (scripts/scale.sh sets the flags):
//
//	plumescale -tap http://127.0.0.1:PORT -tap-log tap.jsonl -streams http://127.0.0.1:DDB -spans 100000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "plumescale:", err)
		os.Exit(1)
	}
}
