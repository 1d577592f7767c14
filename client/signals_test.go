package client

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestSignalsAndABTests: the signal and A/B methods against the whole API.
func TestSignalsAndABTests(t *testing.T) {
	a := apitest.New(t, apitest.Options{})
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(srv.Close)
	c, err := New(WithBaseURL(srv.URL), WithAPIKey(a.A.Key), WithProject(a.A.ProjectID), WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	ctx := context.Background()

	span := uuid.NewString()
	choice, err := c.RecordChoice(ctx, api.ABChoiceRequest{EntityType: "span", EntityID: span, ChoiceName: "prompt-v2", VariantKey: "v2",
		Variants: api.OrderedValues{{Key: "v1", Value: "old"}, {Key: "v2", Value: "new"}}, Weights: map[string]float64{"v1": 0.5, "v2": 0.5}, DurationDays: 7})
	require.NoError(t, err)
	assert.Equal(t, "running", choice.TestStatus)
	ans, err := c.SendSignals(ctx, []api.SignalRequest{
		{EntityType: "span", EntityID: span, Name: "resolved", Value: json.RawMessage(`true`)},
		{EntityType: "span", EntityID: span, Name: "csat", Value: json.RawMessage(`4.5`)},
	})
	require.NoError(t, err)
	assert.Equal(t, 2, ans.ProcessedCount)
	sigs, err := c.EntitySignals(ctx, "span", span)
	require.NoError(t, err)
	require.Len(t, sigs, 2)
	assert.Equal(t, "csat", sigs[0].Name)
	assert.Equal(t, 4.5, sigs[0].Value)

	tests, err := c.ABTests(ctx)
	require.NoError(t, err)
	require.Len(t, tests, 1)
	assert.Equal(t, "v1", tests[0].Variants[0].Key, "the order sent")
	rep, err := c.ABTest(ctx, "prompt-v2")
	require.NoError(t, err)
	assert.Equal(t, int64(1), rep.Results[1].Choices)
	assert.Len(t, rep.Results[1].Signals, 2)

	_, err = c.ABTest(ctx, "nope")
	var apiErr *Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 404, apiErr.Status)
	_, err = c.SendSignals(ctx, []api.SignalRequest{{EntityType: "span", EntityID: span, Name: "x", Value: json.RawMessage(`"maybe"`)}})
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, 400, apiErr.Status)
}
