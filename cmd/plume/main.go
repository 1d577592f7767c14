// Command plume is Plume's command-line interface. So far it has the operator's commands,
// `plume admin ...`, which work on the DynamoDB table directly: create the table, create
// projects, issue, list and revoke API keys, check and repair trace and session aggregates.
// `plume --help` lists commands, global flags and exit codes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/errs"
)

// Exit codes, documented in the root command's help.
const (
	exitOK      = 0
	exitDiffers = 1 // --exit-code: differences found
	exitUsage   = 2 // usage or validation error
	exitAuth    = 3 // authentication or permission error
	exitRemote  = 4 // remote or network error
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line args and returns the process's exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return execute(ctx, cmdutil.New(getenv, stdout, stderr), args)
}

// execute runs args through the root command built from f, reports an error on f.IO.ErrOut
// and returns the exit code.
func execute(ctx context.Context, f *cmdutil.Factory, args []string) int {
	root := NewCmdRoot(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	fail := classify(err)
	report(f.IO, cmd, fail)
	return fail.exit
}

// failure is an error as the CLI reports it.
type failure struct {
	exit    int
	code    errs.Code
	message string
	usage   bool // a command line error: point at --help
	silent  bool // not an error to report: the command printed its results
}

// classify decides the exit code of every error, in this one place:
//   - 1: cmdutil.ErrDiffers (a command run with --exit-code found differences); nothing is
//     reported, the command printed its results.
//   - 2: cmdutil.FlagError (cobra's flag errors, unknown commands, missing flags or table name);
//     errs.CodeInvalid, CodeNotFound (an unknown project, key, trace or session: the operator
//     named it), CodeConflict (a taken project id or key); DynamoDB's ResourceNotFoundException
//     (the table named by --table or TABLE_NAME does not exist).
//   - 3: errs.CodeUnauthenticated and CodeForbidden (no usable AWS credentials); AWS's
//     authentication and authorization error codes (AccessDenied, UnrecognizedClient, ...).
//   - 4: anything else: other AWS errors, throttling, network failures, timeouts.
func classify(err error) failure {
	if errors.Is(err, cmdutil.ErrDiffers) {
		return failure{exit: exitDiffers, silent: true}
	}
	msg := err.Error()
	if e, ok := err.(*errs.Error); ok {
		msg = e.Message
	}
	if cmdutil.IsFlagError(err) {
		return failure{exit: exitUsage, code: errs.CodeInvalid, message: msg, usage: true}
	}
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		return classifyAPI(apiErr)
	}
	switch code := errs.CodeOf(err); code {
	case errs.CodeInvalid, errs.CodeNotFound, errs.CodeConflict, errs.CodeTooLarge, errs.CodeUnsupportedMedia:
		return failure{exit: exitUsage, code: code, message: msg}
	case errs.CodeUnauthenticated, errs.CodeForbidden:
		return failure{exit: exitAuth, code: code, message: msg}
	case errs.CodeRateLimited, errs.CodeUnavailable:
		return failure{exit: exitRemote, code: code, message: msg}
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "UnrecognizedClientException", "InvalidClientTokenId", "InvalidSignatureException",
			"SignatureDoesNotMatch", "IncompleteSignature", "IncompleteSignatureException",
			"MissingAuthenticationToken", "MissingAuthenticationTokenException",
			"ExpiredToken", "ExpiredTokenException":
			return failure{exit: exitAuth, code: errs.CodeUnauthenticated, message: msg}
		case "AccessDenied", "AccessDeniedException", "UnauthorizedOperation":
			return failure{exit: exitAuth, code: errs.CodeForbidden, message: msg}
		case "ResourceNotFoundException":
			return failure{exit: exitUsage, code: errs.CodeNotFound,
				message: msg + " (check --table or TABLE_NAME; `plume admin create-table` creates the table)"}
		}
	}
	var send *smithyhttp.RequestSendError
	var network *url.Error // the API client's: the server cannot be reached
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return failure{exit: exitRemote, code: errs.CodeUnavailable, message: "timed out (see --timeout): " + msg}
	case errors.Is(err, context.Canceled):
		return failure{exit: exitRemote, code: errs.CodeUnavailable, message: "interrupted: " + msg}
	case errors.As(err, &send), errors.As(err, &network):
		return failure{exit: exitRemote, code: errs.CodeUnavailable, message: msg}
	}
	return failure{exit: exitRemote, code: errs.CodeInternal, message: msg}
}

// classifyAPI decides the exit code of an error answer of the API: the command line named
// something wrong (2), the key is refused (3), or the service failed (4).
func classifyAPI(e *client.Error) failure {
	msg := e.Message
	if e.RequestID != "" {
		msg += " (request " + e.RequestID + ")"
	}
	code := errs.Code(e.Code)
	switch e.Code {
	case api.CodeInvalid, api.CodeNotFound, api.CodeConflict, api.CodeTooLarge, api.CodeUnsupportedMedia:
		return failure{exit: exitUsage, code: code, message: msg}
	case api.CodeUnauthenticated, api.CodeForbidden:
		return failure{exit: exitAuth, code: code, message: msg}
	}
	return failure{exit: exitRemote, code: code, message: msg}
}

// report writes fail to stderr: {"error": {"code", "message"}} in json mode, else
// "error: <message>"; nothing when fail is silent.
func report(s *cmdutil.IOStreams, cmd *cobra.Command, fail failure) {
	if fail.silent {
		return
	}
	if s.JSON() {
		body := map[string]any{"error": map[string]string{"code": string(fail.code), "message": fail.message}}
		if err := json.NewEncoder(s.ErrOut).Encode(body); err == nil {
			return
		}
	}
	fmt.Fprintf(s.ErrOut, "error: %s\n", fail.message)
	if fail.usage && cmd != nil {
		fmt.Fprintf(s.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
}
