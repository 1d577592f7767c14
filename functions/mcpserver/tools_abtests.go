package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// ListABTestsInput takes nothing: the tests of the key's project.
type ListABTestsInput struct{}

// ListABTestsOutput is list-ab-tests' answer.
type ListABTestsOutput struct {
	Tests []api.ABTest `json:"tests" jsonschema:"the project's A/B tests by name: status (running or completed), variants (the first is the control) with their weights, started_at and ends_at"`
}

// GetABTestInput names a test.
type GetABTestInput struct {
	Name string `json:"name" jsonschema:"the test's name (the SDK's choice_name), as list-ab-tests answers it"`
}

// GetABTestOutput is get-ab-test's answer.
type GetABTestOutput struct {
	Report api.ABReport `json:"report" jsonschema:"per variant the entities that got it and per signal the mean with its 95% interval; each variant against the control with Welch's t-test at alpha (0.05 split over the comparisons); significant is null until the test has completed (decided)"`
}

// SplitVariant is a version of a prompt split and its weight.
type SplitVariant struct {
	Version int     `json:"version" jsonschema:"a version number of the prompt"`
	Weight  float64 `json:"weight" jsonschema:"its weight, 0 or more; weights are taken over their total"`
}

// SplitPromptTagInput starts a split of a prompt's tag
// (POST /projects/{project_id}/prompts/{slug}/tags/{tag}:split).
type SplitPromptTagInput struct {
	PromptSlug   string         `json:"prompt_slug" jsonschema:"the prompt's slug, e.g. support-bot"`
	Tag          string         `json:"tag" jsonschema:"the tag whose traffic is split, e.g. production; it must exist and cannot be latest"`
	Variants     []SplitVariant `json:"variants" jsonschema:"2 to 20 versions with their weights; the first is the control"`
	DurationDays int            `json:"duration_days" jsonschema:"how many days the split runs (1 to 3650) before it completes by itself"`
	Name         string         `json:"name,omitempty" jsonschema:"the A/B test's name, new in the project; omit for <slug>.<tag>.<start time>"`
	Confirm      bool           `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// EndPromptSplitInput ends a tag's running split.
type EndPromptSplitInput struct {
	PromptSlug string `json:"prompt_slug" jsonschema:"the prompt's slug, e.g. support-bot"`
	Tag        string `json:"tag" jsonschema:"the tag whose running split ends"`
	Confirm    bool   `json:"confirm,omitempty" jsonschema:"must be true; without it the tool changes nothing and says what it would do"`
}

// splitPromptTag starts a split; without confirm it says what it would start.
func splitPromptTag(ctx context.Context, c *client.Client, in SplitPromptTagInput) (api.PromptSplit, error) {
	if in.PromptSlug == "" || in.Tag == "" {
		return api.PromptSplit{}, errInput("prompt_slug and tag are required: list-prompt-versions answers a prompt's tags")
	}
	if len(in.Variants) < 2 {
		return api.PromptSplit{}, errInput("variants needs at least two versions with their weights, the control first")
	}
	req := api.PromptSplitRequest{Name: in.Name, DurationDays: float64(in.DurationDays)}
	shares := make([]string, len(in.Variants))
	for i, v := range in.Variants {
		req.Variants = append(req.Variants, api.PromptSplitVariant{Version: api.WholeNumber(v.Version), Weight: v.Weight})
		shares[i] = fmt.Sprintf("version %d (weight %g)", v.Version, v.Weight)
	}
	if !in.Confirm {
		return api.PromptSplit{}, notConfirmed(fmt.Sprintf("split tag %q of prompt %s between %s for %d days, %s the control: "+
			"GET /v1/prompts/%s?tag=%s then serves each version by its weight", in.Tag, in.PromptSlug, strings.Join(shares, ", "),
			in.DurationDays, shares[0], in.PromptSlug, in.Tag))
	}
	return c.SplitTag(ctx, in.PromptSlug, in.Tag, req)
}

// endPromptSplit ends a split; without confirm it says which.
func endPromptSplit(ctx context.Context, c *client.Client, in EndPromptSplitInput) (api.PromptSplit, error) {
	if in.PromptSlug == "" || in.Tag == "" {
		return api.PromptSplit{}, errInput("prompt_slug and tag are required: list-ab-tests answers the splits' prompts and tags")
	}
	if !in.Confirm {
		return api.PromptSplit{}, notConfirmed(fmt.Sprintf("end the running split of tag %q of prompt %s now: the tag serves its own version again "+
			"and the split's A/B test completes, its report deciding now rather than at its planned end", in.Tag, in.PromptSlug))
	}
	return c.EndSplit(ctx, in.PromptSlug, in.Tag)
}

// abTestTools are the tools of A/B tests: the same routes as the CLI's and the API's.
func (s *server) abTestTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "list-ab-tests",
			Description: "List the project's A/B tests (ze.choose): status, variants and weights, start and end.",
			Annotations: readOnly("List A/B tests")},
			func(ctx context.Context, c *client.Client, _ ListABTestsInput) (ListABTestsOutput, error) {
				tests, err := c.ABTests(ctx)
				if tests == nil {
					tests = []api.ABTest{}
				}
				return ListABTestsOutput{Tests: tests}, err
			}),
		newTool(s, &mcp.Tool{Name: "get-ab-test",
			Description: "Read an A/B test's report: choices and signal means with 95% intervals per variant, and whether each variant " +
				"differs from the control (Welch's t-test, Bonferroni), decided only once the test has completed.",
			Annotations: readOnly("Get an A/B test's report")},
			func(ctx context.Context, c *client.Client, in GetABTestInput) (GetABTestOutput, error) {
				if err := requireID("name", in.Name, "list-ab-tests"); err != nil {
					return GetABTestOutput{}, err
				}
				rep, err := c.ABTest(ctx, in.Name)
				return GetABTestOutput{Report: rep}, err
			}),
		newTool(s, &mcp.Tool{Name: "split-prompt-tag",
			Description: "Split a prompt tag's traffic between versions for a number of days: an A/B test of the versions (get-ab-test reports it), " +
				"each version served by its weight, sticky per user or session. Requires confirm: true.",
			Annotations: destructive("Split a prompt tag between versions", false)}, splitPromptTag),
		newTool(s, &mcp.Tool{Name: "end-prompt-split",
			Description: "End a prompt tag's running split now: the tag serves its own version again and the split's A/B test completes. Requires confirm: true.",
			Annotations: destructive("End a prompt split", true)}, endPromptSplit),
	}
}
