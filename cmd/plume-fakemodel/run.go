package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// defaultAddr is where the server listens without -addr or PLUME_FAKEMODEL_ADDR.
const defaultAddr = "127.0.0.1:8099"

// errUsage reports bad flags; the flag package has already said why.
var errUsage = errors.New("usage")

// run serves the fake model until ctx ends. Flags fall back to PLUME_FAKEMODEL_ADDR,
// PLUME_FAKEMODEL_RULES and PLUME_FAKEMODEL_KEY. The listening URL is announced on stdout.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("plume-fakemodel", flag.ContinueOnError)
	flags.SetOutput(stderr)
	addr := flags.String("addr", orDefault(getenv("PLUME_FAKEMODEL_ADDR"), defaultAddr), "address to listen on; port 0 picks a free one")
	rulesPath := flags.String("rules", getenv("PLUME_FAKEMODEL_RULES"), "JSON rules file (see fakemodel.ParseRules); none: default answers only")
	key := flags.String("key", getenv("PLUME_FAKEMODEL_KEY"), "the only API key accepted; empty: any non-empty key")
	models := flags.String("models", "", "comma-separated model ids to accept and list; empty: any model")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(stderr, "plume-fakemodel: unexpected arguments %q\n", flags.Args())
		return errUsage
	}

	opts := []fakemodel.Option{fakemodel.WithAPIKey(*key)}
	if *rulesPath != "" {
		rules, err := readRules(*rulesPath)
		if err != nil {
			return err
		}
		opts = append(opts, fakemodel.WithRules(rules...))
	}
	if *models != "" {
		opts = append(opts, fakemodel.WithModels(strings.Split(*models, ",")...))
	}
	model := fakemodel.New(opts...)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s (use -addr for another address): %w", *addr, err)
	}
	url := "http://" + ln.Addr().String()
	srv := &http.Server{
		Handler: model, ReadHeaderTimeout: 10 * time.Second,
		// Requests end with ctx, so calls waiting on a rule's latency do not hold up shutdown.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "plume-fakemodel listening on %s\n", url)
	fmt.Fprintf(stdout, "  OpenAI base URL:    %s/v1\n", url)
	fmt.Fprintf(stdout, "  Anthropic base URL: %s\n", url)
	fmt.Fprintln(stdout, "  Answers are simulated: judge verdicts from this server are not real model output.")

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Calls end with ctx; connections still open after a while (a client that keeps its
	// connection busy, a machine too loaded to close them in time) are closed.
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
	} else if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	fmt.Fprintf(stdout, "plume-fakemodel stopped after %d model calls\n", model.Count())
	return nil
}

func readRules(path string) ([]fakemodel.Rule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	defer f.Close()
	rules, err := fakemodel.ParseRules(f)
	if err != nil {
		return nil, fmt.Errorf("rules file %s: %w", path, err)
	}
	return rules, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
