package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/metrics"
	"github.com/plumehq/plume/shared/ratelimit"
	"github.com/plumehq/plume/shared/trace"
)

// Codes of the gateway's 429 answers, by limit, in OpenAI's error shape.
var limitCodes = map[ratelimit.Limit]string{
	ratelimit.RequestsPerMinute: "rate_limit_exceeded",
	ratelimit.TokensPerMinute:   "rate_limit_exceeded",
	ratelimit.DailySpend:        "daily_spend_cap_reached",
}

// admit counts the call against the project's limits, or answers 429 with Retry-After when a
// limit is reached. Limits that cannot be counted refuse the call too (503): a deployment that
// cannot count cannot protect the bill.
func (s *server) admit(w http.ResponseWriter, r *http.Request, projectID string) bool {
	if s.Limits == nil {
		return true
	}
	err := s.Limits.Admit(r.Context(), projectID)
	var refusal *ratelimit.Refusal
	switch {
	case err == nil:
		return true
	case errors.As(err, &refusal):
		writeError(w, http.StatusTooManyRequests, typeRateLimit, limitCodes[refusal.Limit], refusal.Error(), refusal.RetryAfter)
	default:
		slog.ErrorContext(r.Context(), "gateway: the limits cannot be counted", "error", err)
		writeError(w, http.StatusServiceUnavailable, typeServer, "limits_unavailable",
			"the project's limits cannot be counted right now; retry", time.Second)
	}
	return false
}

// accountTimeout bounds counting a call's usage once it is answered.
const accountTimeout = 5 * time.Second

// account counts what a call used: its tokens, and its cost at the project's prices or the
// price table's, against the project's token and spend limits and in the deployment's metrics
// (ModelCalls, ModelTokens, ModelCostUSD). A model without a price counts no spend (logged).
// Failures are logged: the call is already answered.
func (s *server) account(ctx context.Context, projectID string, t llm.Target, out *outcome) {
	if !out.hasUsage {
		metrics.Emit(ctx, nil, time.Now(), projectID, metrics.Count(metrics.ModelCalls, 1))
		return
	}
	// The client may be gone; what it used is counted all the same.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), accountTimeout)
	defer cancel()
	var cost float64
	if s.Pricer != nil {
		c, _, ok, err := s.Pricer.Cost(ctx, projectID, trace.LLMUsage{
			Provider: t.Provider, Model: t.Model,
			InputTokens: out.usage.PromptTokens, OutputTokens: out.usage.CompletionTokens,
		})
		switch {
		case err != nil:
			slog.WarnContext(ctx, "gateway: the call cannot be priced", "model", t.Model, "error", err)
		case !ok:
			slog.WarnContext(ctx, "gateway: no price for the model: its calls count no spend", "provider", t.Provider, "model", t.Model)
		default:
			cost = c
		}
	}
	metrics.Emit(ctx, nil, time.Now(), projectID, metrics.Count(metrics.ModelCalls, 1),
		metrics.Count(metrics.ModelTokens, int(out.usage.Total())), metrics.Amount(metrics.ModelCostUSD, cost))
	if s.Limits == nil {
		return
	}
	if err := s.Limits.Record(ctx, projectID, int(out.usage.Total()), cost); err != nil {
		slog.ErrorContext(ctx, "gateway: the call's usage cannot be counted", "error", err)
	}
}
