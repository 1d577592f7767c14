package main

import (
	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/admin"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdRoot returns the `plume` command: the global flags and every command group. Client
// commands, which talk to the API with an API key, will be added here next to admin.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plume <command> <subcommand> [flags]",
		Short: "Plume's command-line interface",
		Long: `Plume's command-line interface.

Global flags come before or after the command. With --output json, results are JSON on stdout
and errors are {"error": {"code": "...", "message": "..."}} on stderr.

Exit codes:
  0  success
  1  differences found, with --exit-code (recompute-trace, recompute-session)
  2  usage or validation error: bad flags, missing table name, invalid input, unknown or
     duplicate project or key, unknown trace or session, table not found, AWS configuration
     that cannot be loaded
  3  authentication or permission error: no usable AWS credentials, access denied
  4  remote or network error: timeouts, unreachable or failing AWS services`,
		SilenceErrors: true,
		SilenceUsage:  true,
		Args:          cmdutil.NoArgs,
		RunE:          cmdutil.ShowHelp,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if f.Timeout <= 0 {
				return cmdutil.FlagErrorf("--timeout must be positive, got %s", f.Timeout)
			}
			return nil
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.FlagErrorWrap(err) })
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)

	pf := cmd.PersistentFlags()
	pf.Var(&f.IO.Format, "output", "output format: text or json")
	pf.BoolVarP(&f.IO.Quiet, "quiet", "q", false, "print no informational messages on stderr (results and errors still print)")
	pf.DurationVar(&f.Timeout, "timeout", cmdutil.DefaultTimeout, "give up on a command after this `duration`")

	cmd.AddCommand(admin.NewCmdAdmin(f))
	return cmd
}
