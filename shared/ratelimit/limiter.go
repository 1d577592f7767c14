package ratelimit

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/errs"
)

// Shards is the number of items every counter of a project is split over (package
// documentation): a project may write about Shards×1,000 times a second, and a sum reads
// Shards items.
const Shards = 8

// Store keeps the sharded counters of every project. Shards are numbered from 0. A minute is a
// UTC minute and a day a UTC day, each named by any instant in it. Counts only grow.
type Store interface {
	// TakeRequest counts one request in shard's count of the minute of at, unless that count
	// has reached quota. It returns the shard's count after the request and whether it
	// counted it; a full shard is not an error.
	TakeRequest(ctx context.Context, projectID string, at time.Time, shard, quota int) (count int, taken bool, err error)
	// AddUsage adds tokens to shard's token count of the minute of at, and picoUSD to its
	// spend of the day of at. A zero amount writes nothing.
	AddUsage(ctx context.Context, projectID string, at time.Time, shard int, tokens, picoUSD int64) error
	// Usage returns the tokens of the minute of at summed over shards 0 to tokenShards-1, and
	// the spend of the day of at summed over shards 0 to spendShards-1. A count of 0 shards
	// reads nothing and sums to 0.
	Usage(ctx context.Context, projectID string, at time.Time, tokenShards, spendShards int) (tokens, picoUSD int64, err error)
}

// Limit names a limit in a Refusal; the values are part of the gateway's error answers.
type Limit string

// The limits.
const (
	RequestsPerMinute Limit = "requests_per_minute"
	TokensPerMinute   Limit = "tokens_per_minute"
	DailySpend        Limit = "daily_spend"
)

// Refusal is Admit's error when a limit is reached. It unwraps to an errs.CodeRateLimited
// error, so errs.CodeOf and shared/web see a 429.
type Refusal struct {
	// Limit is the limit reached.
	Limit Limit
	// RetryAfter is the time to the end of the limit's window: the next UTC minute for
	// RequestsPerMinute and TokensPerMinute, the next UTC midnight for DailySpend. The HTTP
	// Retry-After header carries it rounded up to whole seconds (RFC 9110, section 10.2.3:
	// https://www.rfc-editor.org/rfc/rfc9110#section-10.2.3).
	RetryAfter time.Duration
	msg        string
}

func (r *Refusal) Error() string { return r.msg }

// Unwrap returns the refusal as an errs.CodeRateLimited error with the same message.
func (r *Refusal) Unwrap() error { return &errs.Error{Code: errs.CodeRateLimited, Message: r.msg} }

// picosPerUSD converts dollars to picodollars, the unit spend is counted in.
const picosPerUSD = 1e12

// Limiter enforces a Config for every project on a Store (package documentation). It is safe
// for concurrent use; build one per process and share it.
type Limiter struct {
	store     Store
	cfg       Config
	now       func() time.Time
	capPicos  int64 // the daily cap in picodollars; 0: none
	rpmShards int   // shards of the request count: Shards, or fewer for an RPM below Shards

	mu       sync.Mutex
	projects map[string]*project
	swept    int64 // the minute of the last sweep of projects
}

// project is what an instance knows of one project's counts: lower bounds of the true counts,
// since counts only grow and every number here was true when read or written.
type project struct {
	fetch chan struct{} // holds a token during the one read of the sums in progress

	mu     sync.Mutex
	minute int64     // the Unix minute of full and tokens
	full   uint64    // bit i: shard i has counted its quota of requests in minute
	tokens int64     // tokens counted in minute, at least
	day    int64     // the Unix day (UTC) of spend
	spend  int64     // picodollars counted in day, at least
	readAt time.Time // when the sums of minute and day were last read (sent); zero: never
}

// New returns a limiter of the projects' calls to cfg's limits, counted in store, with the time
// from now (time.Now when nil). Negative limits count as unlimited; ConfigFromEnv returns none.
func New(store Store, cfg Config, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	cfg.RequestsPerMinute = max(cfg.RequestsPerMinute, 0)
	cfg.TokensPerMinute = max(cfg.TokensPerMinute, 0)
	l := &Limiter{store: store, cfg: cfg, now: now, projects: map[string]*project{}}
	if cfg.DailyUSD > 0 {
		// A positive cap too small to count in picodollars is one picodollar, not none.
		l.capPicos = max(picos(cfg.DailyUSD), 1)
	}
	l.rpmShards = min(Shards, cfg.RequestsPerMinute)
	return l
}

// Admit counts one call of the project, or refuses it with a *Refusal (errors.As) naming the
// limit reached: DailySpend, then TokensPerMinute, then RequestsPerMinute are checked, so a
// request refused for its tokens or spend does not use up one of the minute's requests.
//
// Errors: *Refusal; errs.Invalid for an empty project id; storage errors, which should refuse
// the call too.
func (l *Limiter) Admit(ctx context.Context, projectID string) error {
	if projectID == "" {
		return errs.Invalid("rate limits need a project")
	}
	if l.cfg.RequestsPerMinute == 0 && l.cfg.TokensPerMinute == 0 && l.capPicos == 0 {
		return nil
	}
	now := l.now()
	p := l.project(projectID, now)
	if l.cfg.TokensPerMinute > 0 || l.capPicos > 0 {
		if err := l.checkUsage(ctx, projectID, p, now); err != nil {
			return err
		}
	}
	if l.cfg.RequestsPerMinute > 0 {
		return l.takeRequest(ctx, projectID, p, now)
	}
	return nil
}

// Record adds the tokens and cost of a call of the project that ended now, for the limits that
// are set (nothing is written for a limit that is not). A cost above $1,000,000 counts as that.
//
// Errors: errs.Invalid for an empty project id, negative tokens or a cost that is negative or
// not a number; storage errors.
func (l *Limiter) Record(ctx context.Context, projectID string, tokens int, costUSD float64) error {
	switch {
	case projectID == "":
		return errs.Invalid("rate limits need a project")
	case tokens < 0:
		return errs.Invalid("a call's tokens cannot be negative, not %d", tokens)
	case !(costUSD >= 0) || math.IsInf(costUSD, 0):
		return errs.Invalid("a call's cost must be a positive number of dollars or 0, not %v", costUSD)
	}
	var tok, pico int64
	if l.cfg.TokensPerMinute > 0 {
		tok = int64(tokens)
	}
	if l.capPicos > 0 {
		pico = picos(costUSD)
	}
	if tok == 0 && pico == 0 {
		return nil
	}
	now := l.now()
	if err := l.store.AddUsage(ctx, projectID, now, rand.IntN(Shards), tok, pico); err != nil {
		return fmt.Errorf("record usage of project %s: %w", projectID, err)
	}
	p := l.project(projectID, now)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.roll(now)
	if p.minute == unixMinute(now) {
		p.tokens = addSat(p.tokens, tok)
	}
	if p.day == unixDay(now) {
		p.spend = addSat(p.spend, pico)
	}
	return nil
}

// Usage is what a project's usage limits have counted in the windows of an instant.
type Usage struct {
	// Minute is the start of the UTC minute Tokens counts; Day the start of the UTC day
	// SpendUSD counts.
	Minute, Day time.Time
	// Tokens is the tokens of the calls the project ended in Minute; nil when no
	// TokensPerMinute limit is set, since then nothing counts them.
	Tokens *int64
	// SpendUSD is the cost in dollars of the calls the project ended in Day; nil when no daily
	// cap is set, since then nothing counts it.
	SpendUSD *float64
}

// Usage reads what the project's usage limits count now: its tokens of the minute when a
// TokensPerMinute limit is set, its spend of the day when a daily cap is set. It reads the
// store, never the instance's cache, so it sees every instance's calls; it changes nothing.
// Cost: one Store.Usage call (one BatchGetItem of the ddb store), none when neither limit is
// set.
//
// Errors: errs.Invalid for an empty project id; storage errors.
func (l *Limiter) Usage(ctx context.Context, projectID string) (Usage, error) {
	if projectID == "" {
		return Usage{}, errs.Invalid("rate limits need a project")
	}
	now := l.now().UTC()
	u := Usage{Minute: now.Truncate(time.Minute), Day: time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)}
	tokenShards, spendShards := 0, 0
	if l.cfg.TokensPerMinute > 0 {
		tokenShards = Shards
	}
	if l.capPicos > 0 {
		spendShards = Shards
	}
	if tokenShards == 0 && spendShards == 0 {
		return u, nil
	}
	tokens, spend, err := l.store.Usage(ctx, projectID, now, tokenShards, spendShards)
	if err != nil {
		return Usage{}, fmt.Errorf("read usage of project %s: %w", projectID, err)
	}
	if tokenShards > 0 {
		u.Tokens = &tokens
	}
	if spendShards > 0 {
		usd := float64(spend) / picosPerUSD
		u.SpendUSD = &usd
	}
	return u, nil
}

// DaySpend is the project's spend in dollars of the UTC day of at, as the daily cap counts it
// (monitor.Spend, for gateway_spend monitors); counted is false when no cap is set, since then
// nothing counts it. It reads the store, never the instance's cache. Cost: one Store.Usage call
// of the day's Shards spend items (one BatchGetItem of the ddb store), none without a cap.
//
// Errors: errs.Invalid for an empty project id; storage errors.
func (l *Limiter) DaySpend(ctx context.Context, projectID string, at time.Time) (usd float64, counted bool, err error) {
	if projectID == "" {
		return 0, false, errs.Invalid("rate limits need a project")
	}
	if l.capPicos == 0 {
		return 0, false, nil
	}
	_, spend, err := l.store.Usage(ctx, projectID, at.UTC(), 0, Shards)
	if err != nil {
		return 0, false, fmt.Errorf("read the day's spend of project %s: %w", projectID, err)
	}
	return float64(spend) / picosPerUSD, true, nil
}

// checkUsage refuses the call if the project's tokens of the minute or spend of the day, as
// known at most MaxStaleness ago, have reached their limits.
func (l *Limiter) checkUsage(ctx context.Context, projectID string, p *project, now time.Time) error {
	p.mu.Lock()
	p.roll(now)
	refusal, fresh := l.reached(p, now), l.fresh(p, now)
	p.mu.Unlock()
	if refusal != nil {
		return refusal
	}
	if fresh {
		return nil
	}
	if err := l.readUsage(ctx, projectID, p, now); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if refusal := l.reached(p, now); refusal != nil {
		return refusal
	}
	return nil
}

// readUsage reads the sums into p. With a cache, concurrent callers share one read.
func (l *Limiter) readUsage(ctx context.Context, projectID string, p *project, now time.Time) error {
	if l.cfg.MaxStaleness > 0 {
		select {
		case p.fetch <- struct{}{}:
			defer func() { <-p.fetch }()
		case <-ctx.Done():
			return fmt.Errorf("read usage of project %s: %w", projectID, ctx.Err())
		}
		p.mu.Lock()
		fresh := l.fresh(p, now)
		p.mu.Unlock()
		if fresh {
			return nil // read by another caller meanwhile
		}
	}
	tokenShards, spendShards := 0, 0
	if l.cfg.TokensPerMinute > 0 {
		tokenShards = Shards
	}
	if l.capPicos > 0 {
		spendShards = Shards
	}
	tokens, spend, err := l.store.Usage(ctx, projectID, now, tokenShards, spendShards)
	if err != nil {
		return fmt.Errorf("read usage of project %s: %w", projectID, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	minute, day := p.minute == unixMinute(now), p.day == unixDay(now)
	if minute {
		p.tokens = max(p.tokens, tokens)
	}
	if day {
		p.spend = max(p.spend, spend)
	}
	if minute && day && now.After(p.readAt) {
		p.readAt = now
	}
	return nil
}

// reached returns the refusal of the usage limit p shows reached, or nil.
func (l *Limiter) reached(p *project, now time.Time) *Refusal {
	switch {
	case l.capPicos > 0 && p.spend >= l.capPicos:
		return l.refusal(DailySpend, now)
	case l.cfg.TokensPerMinute > 0 && p.tokens >= int64(l.cfg.TokensPerMinute):
		return l.refusal(TokensPerMinute, now)
	}
	return nil
}

// fresh reports whether p's sums were read less than MaxStaleness before now.
func (l *Limiter) fresh(p *project, now time.Time) bool {
	return !p.readAt.IsZero() && now.Sub(p.readAt) < l.cfg.MaxStaleness
}

// takeRequest counts the request in a shard of the minute that has room, starting from a
// random one, or refuses it when every shard is full.
func (l *Limiter) takeRequest(ctx context.Context, projectID string, p *project, now time.Time) error {
	minute := unixMinute(now)
	start := rand.IntN(l.rpmShards)
	for k := range l.rpmShards {
		shard := (start + k) % l.rpmShards
		if p.isFull(minute, shard) {
			continue
		}
		quota := l.quota(shard)
		count, taken, err := l.store.TakeRequest(ctx, projectID, now, shard, quota)
		if err != nil {
			return fmt.Errorf("count a request of project %s: %w", projectID, err)
		}
		if !taken || count >= quota {
			p.setFull(minute, shard)
		}
		if taken {
			return nil
		}
	}
	return l.refusal(RequestsPerMinute, now)
}

// quota is the requests shard may count in a minute: the shards' quotas add up to the RPM.
func (l *Limiter) quota(shard int) int {
	q := l.cfg.RequestsPerMinute / l.rpmShards
	if shard < l.cfg.RequestsPerMinute%l.rpmShards {
		q++
	}
	return q
}

func (p *project) isFull(minute int64, shard int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.minute == minute && p.full&(1<<shard) != 0
}

func (p *project) setFull(minute int64, shard int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.minute == minute {
		p.full |= 1 << shard
	}
}

// roll moves p to the windows of now, forgetting what it knew of earlier ones. It never moves
// back: a caller whose clock reading is older than another's sees the newer windows.
func (p *project) roll(now time.Time) {
	if m := unixMinute(now); m > p.minute {
		p.minute, p.full, p.tokens, p.readAt = m, 0, 0, time.Time{}
	}
	if d := unixDay(now); d > p.day {
		p.day, p.spend, p.readAt = d, 0, time.Time{}
	}
}

// project returns the state of projectID, dropping, once a minute, the states of projects that
// made no call in the last two minutes (what they knew is only a cache).
func (l *Limiter) project(projectID string, now time.Time) *project {
	minute := unixMinute(now)
	l.mu.Lock()
	defer l.mu.Unlock()
	if minute > l.swept {
		l.swept = minute
		for id, p := range l.projects {
			p.mu.Lock()
			idle := p.minute < minute-1
			p.mu.Unlock()
			if idle {
				delete(l.projects, id)
			}
		}
	}
	p, ok := l.projects[projectID]
	if !ok {
		p = &project{fetch: make(chan struct{}, 1)}
		p.roll(now)
		l.projects[projectID] = p
	}
	return p
}

// refusal describes limit reached at now.
func (l *Limiter) refusal(limit Limit, now time.Time) *Refusal {
	now = now.UTC()
	var what string
	var end time.Time
	switch limit {
	case DailySpend:
		what = "daily spend cap of $" + dollars(l.cfg.DailyUSD)
		end = time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
	case TokensPerMinute:
		what = fmt.Sprintf("limit of %d tokens per minute", l.cfg.TokensPerMinute)
		end = now.Truncate(time.Minute).Add(time.Minute)
	default:
		what = fmt.Sprintf("limit of %d requests per minute", l.cfg.RequestsPerMinute)
		end = now.Truncate(time.Minute).Add(time.Minute)
	}
	retry := end.Sub(now)
	return &Refusal{
		Limit:      limit,
		RetryAfter: retry,
		msg:        fmt.Sprintf("the project has reached its %s; retry in %s", what, roundUp(retry)),
	}
}

// dollars formats an amount with cents ("5.00"), or with every digit it has below a cent.
func dollars(usd float64) string {
	if cents := usd * 100; cents == math.Trunc(cents) {
		return strconv.FormatFloat(usd, 'f', 2, 64)
	}
	return strconv.FormatFloat(usd, 'f', -1, 64)
}

// roundUp rounds d up to whole seconds, as Retry-After states it.
func roundUp(d time.Duration) time.Duration { return (d + time.Second - 1).Truncate(time.Second) }

// picos converts a cost in dollars to picodollars, at most $1,000,000.
func picos(usd float64) int64 { return int64(math.Round(min(usd, maxDailyUSD) * picosPerUSD)) }

func unixMinute(t time.Time) int64 { return floorDiv(t.Unix(), 60) }

func unixDay(t time.Time) int64 { return floorDiv(t.Unix(), 86400) }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// addSat adds two non-negative counts, stopping at the largest int64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
