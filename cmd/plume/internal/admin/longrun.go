package admin

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// bucketOf is the bucket a command works on: its --bucket flag's value, else BUCKET_NAME.
func bucketOf(f *cmdutil.Factory, flag string) (string, error) {
	if flag == "" {
		flag = f.Getenv("BUCKET_NAME")
	}
	if flag == "" {
		return "", cmdutil.FlagErrorf("no bucket: pass --bucket or set BUCKET_NAME")
	}
	return flag, nil
}

// longRunContext bounds a long admin command: by --timeout when given, else by its own
// default, longer than a request's.
func longRunContext(cmd *cobra.Command, f *cmdutil.Factory, defaultTimeout time.Duration) (context.Context, context.CancelFunc) {
	timeout := f.Timeout
	if fl := cmd.Flags().Lookup("timeout"); fl == nil || !fl.Changed {
		timeout = defaultTimeout
	}
	return context.WithTimeout(cmd.Context(), timeout)
}
