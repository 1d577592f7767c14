package pricing

import (
	"context"

	"github.com/plumehq/plume/shared/trace"
)

// Cost sources recorded on spans (trace.Span.CostSource).
const (
	SourceTable        = "price_table"
	SourceUnknownModel = "unknown_model"
)

// Pricer prices llm spans with a price table; it implements trace.Pricer.
type Pricer struct{ table *Table }

var _ trace.Pricer = (*Pricer)(nil)

// NewPricer returns a Pricer over table.
func NewPricer(table *Table) *Pricer { return &Pricer{table: table} }

// Cost implements trace.Pricer. An unknown model is not an error: ok is false and the source
// says why the span has no cost.
func (p *Pricer) Cost(_ context.Context, _ string, u trace.LLMUsage) (float64, string, bool, error) {
	price, ok := p.table.Lookup(u.Provider, u.Model)
	if !ok {
		return 0, SourceUnknownModel, false, nil
	}
	return price.Cost(u), SourceTable, true, nil
}
