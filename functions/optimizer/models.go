package optimizer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/optimize"
)

// CallCache keeps model answers by the hash of their request (ddb.OptimizationStore).
type CallCache interface {
	CachedCall(ctx context.Context, projectID, requestHash string) ([]byte, error)
	CacheCall(ctx context.Context, projectID, requestHash string, answer []byte, now time.Time) error
}

// metered is the model of one run: every call counts against the run's budget, and every
// answer is cached by the hash of its canonical request, so that a step executed again (after
// a crash, or by a worker that resumed the run) replays its calls instead of paying for them.
// A replayed call counts against the budget as it did the first time, so that a resumed run
// makes the choices an uninterrupted one makes.
type metered struct {
	next      run.Caller
	cache     CallCache
	projectID string
	budget    optimize.Budget
	now       func() time.Time
	// check runs before each call that would reach a provider: it fails (errCancelled) when
	// the run was cancelled, so that a cancel takes effect within one model call.
	check func(context.Context) error

	mu sync.Mutex
	// calls and picodollars are what was spent. The cost is summed in whole picodollars (the
	// grid every cost is on), so that the sum does not depend on the order concurrent calls
	// end in: a resumed run spends exactly what an uninterrupted one does.
	calls       int
	picodollars int64
}

// cachedAnswer is what the cache keeps of a response.
type cachedAnswer struct {
	Text       string          `json:"text"`
	JSON       json.RawMessage `json:"json,omitempty"`
	Model      string          `json:"model"`
	Usage      llm.Usage       `json:"usage"`
	Cost       float64         `json:"cost"`
	CostSource string          `json:"cost_source,omitempty"`
	StopReason string          `json:"stop_reason,omitempty"`
	// Duration is how long the model took, so that a replayed answer reports it too.
	Duration time.Duration `json:"duration_ns,omitempty"`
}

// requestHash is the SHA-256 of a request's JSON: model, messages, temperature, schema.
func requestHash(req llm.Request) string {
	b, err := json.Marshal(req)
	if err != nil {
		panic(fmt.Sprintf("optimizer: a model request does not encode: %v", err)) // plain data
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Complete implements run.Caller: the cached answer when there is one, else the model's, within
// the budget (optimize.ErrBudget once it is spent).
func (m *metered) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	prepaid := ctx.Value(prepaidKey{}) != nil
	if !prepaid {
		if err := m.take(); err != nil {
			return llm.Response{}, err
		}
	}
	h := requestHash(req)
	if raw, err := m.cache.CachedCall(ctx, m.projectID, h); err != nil {
		return llm.Response{}, err
	} else if raw != nil {
		var a cachedAnswer
		if err := json.Unmarshal(raw, &a); err == nil {
			m.charge(a.Cost)
			return llm.Response{Text: a.Text, JSON: a.JSON, Model: a.Model, Usage: a.Usage, Cost: a.Cost, CostSource: a.CostSource,
				StopReason: a.StopReason, Duration: a.Duration}, nil
		}
	}
	if m.check != nil {
		if err := m.check(ctx); err != nil {
			m.release(prepaid)
			return llm.Response{}, err
		}
	}
	resp, err := m.next.Complete(ctx, req)
	if err != nil {
		m.release(prepaid)
		return llm.Response{}, err
	}
	m.charge(resp.Cost)
	raw, _ := json.Marshal(cachedAnswer{Text: resp.Text, JSON: resp.JSON, Model: resp.Model, Usage: resp.Usage,
		Cost: resp.Cost, CostSource: resp.CostSource, StopReason: resp.StopReason, Duration: resp.Duration})
	if err := m.cache.CacheCall(ctx, m.projectID, h, raw, m.now()); err != nil {
		return llm.Response{}, err
	}
	return resp, nil
}

// take reserves one call of the budget, or fails with optimize.ErrBudget.
func (m *metered) take() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.budget.MaxModelCalls > 0 && m.calls >= m.budget.MaxModelCalls ||
		m.budget.MaxCostUSD > 0 && usd(m.picodollars) >= m.budget.MaxCostUSD {
		return optimize.ErrBudget
	}
	m.calls++
	return nil
}

// release gives back a call that failed before an answer: a failed call is retried by the
// step, and must not be paid for twice. A prepaid call stays paid: its batch failed with it.
func (m *metered) release(prepaid bool) {
	if prepaid {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls--
}

// prepaidKey marks the context of calls paid for in advance (prepay).
type prepaidKey struct{}

// prepay pays for n calls at once, or for none (optimize.ErrBudget): the calls made with the
// returned context are not counted again. A batch of calls made concurrently is paid for as a
// whole, so that where the budget ends never depends on which of its calls came first: a
// resumed run stops where an uninterrupted one does. The cost bound is checked before the
// batch; the batch's own cost may pass it.
func (m *metered) prepay(ctx context.Context, n int) (context.Context, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.budget.MaxModelCalls > 0 && m.calls+n > m.budget.MaxModelCalls ||
		m.budget.MaxCostUSD > 0 && usd(m.picodollars) >= m.budget.MaxCostUSD {
		return ctx, optimize.ErrBudget
	}
	m.calls += n
	return context.WithValue(ctx, prepaidKey{}, true), nil
}

func (m *metered) charge(cost float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.picodollars += int64(math.Round(cost * 1e12))
}

// extend raises the budget by n calls: the reserve a run keeps for its report.
func (m *metered) extend(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.budget.MaxModelCalls += n
}

// Spent is what the run has spent so far.
func (m *metered) Spent() optimize.Progress {
	m.mu.Lock()
	defer m.mu.Unlock()
	return optimize.Progress{ModelCalls: m.calls, CostUSD: usd(m.picodollars)}
}

// resumeFrom starts the count at what a run had spent at its checkpoint.
func (m *metered) resumeFrom(p optimize.Progress) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls, m.picodollars = p.ModelCalls, int64(math.Round(p.CostUSD*1e12))
}

func usd(picodollars int64) float64 { return float64(picodollars) / 1e12 }
