package pricing

import (
	"context"
	"sync"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/trace"
)

// Cost sources recorded on spans (trace.Span.CostSource).
const (
	SourceTable        = "price_table"
	SourceUnknownModel = "unknown_model"
)

// Pricer prices llm spans: with the project's own price for the model when it has one
// (WithOverrides), else the price table. It implements trace.Pricer.
type Pricer struct {
	table     *Table
	overrides OverrideLister
	mu        sync.Mutex
	cache     map[string]cachedOverrides
}

var _ trace.Pricer = (*Pricer)(nil)

// NewPricer returns a Pricer over table.
func NewPricer(table *Table) *Pricer { return &Pricer{table: table} }

// Cost implements trace.Pricer. An unknown model is not an error: ok is false and the source
// says why the span has no cost.
func (p *Pricer) Cost(ctx context.Context, projectID string, u trace.LLMUsage) (float64, string, bool, error) {
	own, ok, err := p.projectPrice(ctx, projectID, u)
	if err != nil {
		return 0, "", false, err
	}
	if ok {
		return bound.Round(own.Cost(u), bound.CostGrid), SourceProject, true, nil
	}
	price, ok := p.table.Lookup(u.Provider, u.Model)
	if !ok {
		return 0, SourceUnknownModel, false, nil
	}
	return bound.Round(price.Cost(u), bound.CostGrid), SourceTable, true, nil
}
