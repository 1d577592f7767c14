// Package prompts holds `plume prompts`: the prompt registry from a terminal.
package prompts

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdPrompts returns the `plume prompts` command group.
func NewCmdPrompts(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "prompts <command>",
		Short: "List, read, version, tag, bind, compare prompts, and give feedback on their completions",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdList(f), newCmdGet(f), newCmdEnsure(f), newCmdVersions(f), newCmdTags(f),
		newCmdPin(f), newCmdSplit(f), newCmdEndSplit(f), newCmdBindModel(f), newCmdDiff(f), newCmdFeedback(f))
	return cmd
}

// versionColumns are a version's fields in text output.
var versionColumns = []cmdutil.Column{
	{Header: "Prompt", Path: "prompt"}, {Header: "Version", Path: "version"}, {Header: "Version ID", Path: "version_id"},
	{Header: "Tag", Path: "tag"}, {Header: "Model", Path: "model_id"}, {Header: "Content hash", Path: "content_hash"},
	{Header: "Created", Path: "created_at"}, {Header: "Created by", Path: "created_by"},
}

var contentBlock = cmdutil.Column{Header: "Content", Path: "content"}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the project's prompts, each with its newest version",
		Example: `  plume prompts list --where 'latest_version.model_id~gpt' --order updated_at:desc`,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				list, err := c.Prompts(ctx)
				if err != nil {
					return err
				}
				return f.IO.PrintList(list, []cmdutil.Column{{Header: "SLUG", Path: "slug"}, {Header: "LATEST", Path: "latest_version.version"},
					{Header: "MODEL", Path: "latest_version.model_id"}, {Header: "UPDATED", Path: "updated_at"}}, o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

func newCmdGet(f *cmdutil.Factory) *cobra.Command {
	var sel client.PromptSelector
	cmd := &cobra.Command{
		Use:   "get <slug>",
		Short: "Show a version of a prompt: the newest, --version N or --tag T",
		Example: `  plume prompts get support-bot --tag production
  plume prompts get support-bot --version 3 --output json | jq -r .content`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sel.Version != 0 && sel.Tag != "" {
				return cmdutil.FlagErrorf("--version and --tag cannot be used together")
			}
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				v, err := c.PromptVersion(ctx, args[0], sel)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(v, versionColumns, contentBlock)
			})
		},
	}
	cmd.Flags().IntVar(&sel.Version, "version", 0, "the version `number`")
	cmd.Flags().StringVar(&sel.Tag, "tag", "", "the `tag` (production, staging, latest, ...)")
	return cmd
}

func newCmdEnsure(f *cmdutil.Factory) *cobra.Command {
	var content, file, model string
	cmd := &cobra.Command{
		Use:   "ensure <slug>",
		Short: "Create a version of a prompt with this content, or find the one that has it",
		Long: `Create a version of a prompt with the content of --content or --file ("-" reads standard
input), or answer the existing version whose content is the same once normalised (line endings,
trailing spaces). The prompt is created with its first version.`,
		Example: `  plume prompts ensure support-bot --file prompts/support.txt --model openai/gpt-4o-mini`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text, err := textFrom(cmd, "--content", content, "--file", file)
			if err != nil {
				return err
			}
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				req := api.EnsureVersionRequest{Content: &text}
				if model != "" {
					req.ModelID = &model
				}
				v, err := c.EnsurePromptVersion(ctx, args[0], req)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(v, versionColumns)
			})
		},
	}
	cmd.Flags().StringVar(&content, "content", "", "the prompt's `text`")
	cmd.Flags().StringVar(&file, "file", "", "read the prompt's text from `path` (- for standard input)")
	cmd.Flags().StringVar(&model, "model", "", "bind this `model` to a new version (provider/model)")
	return cmd
}

// textFrom is the text of exactly one of a text flag and a file flag ("-": standard input).
func textFrom(cmd *cobra.Command, textFlag, text, fileFlag, file string) (string, error) {
	switch {
	case text != "" && file != "":
		return "", cmdutil.FlagErrorf("%s and %s cannot be used together", textFlag, fileFlag)
	case text != "":
		return text, nil
	case file == "-":
		b, err := readAll(cmd.InOrStdin())
		return string(b), err
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", cmdutil.FlagErrorf("%s: %v", fileFlag, err)
		}
		return string(b), nil
	}
	return "", cmdutil.FlagErrorf("pass %s or %s", textFlag, fileFlag)
}

func newCmdVersions(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:     "versions <slug>",
		Short:   "List the versions of a prompt, oldest first",
		Example: `  plume prompts versions support-bot --order version:desc --limit 5`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				list, err := c.PromptVersions(ctx, args[0])
				if err != nil {
					return err
				}
				return f.IO.PrintList(list, []cmdutil.Column{{Header: "VERSION", Path: "version"}, {Header: "VERSION_ID", Path: "version_id"},
					{Header: "MODEL", Path: "model_id"}, {Header: "CREATED", Path: "created_at"}, {Header: "CONTENT", Path: "content"}}, o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

func newCmdTags(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:   "tags <slug>",
		Short: "List the tags of a prompt and the version each points at",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				list, err := c.PromptTags(ctx, args[0])
				if err != nil {
					return err
				}
				return f.IO.PrintList(list, cmdutil.Cols("tag", "version", "version_id", "updated_at", "updated_by"), o.Local())
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

func newCmdPin(f *cmdutil.Factory) *cobra.Command {
	var version, expected int
	cmd := &cobra.Command{
		Use:   "pin <slug> <tag>",
		Short: "Point a tag at a version: how a version is deployed",
		Long: `Point a tag at a version. With --expected, only if the tag points at that version now
(0: only if the tag does not exist yet), checked by the API in the same write: a deploy script
never overwrites a pin someone made since it looked (exit code of a conflict otherwise).`,
		Example: `  plume prompts pin support-bot production --version 3
  plume prompts pin support-bot production --version 4 --expected 3`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if version <= 0 {
				return cmdutil.FlagErrorf("--version must be a version number (1 or more)")
			}
			var opts []client.PinOption
			if cmd.Flags().Changed("expected") {
				if expected < 0 {
					return cmdutil.FlagErrorf("--expected must be a version number, or 0 for a tag that must not exist yet")
				}
				opts = append(opts, client.IfTagAt(expected))
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				pin, err := c.PinTag(ctx, args[0], args[1], version, opts...)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(pin, []cmdutil.Column{{Header: "Prompt", Path: "prompt"}, {Header: "Tag", Path: "tag"},
					{Header: "Version", Path: "version"}, {Header: "Previous version", Path: "previous_version"}, {Header: "Version ID", Path: "version_id"}})
			})
		},
	}
	cmd.Flags().IntVar(&version, "version", 0, "the version `number` the tag points at")
	cmd.Flags().IntVar(&expected, "expected", 0, "pin only if the tag points at this version `number` now (0: only if the tag does not exist)")
	_ = cmd.MarkFlagRequired("version")
	return cmd
}

func newCmdBindModel(f *cmdutil.Factory) *cobra.Command {
	var version int
	var model string
	var unbind bool
	cmd := &cobra.Command{
		Use:   "bind-model <slug>",
		Short: "Bind a model to a version of a prompt (or --unbind it)",
		Long: `Bind a model to a version: the SDKs then call that model for the version's completions. A
model "zeroeval/<model>" or "plume/<model>" is served through the deployment's gateway.`,
		Example: `  plume prompts bind-model support-bot --version 3 --model anthropic/claude-sonnet-4-5
  plume prompts bind-model support-bot --version 3 --unbind`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case version <= 0:
				return cmdutil.FlagErrorf("--version must be a version number (1 or more)")
			case unbind == (model != ""):
				return cmdutil.FlagErrorf("pass either --model or --unbind")
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				var m *string
				if !unbind {
					m = &model
				}
				v, err := c.BindModel(ctx, args[0], version, m)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(v, versionColumns)
			})
		},
	}
	cmd.Flags().IntVar(&version, "version", 0, "the version `number`")
	cmd.Flags().StringVar(&model, "model", "", "the `model` id (provider/model)")
	cmd.Flags().BoolVar(&unbind, "unbind", false, "remove the version's model")
	_ = cmd.MarkFlagRequired("version")
	return cmd
}

func newCmdFeedback(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "feedback <command>",
		Short: "Give feedback on a prompt's completions",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	var up, down bool
	var reason, expected, metadata string
	create := &cobra.Command{
		Use:   "create <slug> <completion_id>",
		Short: "Record thumbs up or down on a completion (the llm span's id), with a reason and the expected output",
		Long: `Record a person's feedback on a completion of the prompt: the llm span's id is the completion
id. Feedback is one record per person and completion: sending it again replaces it.`,
		Example: `  plume prompts feedback create support-bot 0192f5d4-7c1e-7a3b-9f00-5a1c2e3d4b5f --thumbs-down --reason "too long" --expected-output "Reset it under Settings."`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if up == down {
				return cmdutil.FlagErrorf("pass either --thumbs-up or --thumbs-down")
			}
			req := api.FeedbackRequest{ThumbsUp: &up}
			if reason != "" {
				req.Reason = &reason
			}
			if expected != "" {
				req.ExpectedOutput = &expected
			}
			if metadata != "" {
				if !strings.HasPrefix(strings.TrimSpace(metadata), "{") {
					return cmdutil.FlagErrorf("--metadata must be a JSON object")
				}
				req.Metadata = []byte(metadata)
			}
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				fb, err := c.SendFeedback(ctx, args[0], args[1], req)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(fb, FeedbackColumns)
			})
		},
	}
	create.Flags().BoolVar(&up, "thumbs-up", false, "the completion is good")
	create.Flags().BoolVar(&down, "thumbs-down", false, "the completion is bad")
	create.Flags().StringVar(&reason, "reason", "", "why, in a `sentence`")
	create.Flags().StringVar(&expected, "expected-output", "", "what the completion should have been")
	create.Flags().StringVar(&metadata, "metadata", "", "a JSON `object` stored with the feedback")
	cmd.AddCommand(create)
	return cmd
}

// FeedbackColumns are a feedback record's fields in text output.
var FeedbackColumns = []cmdutil.Column{
	{Header: "Feedback ID", Path: "id"}, {Header: "Completion", Path: "completion_id"}, {Header: "Prompt", Path: "prompt_slug"},
	{Header: "Version ID", Path: "prompt_version_id"}, {Header: "Thumbs up", Path: "thumbs_up"}, {Header: "Reason", Path: "reason"},
	{Header: "Expected output", Path: "expected_output"}, {Header: "Judge", Path: "judge_id"}, {Header: "Expected score", Path: "expected_score"},
}

// selector parses a version reference: a number, else a tag.
func selector(ref string) client.PromptSelector {
	if n, err := strconv.Atoi(ref); err == nil && n > 0 {
		return client.PromptSelector{Version: n}
	}
	return client.PromptSelector{Tag: ref}
}

func describe(v api.PromptVersion) string { return fmt.Sprintf("%s@%d", v.Prompt, v.Version) }
