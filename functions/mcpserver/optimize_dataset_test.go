package mcpserver_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
)

// TestStartOptimizationFromDataset: start-prompt-optimization takes a dataset version as its
// examples: unconfirmed it says which rows it would read and changes nothing; confirmed, the
// run reads them and its report names the version; an unknown dataset is the API's 404.
func TestStartOptimizationFromDataset(t *testing.T) {
	fake := fakemodeltest.Start(t)
	models := llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: fake.OpenAIBaseURL(), APIKey: "sk-test"}},
		JudgeModel: "openai/gpt-4o-mini"}, llm.Options{BaseDelay: time.Millisecond})
	s := newToolStack(t, apitest.Options{Models: models})
	c := restClientFor(t, s.api, s.api.A)
	ctx := context.Background()
	s.api.EnsurePrompt(t, s.api.A, "support", "You answer questions about {{product}}.")
	s.api.MustDo(t, "POST", "/v1/datasets", s.api.A.Key, map[string]any{"name": "faq"})
	var rows []any
	for i := range 5 {
		rows = append(rows, map[string]any{"q": fmt.Sprintf("question %d", i), "product": "Plume", "a": fmt.Sprintf("answer %d", i)})
	}
	s.api.MustDo(t, "POST", "/v1/datasets/faq/data", s.api.A.Key, map[string]any{"data": rows})
	cs, err := s.connect(t, s.api.A.Key)
	require.NoError(t, err)

	args := map[string]any{"prompt_slug": "support", "optimizer_type": "quick_refine", "seed": 7,
		"dataset": map[string]any{"name": "faq", "input_columns": []string{"q"}, "expected_output_column": "a"}}
	res := call(t, cs, "start-prompt-optimization", args, nil)
	assert.Contains(t, text(res), `on the first 200 rows of dataset "faq" (its latest version), input q, expected output a, scored by the dataset's expected outputs`)
	runs, err := c.PromptOptimizationRuns(ctx, "support", 10, 0)
	require.NoError(t, err)
	assert.Empty(t, runs, "unconfirmed: no run")

	args["confirm"] = true
	var run api.OptimizationRun
	res = call(t, cs, "start-prompt-optimization", args, &run)
	require.False(t, res.IsError, text(res))
	require.Eventually(t, func() bool {
		run, err = c.OptimizationRun(ctx, run.ID)
		return err == nil && run.Status == "succeeded"
	}, time.Minute, 20*time.Millisecond, "run %+v", run)
	require.NotNil(t, run.Metrics.Dataset)
	assert.Equal(t, api.OptimizationReportDataset{Name: "faq", Version: 1, VersionID: run.Config.Dataset.VersionID, RowCount: 5, Examples: 5}, *run.Metrics.Dataset)

	args["dataset"] = map[string]any{"name": "nope", "input_columns": []string{"q"}}
	res = call(t, cs, "start-prompt-optimization", args, nil)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), `dataset "nope" not found`)
}
