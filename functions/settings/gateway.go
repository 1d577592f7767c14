package settings

import (
	"context"
	"net/http"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ratelimit"
	"github.com/plumehq/plume/shared/web"
)

// Gateway is what GET /projects/{project_id}/gateway tells of the model gateway
// (functions/gateway): the deployment's configuration of it, which this function reads from
// the same variables as GatewayFunction, and the counters of its limits.
type Gateway struct {
	// Endpoint is the gateway's streaming OpenAI base URL (PLUME_GATEWAY_URL); "" unknown.
	Endpoint string
	// Limits are the per-project limits (PLUME_GATEWAY_RPM, _TPM, _DAILY_USD).
	Limits ratelimit.Config
	// Usage reads what the limits count for a project; nil when no limit is set.
	Usage Usage
	// Trace is the tracing mode, as gateway.ParseTraceMode reads PLUME_GATEWAY_TRACE.
	Trace string
}

// Usage reads what the gateway's usage limits count now for a project; *ratelimit.Limiter is
// one.
type Usage interface {
	Usage(ctx context.Context, projectID string) (ratelimit.Usage, error)
}

// gatewayStatus answers GET /projects/{project_id}/gateway. Cost: the key's lookup and one
// BatchGetItem of the usage counters when a usage limit is set; nothing else.
func (s *server) gatewayStatus(w http.ResponseWriter, r *http.Request) {
	g := s.gateway
	out := api.GatewayStatus{Trace: g.Trace, Limits: gatewayLimits(g.Limits)}
	if g.Endpoint != "" {
		out.Endpoint = &g.Endpoint
	}
	if g.Usage != nil {
		u, err := g.Usage.Usage(r.Context(), auth.ProjectID(r))
		if err != nil {
			web.Error(w, r, err)
			return
		}
		if u.Tokens != nil || u.SpendUSD != nil {
			out.Usage = &api.GatewayUsage{Minute: u.Minute, Tokens: u.Tokens, Day: u.Day.Format("2006-01-02"), SpendUSD: u.SpendUSD}
		}
	}
	web.OK(w, out)
}

// gatewayLimits are c's limits, nil where unset (0).
func gatewayLimits(c ratelimit.Config) api.GatewayLimits {
	var l api.GatewayLimits
	if c.RequestsPerMinute > 0 {
		l.RequestsPerMinute = &c.RequestsPerMinute
	}
	if c.TokensPerMinute > 0 {
		l.TokensPerMinute = &c.TokensPerMinute
	}
	if c.DailyUSD > 0 {
		l.DailySpendUSD = &c.DailyUSD
	}
	return l
}
