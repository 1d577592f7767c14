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

// accountTimeout bounds pricing, counting and recording a call once it is answered.
const accountTimeout = 5 * time.Second

// callPrice is what a call cost, priced once for the spend limit, the metrics and its span.
type callPrice struct {
	// cost is in USD; 0 when the call was not priced.
	cost float64
	// source is the pricer's (pricing.SourceTable, ..., pricing.SourceUnknownModel); "" when
	// the call was not priced (no usage, no pricer, or pricing failed), which leaves its span
	// to be priced at ingestion.
	source string
	// known is true when cost is a price, false for a model without one.
	known bool
}

// price prices a call's usage at the project's prices or the price table's. A model without a
// price costs nothing here (logged), and a call that cannot be priced too.
func (s *server) price(ctx context.Context, projectID string, t llm.Target, out outcome) callPrice {
	if !out.hasUsage || s.Pricer == nil {
		return callPrice{}
	}
	cost, source, ok, err := s.Pricer.Cost(ctx, projectID, trace.LLMUsage{
		Provider: t.Provider, Model: t.Model, InputTokens: out.usage.PromptTokens, OutputTokens: out.usage.CompletionTokens,
	})
	switch {
	case err != nil:
		slog.WarnContext(ctx, "gateway: the call cannot be priced", "model", t.Model, "error", err)
		return callPrice{}
	case !ok:
		slog.WarnContext(ctx, "gateway: no price for the model: its calls count no spend", "provider", t.Provider, "model", t.Model)
		return callPrice{source: source}
	}
	return callPrice{cost: cost, source: source, known: true}
}

// account counts what a call used, its tokens and its cost, against the project's token and
// spend limits and in the deployment's metrics (ModelCalls, ModelTokens, ModelCostUSD).
// Failures are logged: the call is already answered.
func (s *server) account(ctx context.Context, projectID string, out outcome, cost float64) {
	if !out.hasUsage {
		metrics.Emit(ctx, nil, time.Now(), projectID, metrics.Count(metrics.ModelCalls, 1))
		return
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
