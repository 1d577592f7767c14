// Command plume-load is a load generator for a Plume API on this machine (plume-local, `make
// load`). It sends what the zeroeval SDKs send (COMPAT.md): span batches to POST /spans
// (Python's batches of 20, TypeScript's of 100, a few KB of input and output per span), OTLP
// protobuf exports to POST /v1/traces, and the SDKs' prompt fetches (GET latest, GET by tag,
// ensure). It runs a fixed number of workers for a fixed duration or request count and prints
// throughput (requests/s, spans/s), latency percentiles from every sample, and errors by
// status; -json writes the same figures as JSON. With -pprof-url it takes a CPU profile of
// the server over the measured phase; profile-summary splits such a profile by what the CPU
// was spent on (DynamoDB client, signing, JSON, GC, ...), per request and per 1000 spans.
//
// It refuses a base URL that is not a loopback address unless -allow-remote is given: a load
// test against a deployment costs money and may page someone.
//
// Usage:
//
//	plume-load -url http://127.0.0.1:8080 -key plm_... -scenario spans -batch 20 -duration 15s
//	plume-load -scenario otlp -batch 100 -concurrency 4
//	plume-load -scenario prompts -project-id <id> -json report.json
//	go tool pprof -traces cpu.pprof | plume-load profile-summary -requests 1234 -spans 24680
//
// PLUME_API_URL and PLUME_API_KEY stand in for -url and -key.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Exit codes, decided in one place (exitCode).
const (
	exitOK    = 0
	exitRun   = 1 // the target could not be prepared or reached
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "plume-load:", err)
	}
	os.Exit(exitCode(err))
}

// usageError is a bad flag or flag combination.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ue):
		return exitUsage
	default:
		return exitRun
	}
}

// run parses the flags, prepares the scenario, drives the load and writes the report.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "profile-summary" {
		return profileSummary(args[1:], os.Stdin, stdout, stderr)
	}
	opts, err := parseOptions(args, getenv, stderr)
	if err != nil {
		return err
	}
	sc, err := newScenario(opts)
	if err != nil {
		return err
	}
	c := newClient(opts)
	if err := sc.setup(ctx, c); err != nil {
		return fmt.Errorf("prepare scenario %s: %w", opts.scenario, err)
	}
	rep, err := drive(ctx, opts, sc, c, stderr)
	if err != nil {
		return err
	}
	if opts.jsonOut != "-" {
		writeTable(stdout, rep)
	}
	if opts.jsonOut != "" {
		if err := writeJSON(opts.jsonOut, stdout, rep); err != nil {
			return err
		}
	}
	return nil
}
