package mcpserver

import (
	"context"

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

// abTestTools are the read tools of A/B tests: the same routes as the CLI's and the API's.
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
	}
}
