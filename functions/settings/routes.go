// Package settings is the project settings HTTP area: per-project model prices that override
// the shipped price table when spans are priced at ingestion, the project's API keys (admin
// keys only), and how the model gateway stands for the project (its endpoint, limits and their
// usage, tracing mode). It has its own Lambda function (SettingsFunction) because deleting a price
// needs dynamodb:DeleteItem, which no tracing function is granted, and because issuing and
// revoking keys is a power no other function should hold.
package settings

import (
	"context"
	"net/http"
	"time"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/pricing"
)

// Routes are the API Gateway route keys of SettingsFunction.
var Routes = []string{
	"ANY /projects/{project_id}/model-prices",
	"ANY /projects/{project_id}/model-prices/{proxy+}",
	"ANY /projects/{project_id}/api-keys",
	"ANY /projects/{project_id}/api-keys/{proxy+}",
	"ANY /projects/{project_id}/gateway",
}

// Prices stores project price overrides.
type Prices interface {
	pricing.OverrideLister
	PutOverride(ctx context.Context, projectID string, o pricing.Override) error
	DeleteOverride(ctx context.Context, projectID, model string) error
}

type server struct {
	prices  Prices
	table   *pricing.Table
	keys    Keys
	authn   *auth.Authenticator
	gateway Gateway
	now     func() time.Time
}

// NewHandler returns the settings area over the price store, the shipped price table, the key
// store and what it reports of the gateway. Revoking a key drops it from authn's cache.
func NewHandler(prices Prices, table *pricing.Table, keys Keys, authn *auth.Authenticator, gateway Gateway) http.Handler {
	s := &server{prices: prices, table: table, keys: keys, authn: authn, gateway: gateway, now: time.Now}
	r := auth.NewRouter(authn)
	for _, rt := range s.routes() {
		r.HandleFunc(rt.pattern, rt.handler, rt.access)
	}
	return r
}

type route struct {
	pattern string
	handler http.HandlerFunc
	access  auth.Access
}

func (s *server) routes() []route {
	return []route{
		{"GET /projects/{project_id}/model-prices", s.listPrices, auth.Members},
		{"GET /projects/{project_id}/model-prices/{model...}", s.getPrice, auth.Members},
		{"PUT /projects/{project_id}/model-prices/{model...}", s.putPrice, auth.Members},
		{"DELETE /projects/{project_id}/model-prices/{model...}", s.deletePrice, auth.Members},
		// Revoking is DELETE, as for feedback links: the key stays listed, revoked.
		{"GET /projects/{project_id}/api-keys", s.listKeys, auth.AdminOnly},
		{"POST /projects/{project_id}/api-keys", s.createKey, auth.AdminOnly},
		{"DELETE /projects/{project_id}/api-keys/{key_id}", s.revokeKey, auth.AdminOnly},
		{"GET /projects/{project_id}/gateway", s.gatewayStatus, auth.Members},
	}
}
