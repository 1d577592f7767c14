// Package settings is the project settings HTTP area: for now, per-project model prices that
// override the shipped price table when spans are priced at ingestion. It has its own Lambda
// function (SettingsFunction) because deleting a price needs dynamodb:DeleteItem, which no
// tracing function is granted.
package settings

import (
	"context"
	"net/http"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/pricing"
)

// Routes are the API Gateway route keys of SettingsFunction.
var Routes = []string{
	"ANY /projects/{project_id}/model-prices",
	"ANY /projects/{project_id}/model-prices/{proxy+}",
}

// Prices stores project price overrides.
type Prices interface {
	pricing.OverrideLister
	PutOverride(ctx context.Context, projectID string, o pricing.Override) error
	DeleteOverride(ctx context.Context, projectID, model string) error
}

type server struct {
	prices Prices
	table  *pricing.Table
}

// NewHandler returns the settings area over the price store and the shipped price table.
func NewHandler(prices Prices, table *pricing.Table, authn *auth.Authenticator) http.Handler {
	s := &server{prices: prices, table: table}
	r := auth.NewRouter(authn)
	for _, rt := range s.routes() {
		r.HandleFunc(rt.pattern, rt.handler)
	}
	return r
}

type route struct {
	pattern string
	handler http.HandlerFunc
}

func (s *server) routes() []route {
	return []route{
		{"GET /projects/{project_id}/model-prices", s.listPrices},
		{"GET /projects/{project_id}/model-prices/{model...}", s.getPrice},
		{"PUT /projects/{project_id}/model-prices/{model...}", s.putPrice},
		{"DELETE /projects/{project_id}/model-prices/{model...}", s.deletePrice},
	}
}
