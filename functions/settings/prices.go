package settings

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/web"
)

// priceBody is a model price as the API shows it. Prices are USD per 1M tokens.
type priceBody struct {
	Model       string        `json:"model"`
	Source      string        `json:"source"` // "project_price" or "price_table"
	Provider    string        `json:"provider,omitempty"`
	Input       float64       `json:"input"`
	Output      float64       `json:"output"`
	CachedInput float64       `json:"cached_input,omitempty"`
	CacheWrite  float64       `json:"cache_write,omitempty"`
	LongContext *pricing.Tier `json:"long_context,omitempty"`
	TableID     string        `json:"table_id,omitempty"` // the table entry that matched
	UpdatedAt   *time.Time    `json:"updated_at,omitempty"`
	UpdatedBy   string        `json:"updated_by,omitempty"`
}

func overrideBody(o pricing.Override) priceBody {
	at := o.UpdatedAt
	return priceBody{
		Model: o.Model, Source: pricing.SourceProject, Provider: o.Provider, Input: o.Input, Output: o.Output,
		CachedInput: o.CachedInput, CacheWrite: o.CacheWrite, UpdatedAt: &at, UpdatedBy: o.UpdatedBy,
	}
}

// listPrices serves GET /projects/{project_id}/model-prices: the project's own prices and what
// the shipped table is.
func (s *server) listPrices(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	list, err := s.prices.Overrides(r.Context(), pid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]priceBody, len(list))
	for i, o := range list {
		out[i] = overrideBody(o)
	}
	slices.SortFunc(out, func(a, b priceBody) int { return strings.Compare(a.Model, b.Model) })
	web.OK(w, map[string]any{
		"overrides":   out,
		"price_table": map[string]any{"models": s.table.Len(), "last_checked": s.table.LastChecked()},
	})
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
			web.OK(w, overrideBody(o))
			return
		}
	}
	p, ok := s.table.Lookup(r.URL.Query().Get("provider"), model)
	if !ok {
		web.Error(w, r, errs.NotFound("no price for model %q: neither the project nor the price table knows it", model))
		return
	}
	web.OK(w, priceBody{
		Model: model, Source: pricing.SourceTable, Provider: p.Provider, Input: p.Input, Output: p.Output,
		CachedInput: p.CachedInput, CacheWrite: p.CacheWrite, LongContext: p.LongContext, TableID: p.ID,
	})
}

// putRequest is the body of PUT .../model-prices/{model}.
type putRequest struct {
	Provider    string   `json:"provider"`
	Input       *float64 `json:"input"`
	Output      *float64 `json:"output"`
	CachedInput float64  `json:"cached_input"`
	CacheWrite  float64  `json:"cache_write"`
}

// putPrice serves PUT .../model-prices/{model}: sets the project's price of a model. It applies
// to spans ingested from then on (within a minute: ingestion caches prices that long); spans
// already stored keep their cost.
func (s *server) putPrice(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	var req putRequest
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
	web.OK(w, overrideBody(o))
}

// deletePrice serves DELETE .../model-prices/{model}: the model goes back to the table's price.
func (s *server) deletePrice(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	model := pricing.OverrideKey(r.PathValue("model"))
	if err := s.prices.DeleteOverride(r.Context(), pid, model); err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, map[string]any{"model": model, "deleted": true})
}
