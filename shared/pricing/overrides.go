package pricing

import (
	"context"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// SourceProject marks a cost computed with a project's own price.
const SourceProject = "project_price"

// overrideCacheTTL is how long a Pricer trusts the overrides it read for a project: a changed
// price applies to spans ingested at most this long after the change.
const overrideCacheTTL = 60 * time.Second

// Override is a project's own price for one model id, which wins over the shipped table: for
// fine-tunes, self-hosted models, negotiated discounts or prices the table does not know yet.
type Override struct {
	Model     string // the model id as spans name it, lowercased
	Price            // Input, Output, CachedInput and CacheWrite in USD per 1M tokens
	UpdatedAt time.Time
	UpdatedBy string
}

// OverrideKey is the form under which an override is stored and looked up: trimmed, lowercase.
func OverrideKey(model string) string { return strings.ToLower(strings.TrimSpace(model)) }

// ValidateOverride checks a project price.
func ValidateOverride(o Override) error {
	switch {
	case o.Model == "" || len(o.Model) > 256:
		return errs.Invalid("model id must be 1 to 256 characters")
	case strings.ContainsFunc(o.Model, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errs.Invalid("model id contains control characters")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"input", o.Input}, {"output", o.Output}, {"cached_input", o.CachedInput}, {"cache_write", o.CacheWrite}} {
		if _, err := bound.Price.Check(f.v); err != nil {
			return errs.Invalid("%s must be a price from 0 to 1000000 USD per 1M tokens, 0 or at least %g: %v", f.name, bound.Floor, err)
		}
	}
	return nil
}

// OverrideLister lists a project's prices.
type OverrideLister interface {
	// Overrides returns every price override of the project.
	Overrides(ctx context.Context, projectID string) ([]Override, error)
}

// WithOverrides makes the Pricer look up projects' own prices first, reading each project's
// overrides at most once a minute.
func (p *Pricer) WithOverrides(store OverrideLister) *Pricer {
	p.overrides = store
	p.cache = map[string]cachedOverrides{}
	return p
}

type cachedOverrides struct {
	byModel map[string]Price
	read    time.Time
}

// projectPrice returns the project's price for the model, if it has one.
func (p *Pricer) projectPrice(ctx context.Context, projectID string, u trace.LLMUsage) (Price, bool, error) {
	if p.overrides == nil {
		return Price{}, false, nil
	}
	p.mu.Lock()
	c, ok := p.cache[projectID]
	p.mu.Unlock()
	if !ok || time.Since(c.read) > overrideCacheTTL {
		list, err := p.overrides.Overrides(ctx, projectID)
		if err != nil {
			return Price{}, false, err
		}
		c = cachedOverrides{byModel: make(map[string]Price, len(list)), read: time.Now()}
		for _, o := range list {
			c.byModel[o.Model] = o.Price
		}
		p.mu.Lock()
		p.cache[projectID] = c
		p.mu.Unlock()
	}
	if len(c.byModel) == 0 {
		return Price{}, false, nil
	}
	model := OverrideKey(u.Model)
	if price, ok := c.byModel[model]; ok {
		return price, true, nil
	}
	if u.Provider != "" && !strings.Contains(model, "/") {
		price, ok := c.byModel[OverrideKey(u.Provider)+"/"+model]
		return price, ok, nil
	}
	return Price{}, false, nil
}
