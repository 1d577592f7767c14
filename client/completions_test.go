package client

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestPromptCompletions: a prompt's completions page by page against the whole API, with their
// feedback and judge evaluations, filtered by version, and an unknown prompt's ErrNotFound.
func TestPromptCompletions(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey(a.A.Key), WithProject(a.A.ProjectID), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	ctx := context.Background()

	content := "You answer support questions."
	v, err := c.EnsurePromptVersion(ctx, "support", api.EnsureVersionRequest{Content: &content})
	require.NoError(t, err)
	name, tpl := "helpful", "Is it helpful?\n{{input}}\n{{output}}"
	j, err := c.CreateJudge(ctx, api.JudgeRequest{Name: &name, Template: &tpl})
	require.NoError(t, err)
	_, err = c.LinkJudge(ctx, "support", j.ID, true)
	require.NoError(t, err)
	var ids []string // newest first
	for i := range 3 {
		id := uuid.NewString()
		ids = append(ids, id)
		a.MustDo(t, "POST", "/spans", a.A.Key, []any{apitest.LLMSpan(id, uuid.NewString(), "", "support", v.ID, "question", "answer", time.Now().Add(-time.Minute*time.Duration(10-i)))})
	}
	ids[0], ids[2] = ids[2], ids[0]
	up, reason := true, "right"
	_, err = c.SendFeedback(ctx, "support", ids[0], api.FeedbackRequest{ThumbsUp: &up, Reason: &reason})
	require.NoError(t, err)
	pass := true
	_, err = c.RecordEvaluations(ctx, j.ID, []api.EvaluationRequest{{SpanID: ids[0], EvaluationResult: &pass, EvaluationReason: "fine"}})
	require.NoError(t, err)

	first, err := c.PromptCompletions(ctx, "support", CompletionsOptions{Limit: 2})
	require.NoError(t, err)
	require.Len(t, first.Completions, 2)
	require.NotNil(t, first.NextCursor)
	top := first.Completions[0]
	assert.Equal(t, ids[0], top.SpanID)
	assert.Equal(t, 1, *top.PromptVersion)
	assert.Equal(t, "question", *top.Input.Text)
	require.Len(t, top.Feedback, 1)
	assert.Equal(t, "right", *top.Feedback[0].Reason)
	require.Len(t, top.Evaluations, 1)
	assert.Equal(t, j.ID, top.Evaluations[0].JudgeID)
	assert.True(t, top.Evaluations[0].EvaluationResult)
	second, err := c.PromptCompletions(ctx, "support", CompletionsOptions{Limit: 2, Cursor: *first.NextCursor, Version: 1})
	require.NoError(t, err)
	require.Len(t, second.Completions, 1)
	assert.Equal(t, ids[2], second.Completions[0].SpanID)
	assert.Nil(t, second.NextCursor)

	_, err = c.PromptCompletions(ctx, "nope", CompletionsOptions{})
	assert.ErrorIs(t, err, ErrNotFound)
	_, err = c.PromptCompletions(ctx, "support", CompletionsOptions{Cursor: "bogus"})
	assert.ErrorIs(t, err, ErrInvalid)
}
