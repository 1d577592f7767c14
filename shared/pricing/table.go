package pricing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// maxModelLen is the longest model id Lookup considers; longer ids are never found.
const maxModelLen = 256

// maxCached bounds the cache of resolved model ids; it is emptied when it grows past it.
const maxCached = 4096

// Table is a compiled price table. It is safe for concurrent use.
type Table struct {
	lastChecked string
	prices      []Price
	rules       []rule // every pattern of every entry, in file order

	cache  sync.Map // model id as given -> int index into prices, -1 when unknown
	cached atomic.Int64
}

// rule is one pattern of the entry prices[entry].
type rule struct {
	entry int
	re    *pattern
	// literal is a lower-case string that every id the pattern matches contains: a cheap
	// test that skips most patterns before running the regular expression.
	literal string
}

// pattern is a regular expression compiled on first use. The shipped table's patterns were
// checked when prices_gen.go was generated; compiling all of them took 17-22 ms of every
// pricing function's cold start, where a lookup needs the few whose literal the id contains.
type pattern struct {
	expr string // "(?i)^...$"
	once sync.Once
	re   *regexp.Regexp
}

// regexp returns the compiled pattern.
func (p *pattern) regexp() *regexp.Regexp {
	p.once.Do(func() { p.re = regexp.MustCompile(p.expr) })
	return p.re
}

// compiled returns the pattern of an expression already compiled (Parse's).
func compiled(re *regexp.Regexp) *pattern {
	p := &pattern{expr: re.String()}
	p.once.Do(func() { p.re = re })
	return p
}

//go:generate go test -run TestGeneratedTable -update

// source is a price table as generated from prices.json into prices_gen.go: checked and
// reduced at build time, so that nothing is parsed at start.
type source struct {
	lastChecked string
	prices      []Price
	rules       []ruleSource
}

// ruleSource is a rule before its pattern is compiled.
type ruleSource struct {
	entry   int
	expr    string
	literal string
}

// newTable is the Table of s.
func newTable(s source) *Table {
	t := &Table{lastChecked: s.lastChecked, prices: s.prices, rules: make([]rule, len(s.rules))}
	for i, r := range s.rules {
		t.rules[i] = rule{entry: r.entry, re: &pattern{expr: r.expr}, literal: r.literal}
	}
	return t
}

var defaultTable = sync.OnceValue(func() *Table { return newTable(shipped) })

// Default returns the shipped price table: prices.json as go generate wrote it into
// prices_gen.go (a test holds the two equal). Its patterns are compiled as lookups first need
// them.
func Default() *Table { return defaultTable() }

// file is the format of prices.json.
type file struct {
	Comment     string  `json:"comment"`
	LastChecked string  `json:"last_checked"`
	Prices      []entry `json:"prices"`
}

type entry struct {
	ID          string   `json:"id"`
	Provider    string   `json:"provider"`
	Input       float64  `json:"input"`
	Output      float64  `json:"output"`
	CachedInput float64  `json:"cached_input"`
	CacheWrite  float64  `json:"cache_write"`
	LongContext *Tier    `json:"long_context"`
	Note        string   `json:"note"`
	Match       []string `json:"match"`
}

// Parse reads and compiles a price table in the format of prices.json:
//
//	{"last_checked": "2026-11-21", "prices": [{"id": "gpt-4o", "provider": "openai",
//	  "input": 2.5, "output": 10, "cached_input": 1.25, "match": ["^(?:openai/)?gpt-4o$"]}]}
//
// Optional fields of an entry are cached_input, cache_write, long_context (threshold_tokens,
// input, output, cached_input, cache_write) and note (free text); the top level may have a
// comment. Prices are in USD per 1M tokens; patterns are matched case-insensitively.
//
// It returns an error when the JSON is malformed or has unknown fields, when last_checked is
// not a YYYY-MM-DD date, when there are no entries, or when an entry has an empty or
// duplicate id, no provider, a negative price, no patterns, a pattern that is not anchored
// with ^ and $ or does not compile, or a long-context tier with a non-positive threshold or
// without the cached prices its base has.
func Parse(data []byte) (*Table, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f file
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode price table: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("decode price table: data after the top-level object")
	}
	if _, err := time.Parse(time.DateOnly, f.LastChecked); err != nil {
		return nil, fmt.Errorf("last_checked %q is not a YYYY-MM-DD date", f.LastChecked)
	}
	if len(f.Prices) == 0 {
		return nil, errors.New("price table has no prices")
	}
	t := &Table{lastChecked: f.LastChecked, prices: make([]Price, 0, len(f.Prices))}
	seen := make(map[string]bool, len(f.Prices))
	for i, e := range f.Prices {
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("price %d (%q): %w", i, e.ID, err)
		}
		key := strings.ToLower(e.ID)
		if seen[key] {
			return nil, fmt.Errorf("price %d: duplicate id %q", i, e.ID)
		}
		seen[key] = true
		for _, p := range e.Match {
			re, err := regexp.Compile("(?i)" + p)
			if err != nil {
				return nil, fmt.Errorf("price %d (%q): pattern %q: %w", i, e.ID, p, err)
			}
			t.rules = append(t.rules, rule{entry: i, re: compiled(re), literal: requiredLiteral(re.String())})
		}
		p := Price{ID: e.ID, Provider: e.Provider, Input: e.Input, Output: e.Output,
			CachedInput: e.CachedInput, CacheWrite: e.CacheWrite}
		if e.LongContext != nil {
			lc := *e.LongContext
			p.LongContext = &lc
		}
		t.prices = append(t.prices, p)
	}
	return t, nil
}

func (e entry) validate() error {
	switch {
	case strings.TrimSpace(e.ID) == "":
		return errors.New("empty id")
	case strings.TrimSpace(e.Provider) == "":
		return errors.New("empty provider")
	case e.Input < 0 || e.Output < 0 || e.CachedInput < 0 || e.CacheWrite < 0:
		return errors.New("negative price")
	case len(e.Match) == 0:
		return errors.New("no match patterns")
	}
	for _, p := range e.Match {
		if !strings.HasPrefix(p, "^") || !strings.HasSuffix(p, "$") {
			return fmt.Errorf("pattern %q is not anchored with ^ and $", p)
		}
	}
	if lc := e.LongContext; lc != nil {
		switch {
		case lc.ThresholdTokens <= 0:
			return errors.New("long_context: threshold_tokens must be positive")
		case lc.Input < 0 || lc.Output < 0 || lc.CachedInput < 0 || lc.CacheWrite < 0:
			return errors.New("long_context: negative price")
		case e.CachedInput > 0 && lc.CachedInput == 0:
			return errors.New("long_context: cached_input missing (the base price has one)")
		case e.CacheWrite > 0 && lc.CacheWrite == 0:
			return errors.New("long_context: cache_write missing (the base price has one)")
		}
	}
	return nil
}

// requiredLiteral returns the longest literal that every string matched by the compiled
// pattern contains, lower-cased, or "" when it finds none.
func requiredLiteral(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat {
		return ""
	}
	best := ""
	for _, sub := range re.Sub {
		if sub.Op != syntax.OpLiteral {
			continue
		}
		s := strings.ToLower(string(sub.Rune))
		if len(s) > len(best) && isASCII(s) {
			best = s
		}
	}
	return best
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// LastChecked returns the date, YYYY-MM-DD, on which the table's prices were last checked
// against the providers' published prices.
func (t *Table) LastChecked() string { return t.lastChecked }

// Len returns the number of models in the table.
func (t *Table) Len() int { return len(t.prices) }

// Prices returns every entry of the table, in file order. The slice is the caller's.
func (t *Table) Prices() []Price { return append([]Price(nil), t.prices...) }

// Lookup returns the price of a model. The model id is trimmed and matched case-insensitively
// against the table's patterns; the first entry in file order with a matching pattern wins.
// When the model id is not found, provider is not empty and the model id has no provider
// prefix (no "/"), "provider/model" is tried as well. It reports false when the model is not
// in the table.
//
// Lookup is meant to run for every llm span: results are cached per model id (the cache is
// bounded), so repeated ids cost a map read.
func (t *Table) Lookup(provider, model string) (Price, bool) {
	i := t.resolve(model)
	if i < 0 && !strings.Contains(model, "/") {
		if p := strings.TrimSpace(provider); p != "" {
			i = t.resolve(p + "/" + strings.TrimSpace(model))
		}
	}
	if i < 0 {
		return Price{}, false
	}
	return t.prices[i], true
}

// resolve returns the index of the price of model id, or -1, through the cache.
func (t *Table) resolve(model string) int {
	if v, ok := t.cache.Load(model); ok {
		return v.(int)
	}
	id := strings.ToLower(strings.TrimSpace(model))
	i := -1
	if id != "" && len(id) <= maxModelLen {
		i = t.match(id)
	}
	if len(model) <= maxModelLen {
		if t.cached.Add(1) > maxCached {
			t.cache.Clear()
			t.cached.Store(1)
		}
		// Clone: the id may point into a large request body that the cache must not retain.
		t.cache.Store(strings.Clone(model), i)
	}
	return i
}

// match returns the index of the first entry with a pattern that matches the normalised id,
// or -1.
func (t *Table) match(id string) int {
	for _, r := range t.rules {
		if r.literal != "" && !strings.Contains(id, r.literal) {
			continue
		}
		if r.re.regexp().MatchString(id) {
			return r.entry
		}
	}
	return -1
}
