package judges

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdJudges returns the `plume judges` command group.
func NewCmdJudges(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "judges <command>",
		Short: "Define judges, link them to prompts, read their evaluations and calibrate them",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdList(f), newCmdGet(f), newCmdCreate(f), newCmdUpdate(f), newCmdCriteria(f),
		newCmdEvaluations(f), newCmdPerformance(f), newCmdLink(f, true), newCmdLink(f, false),
		newCmdBackfill(f), newCmdVersions(f), newCmdFeedback(f))
	return cmd
}

// judgeColumns are a judge's fields in text output.
var judgeColumns = []cmdutil.Column{
	{Header: "ID", Path: "id"}, {Header: "Name", Path: "name"}, {Header: "Evaluation type", Path: "evaluation_type"},
	{Header: "Status", Path: "status"}, {Header: "Score min", Path: "score_min"}, {Header: "Score max", Path: "score_max"},
	{Header: "Pass threshold", Path: "pass_threshold"}, {Header: "Sample rate", Path: "sample_rate"},
	{Header: "Temperature", Path: "temperature"}, {Header: "Model", Path: "model"}, {Header: "Target prompt", Path: "target_prompt"},
	{Header: "Tag filter", Path: "tag_filter"}, {Header: "Linked prompts", Path: "linked_prompts"},
	{Header: "Criteria source", Path: "criteria_source"}, {Header: "Template version", Path: "template_version"},
	{Header: "Backfill", Path: "backfill"}, {Header: "Evaluations", Path: "evaluation_count"}, {Header: "Pass rate", Path: "pass_rate"},
	{Header: "Created", Path: "created_at"}, {Header: "Created by", Path: "created_by"},
	{Header: "Updated", Path: "updated_at"}, {Header: "Updated by", Path: "updated_by"},
}

var templateBlock = cmdutil.Column{Header: "Template", Path: "template"}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the project's judges, oldest first",
		Example: `  plume judges list --where status=active --where 'linked_prompts~support-bot'`,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				list, err := c.Judges(ctx)
				if err != nil {
					return err
				}
				return f.IO.PrintList(list, []cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "NAME", Path: "name"},
					{Header: "TYPE", Path: "evaluation_type"}, {Header: "STATUS", Path: "status"}, {Header: "SAMPLE_RATE", Path: "sample_rate"},
					{Header: "PROMPTS", Path: "linked_prompts"}, {Header: "EVALUATIONS", Path: "evaluation_count"},
					{Header: "PASS_RATE", Path: "pass_rate"}, {Header: "UPDATED", Path: "updated_at"}}, o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

func newCmdGet(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "get <judge_id>",
		Short:   "Show a judge: its definition, the prompts it is linked to and its template",
		Example: `  plume judges get 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --output json | jq -r .template`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				j, err := c.Judge(ctx, args[0])
				if err != nil {
					return err
				}
				return f.IO.PrintItem(j, judgeColumns, templateBlock)
			})
		},
	}
}

// definition holds the flags of a judge's definition, which create and update share; each
// is sent only when given.
type definition struct {
	name, prompt, promptFile, evaluationType, model, targetPrompt, tagMatch string
	scoreMin, scoreMax, passThreshold, sampleRate, temperature              float64
	tags                                                                    []string
	noTagFilter                                                             bool
	backfill                                                                int
}

func (d *definition) addFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&d.name, "name", "", "the judge's `name`")
	fl.StringVar(&d.prompt, "prompt", "", "the judge's prompt `text` (its template; {{input}} and {{output}} are the span's)")
	fl.StringVar(&d.promptFile, "prompt-file", "", "read the judge's prompt from `path` (- for standard input)")
	fl.StringVar(&d.evaluationType, "evaluation-type", "", "the evaluation `type`: binary (pass or fail; the default) or scored (a score from --score-min to --score-max)")
	fl.Float64Var(&d.scoreMin, "score-min", 0, "a scored judge's lowest `score` (server default 0)")
	fl.Float64Var(&d.scoreMax, "score-max", 0, "a scored judge's highest `score` (server default 10)")
	fl.Float64Var(&d.passThreshold, "pass-threshold", 0, "the least `score` that passes (server default: min + 0.7 × range)")
	fl.Float64Var(&d.sampleRate, "sample-rate", 0, "the share of spans evaluated, from 0 to 1 (server default 1)")
	fl.Float64Var(&d.temperature, "temperature", 0, "the judge model's temperature, from 0 to 2 (server default 0)")
	fl.StringVar(&d.model, "model", "", "the judge `model` (provider/model; default: the deployment's judge model)")
	fl.StringVar(&d.targetPrompt, "target-prompt", "", "evaluate only the completions of this prompt `slug`")
	fl.StringArrayVar(&d.tags, "tag", nil, "evaluate only spans with this tag, `key=value`; repeatable (several values of one key: any of them)")
	fl.StringVar(&d.tagMatch, "tag-match", "", "with several --tag keys, `all` of them match (the default) or any")
	fl.IntVar(&d.backfill, "backfill", 0, "the `count` of most recent spans the judge evaluates once created")
}

// request is the JudgeRequest of the flags given.
func (d *definition) request(cmd *cobra.Command) (api.JudgeRequest, error) {
	var req api.JudgeRequest
	given := cmd.Flags().Changed
	if given("name") {
		req.Name = &d.name
	}
	if given("prompt") || given("prompt-file") {
		text, err := textFrom(cmd.InOrStdin(), "--prompt", d.prompt, "--prompt-file", d.promptFile)
		if err != nil {
			return req, err
		}
		req.Template = &text
	}
	if given("evaluation-type") {
		if d.evaluationType != api.EvaluationBinary && d.evaluationType != api.EvaluationScored {
			return req, cmdutil.FlagErrorf("--evaluation-type must be binary or scored, not %q", d.evaluationType)
		}
		req.EvaluationType = &d.evaluationType
	}
	for _, n := range []struct {
		flag string
		v    *float64
		dst  **float64
	}{
		{"score-min", &d.scoreMin, &req.ScoreMin}, {"score-max", &d.scoreMax, &req.ScoreMax},
		{"pass-threshold", &d.passThreshold, &req.PassThreshold}, {"sample-rate", &d.sampleRate, &req.SampleRate},
		{"temperature", &d.temperature, &req.Temperature},
	} {
		if given(n.flag) {
			*n.dst = n.v
		}
	}
	if given("model") {
		req.Model = orNull(d.model)
	}
	if given("target-prompt") {
		req.TargetPrompt = orNull(d.targetPrompt)
	}
	switch {
	case d.noTagFilter && (len(d.tags) > 0 || given("tag-match")):
		return req, cmdutil.FlagErrorf("--no-tag-filter cannot be used with --tag or --tag-match")
	case d.noTagFilter:
		req.TagFilter = api.Null[api.TagFilter]()
	case len(d.tags) > 0:
		filter, err := tagFilter(d.tags, d.tagMatch)
		if err != nil {
			return req, err
		}
		req.TagFilter = api.Some(filter)
	case given("tag-match"):
		return req, cmdutil.FlagErrorf("--tag-match needs --tag")
	}
	if given("backfill") {
		req.Backfill = &d.backfill
	}
	return req, nil
}

// orNull is s, or null (which clears the field) when s is empty.
func orNull(s string) api.Nullable[string] {
	if s == "" {
		return api.Null[string]()
	}
	return api.Some(s)
}

// tagFilter parses the --tag key=value flags.
func tagFilter(tags []string, match string) (api.TagFilter, error) {
	if match != "" && match != "all" && match != "any" {
		return api.TagFilter{}, cmdutil.FlagErrorf("--tag-match must be all or any, not %q", match)
	}
	filter := api.TagFilter{Tags: map[string][]string{}, Match: match}
	for _, t := range tags {
		k, v, ok := strings.Cut(t, "=")
		if k, v = strings.TrimSpace(k), strings.TrimSpace(v); !ok || k == "" || v == "" {
			return api.TagFilter{}, cmdutil.FlagErrorf("--tag %q: want key=value", t)
		}
		filter.Tags[k] = append(filter.Tags[k], v)
	}
	return filter, nil
}

// textFrom is the text of exactly one of a text flag and a file flag ("-": in).
func textFrom(in io.Reader, textFlag, text, fileFlag, file string) (string, error) {
	switch {
	case text != "" && file != "":
		return "", cmdutil.FlagErrorf("%s and %s cannot be used together", textFlag, fileFlag)
	case text != "":
		return text, nil
	case file == "-":
		b, err := io.ReadAll(in)
		if err != nil {
			return "", cmdutil.FlagErrorf("%s: read standard input: %v", fileFlag, err)
		}
		return string(b), nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", cmdutil.FlagErrorf("%s: %v", fileFlag, err)
		}
		return string(b), nil
	}
	return "", cmdutil.FlagErrorf("pass %s or %s", textFlag, fileFlag)
}

func newCmdCreate(f *cmdutil.Factory) *cobra.Command {
	var d definition
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a judge",
		Long: `Create a judge: a model prompt that evaluates the project's llm spans as they arrive, a
--sample-rate share of them, optionally only those of --target-prompt or with the --tag tags.
A binary judge answers pass or fail; a scored judge a score, which passes from --pass-threshold
on. Its criteria are read from the prompt's headings and bold labels. With --backfill N it also
evaluates the N most recent spans.`,
		Example: `  plume judges create --name helpful --prompt-file judges/helpful.md --target-prompt support-bot
  plume judges create --name tone --prompt "Rate the tone of {{output}}." --evaluation-type scored \
    --score-min 0 --score-max 10 --pass-threshold 7 --sample-rate 0.2 --tag env=production --backfill 100`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if d.name == "" {
				return cmdutil.FlagErrorf("pass --name")
			}
			if d.prompt == "" && d.promptFile == "" {
				return cmdutil.FlagErrorf("pass --prompt or --prompt-file: the judge's prompt")
			}
			req, err := d.request(cmd)
			if err != nil {
				return err
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				j, err := c.CreateJudge(ctx, req)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(j, judgeColumns, templateBlock)
			})
		},
	}
	d.addFlags(cmd)
	return cmd
}

func newCmdUpdate(f *cmdutil.Factory) *cobra.Command {
	var d definition
	var pause, resume bool
	cmd := &cobra.Command{
		Use:   "update <judge_id>",
		Short: "Change a judge: only the flags given change",
		Long: `Change a judge's definition: the flags given change, the others are kept. A new prompt
makes a new template version (see "plume judges versions"). An empty --model or --target-prompt
clears it; --tag replaces the whole tag filter and --no-tag-filter removes it. A paused judge
evaluates nothing until resumed.`,
		Example: `  plume judges update 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --sample-rate 0.5 --model openai/gpt-4o
  plume judges update 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --pause`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pause && resume {
				return cmdutil.FlagErrorf("--pause and --resume cannot be used together")
			}
			req, err := d.request(cmd)
			if err != nil {
				return err
			}
			if pause || resume {
				req.Paused = &pause
			}
			if req == (api.JudgeRequest{}) {
				return cmdutil.FlagErrorf("nothing to change: pass the flags of the fields to change")
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				j, err := c.UpdateJudge(ctx, args[0], req)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(j, judgeColumns, templateBlock)
			})
		},
	}
	d.addFlags(cmd)
	cmd.Flags().BoolVar(&d.noTagFilter, "no-tag-filter", false, "remove the tag filter: evaluate spans whatever their tags")
	cmd.Flags().BoolVar(&pause, "pause", false, "stop evaluating spans")
	cmd.Flags().BoolVar(&resume, "resume", false, "evaluate spans again")
	return cmd
}

// newCmdLink returns `judges link` (link true) or `judges unlink`.
func newCmdLink(f *cmdutil.Factory, link bool) *cobra.Command {
	var slug string
	cmd := &cobra.Command{
		Use:     "link <judge_id>",
		Short:   "Link a judge to a prompt: an intent of the prompt's optimizations",
		Example: `  plume judges link 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --prompt support-bot`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				j, err := c.LinkJudge(ctx, slug, args[0], link)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(j, judgeColumns)
			})
		},
	}
	if !link {
		cmd.Use = "unlink <judge_id>"
		cmd.Short = "Unlink a judge from a prompt"
		cmd.Example = `  plume judges unlink 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --prompt support-bot`
	}
	cmd.Flags().StringVar(&slug, "prompt", "", "the prompt's `slug`")
	_ = cmd.MarkFlagRequired("prompt")
	return cmd
}

func newCmdBackfill(f *cmdutil.Factory) *cobra.Command {
	var count int
	cmd := &cobra.Command{
		Use:   "backfill <judge_id>",
		Short: "Have a judge evaluate the most recent spans",
		Long: `Ask the judge to evaluate its --count most recent spans. The request is queued: the
evaluations appear within minutes ("plume judges evaluations"); spans it has evaluated already,
with the same content, are skipped. A paused judge is not backfilled (exit 2).`,
		Example: `  plume judges backfill 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --count 200`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if count <= 0 {
				return cmdutil.FlagErrorf("--count must be 1 or more")
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				b, err := c.BackfillJudge(ctx, args[0], count)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(b, []cmdutil.Column{{Header: "Judge", Path: "judge_id"}, {Header: "Count", Path: "count"},
					{Header: "Status", Path: "status"}, {Header: "Requested", Path: "requested_at"}})
			})
		},
	}
	cmd.Flags().IntVar(&count, "count", 0, "how many of the most recent spans to evaluate")
	_ = cmd.MarkFlagRequired("count")
	return cmd
}

func newCmdVersions(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:   "versions <judge_id>",
		Short: "List a judge's template versions, newest first",
		Long: `List a judge's template versions, newest first: the one it was created with and each that
replaced it, by an update (source edit) or the promotion of an optimization run (its run id).`,
		Example: `  plume judges versions 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --select version,source,run_id`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				list, err := c.JudgeVersions(ctx, args[0])
				if err != nil {
					return err
				}
				return f.IO.PrintList(list, cmdutil.Cols("version", "source", "run_id", "created_at", "created_by", "template"), o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}
