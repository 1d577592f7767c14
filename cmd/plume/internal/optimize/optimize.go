package optimize

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// Run statuses (shared/optimize): queued → running → succeeded | failed | cancelled.
const (
	statusSucceeded = "succeeded"
	statusFailed    = "failed"
	statusCancelled = "cancelled"
)

// DefaultPollInterval is how often --wait reads a run unless --poll-interval says otherwise.
const DefaultPollInterval = 2 * time.Second

// target is what the runs of a command group optimize: a prompt or a judge's template.
type target struct {
	name string // the group: "prompt" or "judge"
	arg  string // the start and list argument: "<slug>" or "<judge_id>"
	// optimizers are the --optimizer values; the first is the default.
	optimizers []string
	// intents says whether a run takes --intent and --model (a judge's run has none).
	intents bool
	start   func(c *client.Client, ctx context.Context, id string, req api.OptimizationRunRequest) (api.OptimizationRun, error)
	list    func(c *client.Client, ctx context.Context, id string, limit, offset int) ([]api.OptimizationRun, error)
}

var (
	promptTarget = target{
		name: "prompt", arg: "<slug>", intents: true,
		optimizers: []string{"quick_refine", "dspy_bootstrap", "dspy_gepa", "auto"},
		start:      (*client.Client).StartPromptOptimization,
		list:       (*client.Client).PromptOptimizationRuns,
	}
	judgeTarget = target{
		name: "judge", arg: "<judge_id>",
		optimizers: []string{"quick_refine", "auto"},
		start:      (*client.Client).StartJudgeOptimization,
		list:       (*client.Client).JudgeOptimizationRuns,
	}
)

// NewCmdOptimize returns the `plume optimize` command group.
func NewCmdOptimize(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "optimize <prompt|judge> <command>",
		Short: "Optimize prompts and judges: start runs, follow them, promote their candidates",
		Long: `Optimization runs improve a prompt against its intents (the judges linked to it) or a judge's
template against its calibration feedback. A run proposes a candidate and compares it with the
baseline on held-out examples; nothing changes until the candidate is promoted.

Strategies (--optimizer): quick_refine (seconds: one rewrite from feedback examples, the default),
dspy_bootstrap (minutes: selects demonstrations), dspy_gepa (10 to 60 minutes: a search over
generations) and auto (the service chooses). A judge's template is refined with quick_refine.`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdTarget(f, promptTarget), newCmdTarget(f, judgeTarget))
	return cmd
}

func newCmdTarget(f *cmdutil.Factory, t target) *cobra.Command {
	short := "Optimize a prompt against the judges linked to it"
	if t.name == "judge" {
		short = "Optimize a judge's template against its calibration feedback"
	}
	cmd := &cobra.Command{
		Use:   t.name + " <command>",
		Short: short,
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdList(f, t), newCmdGet(f, t), newCmdStart(f, t), newCmdCancel(f, t), newCmdPromote(f, t))
	return cmd
}

// runColumns are a run's fields in text output.
var runColumns = []cmdutil.Column{
	{Header: "ID", Path: "id"}, {Header: "Prompt", Path: "prompt_slug"}, {Header: "Judge", Path: "judge_id"},
	{Header: "Status", Path: "status"}, {Header: "Optimizer", Path: "optimizer_type"}, {Header: "Requested", Path: "requested_optimizer_type"},
	{Header: "Intents", Path: "config.intents"}, {Header: "Budget", Path: "config.budget"}, {Header: "Models", Path: "config.models"},
	{Header: "Seed", Path: "config.seed"}, {Header: "Dataset", Path: "config.dataset"}, {Header: "Baseline version", Path: "baseline.version"},
	{Header: "Iteration", Path: "progress.iteration"}, {Header: "Model calls", Path: "progress.model_calls"},
	{Header: "Cost USD", Path: "progress.cost_usd"}, {Header: "Baseline score", Path: "metrics.baseline.overall"},
	{Header: "Candidate score", Path: "metrics.candidate.overall"}, {Header: "Regressed", Path: "metrics.regressed"},
	{Header: "Recommendation", Path: "recommendation"}, {Header: "Reason", Path: "metrics.reason"}, {Header: "Error", Path: "error"},
	{Header: "Deployed version ID", Path: "deployed_version_id"}, {Header: "Created", Path: "created_at"},
	{Header: "Created by", Path: "created_by"}, {Header: "Started", Path: "started_at"}, {Header: "Finished", Path: "finished_at"},
}

// simulationColumns are a run's simulations in text output.
var simulationColumns = []cmdutil.Column{
	{Header: "MODEL", Path: "model"}, {Header: "BASELINE_SCORE", Path: "baseline_score"}, {Header: "CANDIDATE_SCORE", Path: "candidate_score"},
	{Header: "COST_USD", Path: "cost_usd"}, {Header: "EXAMPLES", Path: "examples"}, {Header: "ERROR", Path: "error"},
}

// printRun writes a run: in json mode all of it, else its fields, its candidate and the table
// of its simulations.
func printRun(s *cmdutil.IOStreams, run api.OptimizationRun) error {
	var blocks []cmdutil.Column
	if run.Candidate != nil {
		blocks = append(blocks, cmdutil.Column{Header: "Candidate", Path: "candidate.content"})
	}
	if err := s.PrintItem(run, runColumns, blocks...); err != nil || s.JSON() || len(run.Simulations) == 0 {
		return err
	}
	fmt.Fprintln(s.Out, "\nSimulations:")
	return s.PrintList(run.Simulations, simulationColumns, &cmdutil.ListOptions{})
}

func newCmdList(f *cmdutil.Factory, t target) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:     "list " + t.arg,
		Short:   fmt.Sprintf("List the optimization runs of a %s, newest first", t.name),
		Example: fmt.Sprintf(`  plume optimize %s list %s --where status=succeeded --limit 5`, t.name, example(t)),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				runs, err := t.list(c, ctx, args[0], o.Limit, o.Offset)
				if err != nil {
					return err
				}
				return f.IO.PrintList(runs, []cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "STATUS", Path: "status"},
					{Header: "OPTIMIZER", Path: "optimizer_type"}, {Header: "ITERATION", Path: "progress.iteration"},
					{Header: "MODEL_CALLS", Path: "progress.model_calls"}, {Header: "COST_USD", Path: "progress.cost_usd"},
					{Header: "BASELINE", Path: "metrics.baseline.overall"}, {Header: "CANDIDATE", Path: "metrics.candidate.overall"},
					{Header: "RECOMMENDATION", Path: "recommendation"}, {Header: "CREATED", Path: "created_at"}}, &o)
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 20)
	return cmd
}

// example is an example argument of t's start and list.
func example(t target) string {
	if t.name == "judge" {
		return "0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f"
	}
	return "support-bot"
}

// waitHelp is the help of --wait, for every command that has it.
const waitHelp = `With --wait the command reads the run every --poll-interval until it is over, telling its
progress (status, iteration, model calls, cost) on stderr, then prints it. It exits 0 when the
run succeeded and 4 when it failed (with the run's error) or was cancelled: in both cases the
run did not produce a candidate. Waiting is bounded by the global --timeout (default 20s): give
it the time the strategy takes (--timeout 30m for dspy_gepa). A wait that times out exits 4;
the run goes on, and "get <run_id> --wait" takes it up again.`

// waitFlags are --wait and --poll-interval.
type waitFlags struct {
	wait  bool
	every time.Duration
}

func (w *waitFlags) addFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&w.wait, "wait", false, "wait until the run is over, showing its progress on stderr")
	cmd.Flags().DurationVar(&w.every, "poll-interval", DefaultPollInterval, "how often --wait reads the run")
}

func (w *waitFlags) check() error {
	if w.every <= 0 {
		return cmdutil.FlagErrorf("--poll-interval must be positive, got %s", w.every)
	}
	return nil
}

// finish prints run, having waited for it to end with --wait, and returns the error of a run
// that failed or was cancelled while waited for.
func (w *waitFlags) finish(ctx context.Context, f *cmdutil.Factory, c *client.Client, run api.OptimizationRun) error {
	if !w.wait {
		return printRun(f.IO, run)
	}
	run, err := waitFor(ctx, f.IO, c, run, w.every)
	if err != nil {
		return err
	}
	if err := printRun(f.IO, run); err != nil {
		return err
	}
	switch run.Status {
	case statusFailed:
		msg := "no error given"
		if run.Error != nil {
			msg = *run.Error
		}
		return fmt.Errorf("optimization run %s failed: %s", run.ID, msg)
	case statusCancelled:
		return fmt.Errorf("optimization run %s was cancelled", run.ID)
	}
	return nil
}

// waitFor reads run every interval until it is over, and tells its progress on s's ErrOut
// (unless --quiet) each time it changes. ctx, the global --timeout, bounds the wait.
func waitFor(ctx context.Context, s *cmdutil.IOStreams, c *client.Client, run api.OptimizationRun, every time.Duration) (api.OptimizationRun, error) {
	told := ""
	for {
		if line := progress(run); line != told {
			s.Infof("%s", line)
			told = line
		}
		if over(run.Status) {
			return run, nil
		}
		select {
		case <-ctx.Done():
			return run, fmt.Errorf("optimization run %s is still %s: %w", run.ID, run.Status, ctx.Err())
		case <-time.After(every):
		}
		next, err := c.OptimizationRun(ctx, run.ID)
		if err != nil {
			return run, err
		}
		run = next
	}
}

func over(status string) bool {
	return status == statusSucceeded || status == statusFailed || status == statusCancelled
}

// progress is a line about where run is.
func progress(run api.OptimizationRun) string {
	p := run.Progress
	return fmt.Sprintf("run %s: %s, iteration %d, %d model calls, $%.4f", run.ID, run.Status, p.Iteration, p.ModelCalls, p.CostUSD)
}

func newCmdGet(f *cmdutil.Factory, t target) *cobra.Command {
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "get <run_id>",
		Short: "Show an optimization run: its progress, scores, candidate and simulations",
		Long:  "Show an optimization run: its progress, scores, candidate and simulations.\n\n" + waitHelp,
		Example: fmt.Sprintf(`  plume optimize %s get 0192f5e0-3a4b-7c5d-8e9f-0a1b2c3d4e5f
  plume --timeout 10m optimize %s get 0192f5e0-3a4b-7c5d-8e9f-0a1b2c3d4e5f --wait`, t.name, t.name),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := w.check(); err != nil {
				return err
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				run, err := c.OptimizationRun(ctx, args[0])
				if err != nil {
					return err
				}
				return w.finish(ctx, f, c, run)
			})
		},
	}
	w.addFlags(cmd)
	return cmd
}

func newCmdStart(f *cmdutil.Factory, t target) *cobra.Command {
	var w waitFlags
	var optimizer string
	var intents, models []string
	var maxCalls int
	var maxCost float64
	var seed int64
	var ds datasetFlags
	cmd := &cobra.Command{
		Use:   "start " + t.arg,
		Short: fmt.Sprintf("Start an optimization run of a %s", t.name),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			if err := w.check(); err != nil {
				return err
			}
			if !slices.Contains(t.optimizers, optimizer) {
				return cmdutil.FlagErrorf("--optimizer must be one of %s, not %q", strings.Join(t.optimizers, ", "), optimizer)
			}
			req := api.OptimizationRunRequest{OptimizerType: optimizer, Config: api.OptimizationConfig{Models: models}}
			for _, s := range intents {
				in, err := parseIntent(s)
				if err != nil {
					return err
				}
				req.Config.Intents = append(req.Config.Intents, in)
			}
			given := cmd.Flags().Changed
			if given("max-model-calls") || given("max-cost-usd") {
				if given("max-model-calls") && maxCalls <= 0 || given("max-cost-usd") && !(maxCost > 0) {
					return cmdutil.FlagErrorf("--max-model-calls and --max-cost-usd must be positive")
				}
				req.Config.Budget = &api.OptimizationBudget{MaxModelCalls: maxCalls, MaxCostUSD: maxCost}
			}
			if given("seed") {
				req.Config.Seed = &seed
			}
			if req.Config.Dataset, err = ds.request(given); err != nil {
				return err
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				run, err := t.start(c, ctx, args[0], req)
				if err != nil {
					return err
				}
				return w.finish(ctx, f, c, run)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&optimizer, "optimizer", t.optimizers[0], "the `strategy`: "+strings.Join(t.optimizers, ", "))
	if t.intents {
		cmd.Long = `Start an optimization run of a prompt. It improves on the version the production tag serves
(else the latest) using the completions people gave feedback on, scored by its intents: by
default every judge linked to the prompt, weight 1. --intent sets them instead, each with its
weight in the overall score and a minimum score (0 to 1) under which a candidate is rejected
whatever its overall score. After a successful run the candidate and the baseline are simulated
with the prompt's model and the --model models.

--dataset takes the examples from a dataset version instead (name, or name@version; the
latest by default; --dataset-version-id names a version by id): each row's --input-column
values are the input, its --expected-column value the output wanted, its other columns the
prompt's variables; the run reads the version's first 200 rows. --with-feedback adds the
completions people gave feedback on.

` + waitHelp
		cmd.Example = `  plume optimize prompt start support-bot --wait
  plume optimize prompt start support-bot --dataset returns@2 --input-column question --expected-column answer --wait
  plume --timeout 30m optimize prompt start support-bot --optimizer dspy_gepa --max-cost-usd 20 \
    --intent 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f:2:0.8 --intent 0192f5d4-aaaa-7a3b-9f00-5a1c2e3d4b5f \
    --model anthropic/claude-sonnet-4-5 --wait`
		fl.StringArrayVar(&intents, "intent", nil, "a `judge_id[:weight[:min_threshold]]` scoring candidates: the judge, its weight in the overall score, the least score (0 to 1) a candidate may have on it; repeatable (default: the linked judges, weight 1)")
		fl.StringArrayVar(&models, "model", nil, "simulate the result with this `model` too (provider/model); repeatable")
		ds.addFlags(cmd)
	} else {
		cmd.Long = `Start an optimization run of a judge's template: quick_refine rewrites it from the judge's
calibration feedback (plume judges feedback create), and the run compares the agreement with
people of both templates on held-out calibrations.

` + waitHelp
		cmd.Example = `  plume optimize judge start 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --wait`
	}
	fl.IntVar(&maxCalls, "max-model-calls", 0, "the most model `calls` the run makes (default: the strategy's)")
	fl.Float64Var(&maxCost, "max-cost-usd", 0, "the most the run's model calls cost, in `USD` (default: the strategy's)")
	fl.Int64Var(&seed, "seed", 0, "the `seed` of the run's choices (default: a random one, shown on the run)")
	w.addFlags(cmd)
	cmd.Args = cobra.ExactArgs(1)
	return cmd
}

// parseIntent parses --intent judge_id[:weight[:min_threshold]]; an empty weight is the
// default, 1.
func parseIntent(s string) (api.OptimizationIntent, error) {
	bad := func(why string) error {
		return cmdutil.FlagErrorf("--intent %q: %s (want judge_id[:weight[:min_threshold]])", s, why)
	}
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return api.OptimizationIntent{}, bad("too many parts")
	}
	in := api.OptimizationIntent{JudgeID: strings.TrimSpace(parts[0])}
	if in.JudgeID == "" {
		return in, bad("no judge id")
	}
	if len(parts) > 1 && parts[1] != "" {
		w, err := strconv.ParseFloat(parts[1], 64)
		if err != nil || !(w > 0) {
			return in, bad("the weight must be a positive number")
		}
		in.Weight = w
	}
	if len(parts) > 2 {
		m, err := strconv.ParseFloat(parts[2], 64)
		if err != nil || !(m >= 0 && m <= 1) {
			return in, bad("the minimum threshold must be a number from 0 to 1")
		}
		in.MinThreshold = &m
	}
	return in, nil
}

func newCmdCancel(f *cmdutil.Factory, t target) *cobra.Command {
	return &cobra.Command{
		Use:     "cancel <run_id>",
		Short:   "Cancel a queued or running optimization run (one that is over exits 2)",
		Example: fmt.Sprintf(`  plume optimize %s cancel 0192f5e0-3a4b-7c5d-8e9f-0a1b2c3d4e5f`, t.name),
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				run, err := c.CancelOptimization(ctx, args[0])
				if err != nil {
					return err
				}
				return printRun(f.IO, run)
			})
		},
	}
}

// datasetFlags are the prompt start's --dataset flags: the dataset version a run takes its
// examples from.
type datasetFlags struct {
	dataset, versionID, expected string
	inputs                       []string
	withFeedback                 bool
}

func (d *datasetFlags) addFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&d.dataset, "dataset", "", "take the examples from this dataset's rows: `name[@version]` (default: the latest version)")
	fl.StringVar(&d.versionID, "dataset-version-id", "", "take the examples from the dataset version with this `id`")
	fl.StringSliceVar(&d.inputs, "input-column", nil, "a dataset `column` whose values are the prompt's input; repeatable (several: a JSON object of them)")
	fl.StringVar(&d.expected, "expected-column", "", "the dataset `column` whose values are the outputs wanted")
	fl.BoolVar(&d.withFeedback, "with-feedback", false, "add the completions people gave feedback on to the dataset's rows")
}

// request is the run's config.dataset, nil without --dataset or --dataset-version-id.
func (d *datasetFlags) request(given func(string) bool) (*api.OptimizationDataset, error) {
	if d.dataset == "" && d.versionID == "" {
		if given("input-column") || given("expected-column") || given("with-feedback") {
			return nil, cmdutil.FlagErrorf("--input-column, --expected-column and --with-feedback need --dataset or --dataset-version-id")
		}
		return nil, nil
	}
	if len(d.inputs) == 0 {
		return nil, cmdutil.FlagErrorf("--input-column is required with a dataset: the column (or columns) whose values are the prompt's input")
	}
	out := &api.OptimizationDataset{VersionID: d.versionID, InputColumns: d.inputs, ExpectedOutputColumn: d.expected, WithFeedback: d.withFeedback}
	name, version, hasVersion := strings.Cut(d.dataset, "@")
	out.Name = name
	if hasVersion {
		n, err := strconv.Atoi(version)
		if err != nil || n < 1 {
			return nil, cmdutil.FlagErrorf("--dataset %q: the version must be a number from 1 (want name[@version])", d.dataset)
		}
		out.Version = n
	}
	return out, nil
}
