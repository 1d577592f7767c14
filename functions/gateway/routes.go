package gateway

import (
	"context"
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/pricing"
)

// Routes are the gateway's route keys.
var Routes = []string{"POST /v1/chat/completions", "GET /v1/models"}

// server serves the gateway's routes.
type server struct {
	// models is the deployment's model client (its providers and keys), built on first use.
	models func(context.Context) (*llm.Client, error)
	prices *pricing.Table
}

// NewHandler returns the gateway: every route authenticated with a Plume key.
func NewHandler(models func(context.Context) (*llm.Client, error), prices *pricing.Table, authn *auth.Authenticator) http.Handler {
	s := &server{models: models, prices: prices}
	rt := auth.NewRouter(authn)
	rt.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	rt.HandleFunc("GET /v1/models", s.listModels)
	return rt
}
