package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/ratelimit"
)

// TestFeedbackLinksCommands: a link created, listed and revoked, text and json; its URL is
// absolute and opens the public page.
func TestFeedbackLinksCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	h.api.EnsurePrompt(t, h.api.A, "support-bot", "You help with {{product}}.")
	h.api.EnsurePrompt(t, h.api.A, "billing", "You explain invoices.")
	h.goldenBoth("feedback-links-create", "feedback-links", "create", "--prompt", "support-bot", "--expires-in", "72h")
	h.goldenBoth("feedback-links-list", "feedback-links", "list")

	var l api.Link
	h.okJSON(&l, "feedback-links", "create", "--prompt", "billing")
	require.True(t, strings.HasPrefix(l.URL, h.url+"/f/plf_"), "a relative URL is resolved against the base URL: %s", l.URL)
	assert.Equal(t, api.LinkActive, l.Status)
	assert.WithinDuration(t, time.Now().Add(7*24*time.Hour), l.ExpiresAt, time.Minute, "the default lifetime")
	page := h.api.Do(t, "GET", strings.TrimPrefix(l.URL, h.url), "", nil)
	assert.Equal(t, 200, page.Status, "the URL opens the link's page without a key")

	h.goldenBoth("feedback-links-revoke", "feedback-links", "revoke", l.ID)
	assert.Equal(t, []string{l.ID}, h.listedIDs("feedback-links", "list", "--where", "status=revoked"))
	assert.Len(t, h.listedIDs("feedback-links", "list", "--where", "status=active"), 2)
	assert.NotEqual(t, 200, h.api.Do(t, "GET", strings.TrimPrefix(l.URL, h.url), "", nil).Status, "a revoked link's page")
}

// TestModelPricesCommands: a project's prices set, listed and deleted, text and json, and a
// price applied to the spans ingested after it.
func TestModelPricesCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	h.goldenBoth("model-prices-set", "model-prices", "set", "OpenAI/My-Fine-Tune", "--input-price", "0.3", "--output-price", "1.2", "--provider", "openai")
	h.ok("model-prices", "set", "gpt-4o-mini", "--input-price", "1000", "--output-price", "2000", "--cached-input-price", "500")
	h.goldenBoth("model-prices-list", "model-prices", "list")
	h.goldenBoth("model-prices-get", "model-prices", "get", "openai/my-fine-tune")
	var shipped api.ModelPrice
	h.okJSON(&shipped, "model-prices", "get", "gpt-4o")
	assert.Equal(t, "price_table", shipped.Source, "a model without a project price: the shipped table's")

	// The project's price wins over the table's for spans ingested from then on.
	span := uuid.NewString()
	h.api.MustDo(t, "POST", "/spans", h.api.A.Key, []any{apitest.LLMSpan(span, uuid.NewString(), "", "support-bot", "", "q", "a", fixtureStart)})
	var s api.Span
	h.okJSON(&s, "spans", "get", span)
	require.NotNil(t, s.Cost)
	assert.InDelta(t, (100*1000.0+20*2000.0)/1e6, *s.Cost, 1e-12)
	require.NotNil(t, s.CostSource)
	assert.Equal(t, "project_price", *s.CostSource)

	golden(t, "model-prices-delete.text", h.ok("model-prices", "delete", "openai/my-fine-tune"))
	golden(t, "model-prices-delete.json", h.ok("--output", "json", "model-prices", "delete", "GPT-4o-mini"))
	var rows []api.ModelPrice
	h.okJSON(&rows, "model-prices", "list")
	assert.Empty(t, rows)
}

// TestLinksAndPricesErrors: usage errors and records of another project exit 2; another
// project's prices exit 3 (the route names the project, which the key is not of).
func TestLinksAndPricesErrors(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	h.api.EnsurePrompt(t, h.api.A, "support-bot", "You help with {{product}}.")
	h.api.EnsurePrompt(t, h.api.B, "theirs", "Their prompt.")
	theirs := h.api.MustDo(t, "POST", "/feedback-links", h.api.B.Key, map[string]any{"prompt_slug": "theirs", "link_type": api.LinkTypeCompletion})
	var other api.Link
	require.NoError(t, json.Unmarshal(theirs.Body, &other))
	tests := []struct {
		name   string
		args   []string
		exit   int
		code   errs.Code
		stderr string
	}{
		{"link without a prompt", []string{"feedback-links", "create"}, exitUsage, errs.CodeInvalid, "--prompt"},
		{"link of an unknown prompt", []string{"feedback-links", "create", "--prompt", "theirs"}, exitUsage, errs.CodeNotFound, "not found"},
		{"link of a bad slug", []string{"feedback-links", "create", "--prompt", "Support Bot"}, exitUsage, errs.CodeInvalid, "slug"},
		{"link of an unknown type", []string{"feedback-links", "create", "--prompt", "support-bot", "--link-type", "survey"}, exitUsage, errs.CodeInvalid, "link_type"},
		{"link that never works", []string{"feedback-links", "create", "--prompt", "support-bot", "--expires-in", "0s"}, exitUsage, errs.CodeInvalid, "--expires-in"},
		{"link that works too long", []string{"feedback-links", "create", "--prompt", "support-bot", "--expires-in", "2161h"}, exitUsage, errs.CodeInvalid, "expires_in_hours"},
		{"revoke without an id", []string{"feedback-links", "revoke"}, exitUsage, errs.CodeInvalid, "accepts 1 arg(s)"},
		{"revoke an unknown link", []string{"feedback-links", "revoke", uuid.NewString()}, exitUsage, errs.CodeNotFound, "not found"},
		{"revoke another project's link", []string{"feedback-links", "revoke", other.ID}, exitUsage, errs.CodeNotFound, "not found"},
		{"bad where", []string{"feedback-links", "list", "--where", "status"}, exitUsage, errs.CodeInvalid, "--where"},
		{"price without output", []string{"model-prices", "set", "my-model", "--input-price", "1"}, exitUsage, errs.CodeInvalid, "--output-price"},
		{"price without a model", []string{"model-prices", "set", "--input-price", "1", "--output-price", "2"}, exitUsage, errs.CodeInvalid, "accepts 1 arg(s)"},
		{"negative price", []string{"model-prices", "set", "my-model", "--input-price=-1", "--output-price", "2"}, exitUsage, errs.CodeInvalid, "input must be a price"},
		{"delete an unknown price", []string{"model-prices", "delete", "no/such-model"}, exitUsage, errs.CodeNotFound, "no price"},
		{"another project's prices", []string{"model-prices", "list", "--project-id", h.api.B.ProjectID}, exitAuth, errs.CodeForbidden, ""},
		{"set another project's price", []string{"model-prices", "set", "my-model", "--input-price", "1", "--output-price", "2", "--project-id", h.api.B.ProjectID}, exitAuth, errs.CodeForbidden, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			r := h.run(tt.args...)
			assert.Equal(t, tt.exit, r.code, "%s", r)
			assert.Empty(t, r.stdout)
			assert.Contains(t, r.stderr, tt.stderr)
			r = h.run(append([]string{"--output", "json"}, tt.args...)...)
			assert.Equal(t, tt.exit, r.code, "%s", r)
			var body jsonError
			require.NoError(t, json.Unmarshal([]byte(r.stderr), &body), "stderr is not JSON: %s", r.stderr)
			assert.Equal(t, string(tt.code), body.Error.Code)
			assert.Contains(t, body.Error.Message, tt.stderr)
		})
	}

	// Project B's link is still active: A's revoke did not touch it.
	var links api.LinkList
	require.NoError(t, json.Unmarshal(h.api.MustDo(t, "GET", "/feedback-links", h.api.B.Key, nil).Body, &links))
	require.Len(t, links.Links, 1)
	assert.Equal(t, api.LinkActive, links.Links[0].Status)
}

// TestGatewayStatusCommand: the gateway's standing, text and json, with the usage the limits
// counted for the project; "-" where a limit is unset or nothing is counted.
func TestGatewayStatusCommand(t *testing.T) {
	h := newClientHarness(t, apitest.Options{Config: func(c *config.Config) {
		c.GatewayLimits = ratelimit.Config{TokensPerMinute: 10_000, DailyUSD: 5}
		c.GatewayTrace = "all"
	}})
	require.NoError(t, h.api.Env.GatewayLimits().Record(t.Context(), h.api.A.ProjectID, 1234, 1.25))
	var st api.GatewayStatus
	h.okJSON(&st, "gateway", "status")
	require.NotNil(t, st.Usage)
	require.NotNil(t, st.Usage.Tokens)
	assert.Equal(t, int64(1234), *st.Usage.Tokens)
	assert.Nil(t, st.Limits.RequestsPerMinute)
	assert.Equal(t, "all", st.Trace)

	out := h.ok("gateway", "status")
	for _, line := range []string{"Endpoint:", "Requests per minute:", "Tokens per minute:", "Tokens this minute:", "Spend today (USD):", "Tracing:"} {
		assert.Contains(t, out, line)
	}
	assert.Regexp(t, `Endpoint:\s+-\n`, out)
	assert.Regexp(t, `Requests per minute:\s+-\n`, out)
	assert.Regexp(t, `Tokens per minute:\s+10000\n`, out)
	assert.Regexp(t, `Tokens this minute:\s+1234\n`, out)
	assert.Regexp(t, `Spend today \(USD\):\s+1\.25\n`, out)
	assert.Regexp(t, `Tracing:\s+all\n`, out)
}
