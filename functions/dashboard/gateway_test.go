package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ratelimit"
)

// gatewayConfig configures the gateway of a test deployment: every limit, its streaming URL
// and tracing of every call.
func gatewayConfig(c *config.Config) {
	c.GatewayLimits = ratelimit.Config{RequestsPerMinute: 600, TokensPerMinute: 10_000, DailyUSD: 5, MaxStaleness: time.Second}
	c.GatewayURL = "https://gw.example.com/v1"
	c.GatewayTrace = "all"
}

// TestGatewayPage: a member's session sees the gateway's endpoint with its snippets, the
// binding rule, each limit with what it counted for the session's project (not another
// project's), and the tracing mode; without configuration, the dashboard's own base + /v1 and
// "no limit".
func TestGatewayPage(t *testing.T) {
	ctx := context.Background()
	f := serveDashboard(t, apitest.New(t, apitest.Options{Config: gatewayConfig}))
	limits := f.api.Env.GatewayLimits()
	require.NoError(t, limits.Record(ctx, f.api.A.ProjectID, 1234, 1.23))
	require.NoError(t, limits.Record(ctx, f.api.B.ProjectID, 8000, 4.56))
	member, _ := f.issueKey(t, f.api.A.ProjectID, auth.RoleMember)
	b := f.browser(t)
	b.signIn(t, member)

	p := b.get(t, "/ui/gateway")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	assertPage(t, p)
	body := html.UnescapeString(p.Body)
	assert.Contains(t, body, "<h1>Gateway</h1>")
	assert.Contains(t, body, `<a href="/ui/gateway" aria-current="page">Gateway</a>`)
	assert.Contains(t, body, `value="https://gw.example.com/v1" data-testid="gateway-endpoint"`)
	assert.Contains(t, body, `data-copy="gw-endpoint"`)
	assert.Contains(t, body, "chunk by chunk", "the streaming note of a streaming endpoint")
	assert.Contains(t, body, `base_url="https://gw.example.com/v1"`)
	assert.Contains(t, body, `baseURL: "https://gw.example.com/v1"`)
	assert.Contains(t, body, "curl https://gw.example.com/v1/chat/completions")
	assert.Contains(t, body, `-H "Authorization: Bearer <your Plume key>"`)
	assert.Contains(t, body, `"model": "openai/gpt-4o-mini"`)
	assert.Contains(t, body, "<code>zeroeval/<model></code> or <code>plume/<model></code>")
	assert.Contains(t, body, `<a href="/ui/prompts">Prompts</a>`)
	assert.Contains(t, body, "600 requests a minute")
	assert.Contains(t, body, "1,234 of 10,000 tokens this minute (12%)")
	assert.Contains(t, body, `<meter id="gw-tokens" class="gw-meter" min="0" max="10000" value="1234"`)
	assert.Contains(t, body, "Spend today $1.23 of $5.00 (25%)")
	assert.NotContains(t, body, "8,000", "another project's usage")
	assert.NotContains(t, body, "4.56", "another project's usage")
	assert.Contains(t, body, "Every call is recorded")
	assert.Contains(t, body, `href="/ui/spans?tag=integration%3Dgateway" data-testid="gateway-spans"`)

	t.Run("a limit reached", func(t *testing.T) {
		require.NoError(t, limits.Record(ctx, f.api.A.ProjectID, 0, 4))
		p := b.get(t, "/ui/gateway")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, html.UnescapeString(p.Body), "Spend today $5.23 of $5.00 (100%): reached")
	})

	t.Run("the link finds every call the gateway recorded", func(t *testing.T) {
		// Spans as the gateway records them (functions/gateway, spanOf and spanTag): the root of
		// a trace of its own, and a span that joined an application's trace; beside them an
		// application's own spans, one of them of the same name.
		call := func(traceID, parent string) map[string]any {
			s := span(uuid.NewString(), traceID, parent, "chat.completions", time.Now().Add(-time.Minute), time.Second)
			s["kind"], s["tags"] = "llm", map[string]string{"integration": "gateway"}
			return s
		}
		own := uuid.NewString()
		f.api.MustDo(t, "POST", "/spans", f.api.A.Key, []any{call(own, "")})
		joined, ids := f.seedTrace(t, f.api.A.Key, "answer-ticket", 0, nil)
		f.api.MustDo(t, "POST", "/spans", f.api.A.Key, []any{call(joined, ids[0])})
		f.seedTrace(t, f.api.A.Key, "chat.completions", 0, nil) // an application's span of that name
		href := html.UnescapeString(regexpFind(t, `href="([^"]+)" data-testid="gateway-spans"`, b.get(t, "/ui/gateway").Body))
		p := b.get(t, href)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Equal(t, 2, strings.Count(p.Body, `data-testid="span-row"`), "the gateway's two calls only")
		assert.Contains(t, p.Body, `<a href="/ui/traces/`+own+`" data-testid="span-trace">`, "the call of a trace of its own")
		assert.Contains(t, p.Body, `<a href="/ui/traces/`+joined+`" data-testid="span-trace">`, "the call that joined a trace")
		assert.NotContains(t, p.Body, "answer-ticket")
	})

	t.Run("no configuration", func(t *testing.T) {
		bare := newFixture(t)
		b := bare.browser(t)
		b.signIn(t, bare.api.A.Key)
		p := b.get(t, "/ui/gateway")
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		body := html.UnescapeString(p.Body)
		assert.Contains(t, body, `value="`+bare.srv.URL+`/v1" data-testid="gateway-endpoint"`, "the dashboard's own base")
		assert.Contains(t, body, "answers a <code>stream: true</code> call in one piece")
		assert.Equal(t, 3, strings.Count(body, "no limit"), body)
		assert.NotContains(t, body, "<meter")
		assert.Contains(t, body, "Only the calls that ask are recorded")
	})
}
