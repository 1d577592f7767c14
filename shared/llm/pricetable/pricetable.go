// Package pricetable prices model calls made through package llm with the shipped price table
// (package pricing). It is a package of its own because pricing depends, through trace and
// prompt, on llm: llm declares the Pricer it needs and this package implements it.
package pricetable

import (
	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/trace"
)

// Pricer prices calls by the table's list price of the requested model id, rounded as span
// costs are (bound.CostGrid).
type Pricer struct {
	table *pricing.Table
}

var _ llm.Pricer = Pricer{}

// New returns a Pricer over table (pricing.Default() for the shipped one).
func New(table *pricing.Table) Pricer { return Pricer{table: table} }

// Cost implements llm.Pricer. The model's provider, for ids without one, is llm.ProviderOf's.
func (p Pricer) Cost(model string, u llm.Usage) (float64, bool) {
	price, ok := p.table.Lookup(llm.ProviderOf(model), model)
	if !ok {
		return 0, false
	}
	cost := price.Cost(trace.LLMUsage{
		Provider:          llm.ProviderOf(model),
		Model:             model,
		InputTokens:       u.InputTokens,
		OutputTokens:      u.OutputTokens,
		CachedInputTokens: u.CachedInputTokens,
		CacheWriteTokens:  u.CacheWriteTokens,
	})
	return bound.Round(cost, bound.CostGrid), true
}
