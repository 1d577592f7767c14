package client

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/prompt"
)

// TestListsPastOneAnswer: against the whole API, lists whose items pass one answer's budget
// (api.MaxAnswerBytes) come whole from the client: Prompts and PromptVersions follow the next
// offsets of 8 prompts and 8 versions of the longest content JSON escapes (512 KB each, the
// server answers 5 per answer), and Evaluations fills a page of 40 evaluations of the longest
// reasons (96 KB each, 31 per answer) from its next offset, its limit the one asked.
func TestListsPastOneAnswer(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey(a.A.Key), WithProject(a.A.ProjectID), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	ctx := context.Background()

	content := func(i int) string {
		p := fmt.Sprintf("%d: ", i)
		return p + strings.Repeat(`"\`, (prompt.MaxContentBytes-len(p))/2)
	}
	for i := range 8 {
		_, err := c.EnsurePromptVersion(ctx, "big", api.EnsureVersionRequest{Content: new(content(i))})
		require.NoError(t, err)
		if i > 0 {
			_, err = c.EnsurePromptVersion(ctx, fmt.Sprintf("big-%d", i), api.EnsureVersionRequest{Content: new(content(100 + i))})
			require.NoError(t, err)
		}
	}
	first := a.MustDo(t, "GET", "/projects/"+a.A.ProjectID+"/prompts/big/versions", a.A.Key, nil)
	require.NotEmpty(t, first.Header.Get(api.NextOffsetHeader), "the server cuts the list")

	versions, err := c.PromptVersions(ctx, "big")
	require.NoError(t, err)
	require.Len(t, versions, 8)
	for i, v := range versions {
		assert.Equal(t, i+1, v.Version)
		assert.Equal(t, content(i), v.Content)
	}
	prompts, err := c.Prompts(ctx)
	require.NoError(t, err)
	assert.Len(t, prompts, 8)

	var criteria []any
	for k := range judge.MaxCriteria {
		criteria = append(criteria, map[string]any{"key": fmt.Sprintf("c%02d", k), "label": "a criterion"})
	}
	var j api.Judge
	a.MustDo(t, "POST", "/projects/"+a.A.ProjectID+"/judges", a.A.Key,
		map[string]any{"name": "long reasons", "template": "Is it right? {{output}}", "criteria": criteria}).Decode(t, &j)
	var spans []any
	for i := range 40 {
		spans = append(spans, map[string]any{"id": fmt.Sprintf("00000000-0000-4000-8000-%012d", i), "trace_id": "00000000-0000-4000-8000-999999999999",
			"name": "judged", "started_at": 1.7e9})
	}
	a.MustDo(t, "POST", "/spans", a.A.Key, spans)
	var evs []api.EvaluationRequest
	for i := range 40 {
		scores := map[string]api.CriterionScore{}
		for k := range judge.MaxCriteria {
			scores[fmt.Sprintf("c%02d", k)] = api.CriterionScore{Score: new(1.0), Reason: strings.Repeat("c", judge.MaxCriterionReasonBytes)}
		}
		evs = append(evs, api.EvaluationRequest{SpanID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), EvaluationResult: new(true),
			EvaluationReason: strings.Repeat("r", judge.MaxReasonBytes), CriteriaScores: scores})
	}
	recorded, err := c.RecordEvaluations(ctx, j.ID, evs)
	require.NoError(t, err)
	assert.Equal(t, 40, recorded.Count, "all recorded")
	assert.Less(t, len(recorded.Evaluations), 40, "the answer holds what fits")

	page, err := c.Evaluations(ctx, j.ID, EvaluationQuery{Limit: 40})
	require.NoError(t, err)
	assert.Len(t, page.Evaluations, 40, "a page filled from its next offset")
	assert.Equal(t, 40, page.Limit)
	assert.Equal(t, 40, page.Total)
	seen := map[string]bool{}
	for _, e := range page.Evaluations {
		seen[e.SpanID] = true
	}
	assert.Len(t, seen, 40, "each evaluation once")
	res := a.Do(t, http.MethodGet, "/projects/"+a.A.ProjectID+"/judges/"+j.ID+"/evaluations?limit=40", a.A.Key, nil)
	var one api.EvaluationPage
	res.Decode(t, &one)
	assert.Less(t, one.Limit, 40, "one answer holds fewer, its limit their number")
	assert.Len(t, one.Evaluations, one.Limit)
}
