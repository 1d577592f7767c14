package main

import (
	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/abtests"
	"github.com/plumehq/plume/cmd/plume/internal/admin"
	"github.com/plumehq/plume/cmd/plume/internal/authcmd"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/cmd/plume/internal/datasetscmd"
	"github.com/plumehq/plume/cmd/plume/internal/eventscmd"
	"github.com/plumehq/plume/cmd/plume/internal/gatewaycmd"
	"github.com/plumehq/plume/cmd/plume/internal/judges"
	"github.com/plumehq/plume/cmd/plume/internal/keys"
	"github.com/plumehq/plume/cmd/plume/internal/links"
	"github.com/plumehq/plume/cmd/plume/internal/metricscmd"
	"github.com/plumehq/plume/cmd/plume/internal/monitorscmd"
	"github.com/plumehq/plume/cmd/plume/internal/optimize"
	"github.com/plumehq/plume/cmd/plume/internal/prices"
	"github.com/plumehq/plume/cmd/plume/internal/prompts"
	"github.com/plumehq/plume/cmd/plume/internal/speccmd"
	"github.com/plumehq/plume/cmd/plume/internal/tracing"
	"github.com/plumehq/plume/cmd/plume/internal/webhookscmd"
)

// NewCmdRoot returns the `plume` command: the global flags and every command group: the client
// commands, which call the API with a project API key, and admin.
func NewCmdRoot(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plume <command> <subcommand> [flags]",
		Short: "Plume's command-line interface",
		Long: `Plume's command-line interface.

Global flags come before or after the command. With --output json, results are JSON on stdout
and errors are {"error": {"code": "...", "message": "..."}} on stderr.

The client commands (every group but admin) call the API with a project API key: see
"plume auth --help" for where they find it. The admin commands work on the DynamoDB table.

Exit codes:
  0  success
  1  differences found, with --exit-code (prompts diff, admin recompute-trace and
     recompute-session)
  2  usage or validation error: bad flags, no base URL or project, invalid input (400), not
     found (404), conflict (409), missing table name, unknown or duplicate project or key,
     table not found, AWS configuration that cannot be loaded
  3  authentication or permission error: no API key or a refused one (401, 403), no usable
     AWS credentials, access denied
  4  remote or network error: timeouts, an unreachable server, 429 and 5xx answers after
     retries, failing AWS services`,
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
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)

	pf := cmd.PersistentFlags()
	pf.Var(&f.IO.Format, "output", "output format: text or json")
	pf.BoolVarP(&f.IO.Quiet, "quiet", "q", false, "print no informational messages on stderr (results and errors still print)")
	pf.DurationVar(&f.Timeout, "timeout", cmdutil.DefaultTimeout, "give up on a command after this `duration`")
	pf.StringVar(&f.Flags.APIBaseURL, "api-base-url", "", "the API's base `URL` (client commands; default: $PLUME_BASE_URL, then the configuration file)")
	pf.StringVar(&f.Flags.APIKey, "api-key", "", "the project API `key` (client commands; default: $PLUME_API_KEY, then the configuration file)")
	pf.StringVar(&f.Flags.ProjectID, "project-id", "", "the `project` of the key (client commands; default: $PLUME_PROJECT_ID, then the configuration file)")

	cmd.AddCommand(
		authcmd.NewCmdAuth(f),
		prompts.NewCmdPrompts(f),
		judges.NewCmdJudges(f),
		optimize.NewCmdOptimize(f),
		tracing.NewCmdTraces(f),
		tracing.NewCmdSpans(f),
		tracing.NewCmdSessions(f),
		metricscmd.NewCmdMetrics(f),
		links.NewCmdFeedbackLinks(f),
		abtests.NewCmdABTests(f),
		abtests.NewCmdSignals(f),
		datasetscmd.NewCmdDatasets(f),
		datasetscmd.NewCmdExperiments(f),
		prices.NewCmdModelPrices(f),
		webhookscmd.NewCmdWebhooks(f),
		eventscmd.NewCmdEvents(f),
		monitorscmd.NewCmdMonitors(f),
		gatewaycmd.NewCmdGateway(f),
		keys.NewCmdKeys(f),
		speccmd.NewCmdSpec(f),
		admin.NewCmdAdmin(f),
	)
	cmdutil.UsageErrors(cmd)
	return cmd
}
