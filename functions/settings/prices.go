package settings

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/web"
)

// toPrice is the API form of a project's price.
func toPrice(o pricing.Override) api.ModelPrice {
	at := o.UpdatedAt
	return api.ModelPrice{
		Model: o.Model, Source: pricing.SourceProject, Provider: o.Provider, Input: o.Input, Output: o.Output,
		CachedInput: o.CachedInput, CacheWrite: o.CacheWrite, UpdatedAt: &at, UpdatedBy: o.UpdatedBy,
	}
}

// listPrices serves GET /projects/{project_id}/model-prices: the project's own prices, by model,
// as many as fit one answer from ?offset= (web.List), and what the shipped table is.
func (s *server) listPrices(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	list, err := s.prices.Overrides(r.Context(), pid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]api.ModelPrice, len(list))
	for i, o := range list {
		out[i] = toPrice(o)
	}
	slices.SortFunc(out, func(a, b api.ModelPrice) int { return strings.Compare(a.Model, b.Model) })
	table := api.PriceTableInfo{Models: s.table.Len(), LastChecked: s.table.LastChecked()}
	web.List(w, r, out, func(out []api.ModelPrice) any { return api.ModelPriceList{Overrides: out, PriceTable: table} })
}

// getPrice serves GET .../model-prices/{model}: the price spans of that model get, the
// project's own when it has one, else the table's (404 when neither knows the model).
func (s *server) getPrice(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	model := pricing.OverrideKey(r.PathValue("model"))
	list, err := s.prices.Overrides(r.Context(), pid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	for _, o := range list {
		if o.Model == model {
			web.OK(w, toPrice(o))
			return
		}
	}
	p, ok := s.table.Lookup(r.URL.Query().Get("provider"), model)
	if !ok {
		web.Error(w, r, errs.NotFound("no price for model %q: neither the project nor the price table knows it", model))
		return
	}
	web.OK(w, api.ModelPrice{
		Model: model, Source: pricing.SourceTable, Provider: p.Provider, Input: p.Input, Output: p.Output,
		CachedInput: p.CachedInput, CacheWrite: p.CacheWrite, LongContext: toLongContext(p.LongContext), TableID: p.ID,
	})
}

// toLongContext is the API form of a long-context tier (nil for none).
func toLongContext(t *pricing.Tier) *api.LongContextPrice {
	if t == nil {
		return nil
	}
	return &api.LongContextPrice{ThresholdTokens: t.ThresholdTokens, Input: t.Input, Output: t.Output, CachedInput: t.CachedInput, CacheWrite: t.CacheWrite}
}

// putPrice serves PUT .../model-prices/{model}: sets the project's price of a model. It applies
// to spans ingested from then on (within a minute: ingestion caches prices that long); spans
// already stored keep their cost.
func (s *server) putPrice(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	var req api.PutModelPriceRequest
	if err := web.Decode(w, r, &req, web.DefaultBodyLimit); err != nil {
		web.Error(w, r, err)
		return
	}
	if req.Input == nil || req.Output == nil {
		web.Error(w, r, errs.Invalid("input and output prices (USD per 1M tokens) are required"))
		return
	}
	p, _ := auth.FromContext(r.Context())
	o := pricing.Override{
		Model:     pricing.OverrideKey(r.PathValue("model")),
		Price:     pricing.Price{Provider: req.Provider, Input: *req.Input, Output: *req.Output, CachedInput: req.CachedInput, CacheWrite: req.CacheWrite},
		UpdatedAt: time.Now().UTC(), UpdatedBy: p.User.ID,
	}
	if err := pricing.ValidateOverride(o); err != nil {
		web.Error(w, r, err)
		return
	}
	if err := s.prices.PutOverride(r.Context(), pid, o); err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toPrice(o))
}

// deletePrice serves DELETE .../model-prices/{model}: the model goes back to the table's price.
func (s *server) deletePrice(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	model := pricing.OverrideKey(r.PathValue("model"))
	if err := s.prices.DeleteOverride(r.Context(), pid, model); err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.ModelPriceDeleted{Model: model, Deleted: true})
}
