// Command plume-fakemodel serves a fake language model on a local port: OpenAI Chat
// Completions at /v1/chat/completions and Anthropic Messages at /v1/messages, answering
// deterministically from rules (package shared/llm/fakemodel). `make dev` starts it when no
// provider key is set, so judges run with simulated verdicts and nothing leaves the machine.
//
//	plume-fakemodel -addr 127.0.0.1:0 -rules rules.json -key sk-dev
//
// It prints the URL it listens on and stops on SIGINT or SIGTERM.
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
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "plume-fakemodel:", err)
		os.Exit(1)
	}
}
