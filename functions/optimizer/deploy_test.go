package optimizer_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/prompt"
)

// pinFirst is the prompt registry with someone else pinning production to version 1 just
// before the deploy's write, after every read of the deploy: the race the receipt's checks
// cannot see.
type pinFirst struct {
	*prompt.Service
	t *testing.T
}

func (p pinFirst) EnsurePinned(ctx context.Context, projectID, slug string, in prompt.EnsureInput, tag string, expected int, by string) (prompt.Version, prompt.PinResult, error) {
	_, err := p.Pin(ctx, projectID, slug, optimizer.ProductionTag, 1, "someone-else")
	require.NoError(p.t, err)
	return p.Service.EnsurePinned(ctx, projectID, slug, in, tag, expected, by)
}

// TestDeployRefusedByALatePinCreatesNoVersion: a pin made by someone else after the deploy read
// production and before it wrote is a 409 that changes nothing, above all not latest, which the
// SDKs serve by default: the candidate's version is created only together with its pin.
func TestDeployRefusedByALatePinCreatesNoVersion(t *testing.T) {
	s := newStack(t)
	base, receipt := s.previewed(t)

	env := s.api.Env
	svc := optimizer.NewService(env.Optimizations(), pinFirst{Service: env.Prompts(), t: t}, env.JudgeStore(), env.Judges(), s.api.Optimizations, env.Now)
	res := webtest.Do(t, optimizer.NewHandler(svc, nil, env.Authn()), "POST", base+":deploy", s.api.A.Key, map[string]any{"receipt": receipt, "confirm": true})
	require.Equal(t, 409, res.Status, "%s", res.Body)
	var body api.ErrorBody
	res.Decode(t, &body)
	assert.Equal(t, `tag "production" of prompt "support" is at version 1 (expected it not to exist)`, body.Error.Message)

	latest := s.api.MustDo(t, "GET", "/v1/prompts/support", s.api.A.Key, nil).Map(t)
	assert.Equal(t, 1.0, latest["version"], "latest is where it was")
	assert.Equal(t, baselinePrompt, latest["content"])
	assert.Len(t, s.versions(t), 1, "no version of the candidate")
	production := s.api.MustDo(t, "GET", "/v1/prompts/support?tag=production", s.api.A.Key, nil).Map(t)
	assert.Equal(t, 1.0, production["version"], "the other pin stands")
	run := s.api.MustDo(t, "GET", base, s.api.A.Key, nil).Map(t)
	assert.Nil(t, run["deployed_version_id"])
}
