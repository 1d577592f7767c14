package gateway

import (
	"context"
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/ratelimit"
	"github.com/plumehq/plume/shared/trace"
)

// Routes are the gateway's route keys.
var Routes = []string{"POST /v1/chat/completions", "GET /v1/models"}

// Deps are what the gateway serves with.
type Deps struct {
	// Models is the deployment's model client (its providers and keys), built on first use.
	Models func(context.Context) (*llm.Client, error)
	// Prices are the models GET /v1/models offers, with BedrockModels (Bedrock's model ids
	// are not the price table's).
	Prices        *pricing.Table
	BedrockModels []string
	// Pricer prices a call for the daily spend cap: the project's own prices first, then the
	// price table's.
	Pricer trace.Pricer
	// Limits enforces the projects' limits; nil: none.
	Limits *ratelimit.Limiter
	// Bindings reads the model bound to a prompt version, for the calls that name one.
	Bindings Bindings
	// Traces records the llm span of each call that is traced (Trace, traceRequest); nil:
	// none is.
	Traces SpanIngester
	// Trace says which calls are traced besides those that ask.
	Trace TraceMode
	// Authn authenticates every route with a Plume key.
	Authn *auth.Authenticator
}

// Bindings reads the model bound to a prompt version of a project (prompt.Service.Model):
// errs.NotFound for a version the project does not have.
type Bindings interface {
	Model(ctx context.Context, projectID, versionID string) (prompt.Binding, error)
}

// server serves the gateway's routes.
type server struct{ Deps }

// NewHandler returns the gateway: every route authenticated with a Plume key.
func NewHandler(d Deps) http.Handler {
	s := &server{Deps: d}
	rt := auth.NewRouter(d.Authn)
	// Applications call the gateway: ingest keys may too.
	rt.HandleFunc("POST /v1/chat/completions", s.chatCompletions, auth.AllowIngest)
	rt.HandleFunc("GET /v1/models", s.listModels, auth.AllowIngest)
	return rt
}
