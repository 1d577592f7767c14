package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Config holds a deployment's limits, applied to every project. A zero limit is no limit.
type Config struct {
	// RequestsPerMinute is PLUME_GATEWAY_RPM: the calls a project may start in a UTC minute.
	RequestsPerMinute int
	// TokensPerMinute is PLUME_GATEWAY_TPM: once the tokens of the calls a project ended in a
	// UTC minute reach it, its calls are refused until the minute ends.
	TokensPerMinute int
	// DailyUSD is PLUME_GATEWAY_DAILY_USD: once the cost of the calls a project ended in a UTC
	// day reaches it, its calls are refused until the day ends.
	DailyUSD float64
	// MaxStaleness bounds how old the token and spend sums an admission is decided on may be
	// (package documentation). 0: every admission reads them.
	MaxStaleness time.Duration
}

// DefaultMaxStaleness is the MaxStaleness of ConfigFromEnv.
const DefaultMaxStaleness = time.Second

// Upper bounds of the variables: far above any real deployment, low enough that the sums never
// overflow.
const (
	maxRequestsPerMinute = 1_000_000_000
	maxTokensPerMinute   = 1_000_000_000_000
	maxDailyUSD          = 1_000_000
)

// ConfigFromEnv reads the limits through getenv: PLUME_GATEWAY_RPM, PLUME_GATEWAY_TPM (whole
// numbers) and PLUME_GATEWAY_DAILY_USD (a decimal number of dollars such as 25 or 12.50). Unset
// or 0 means unlimited. MaxStaleness is DefaultMaxStaleness.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{MaxStaleness: DefaultMaxStaleness}
	for _, v := range []struct {
		name string
		dst  *int
		max  int
		unit string
	}{
		{"PLUME_GATEWAY_RPM", &c.RequestsPerMinute, maxRequestsPerMinute, "requests per minute"},
		{"PLUME_GATEWAY_TPM", &c.TokensPerMinute, maxTokensPerMinute, "tokens per minute"},
	} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > v.max {
			return Config{}, fmt.Errorf("%s %q: want %s from 0 (unlimited) to %d", v.name, s, v.unit, v.max)
		}
		*v.dst = n
	}
	if s := strings.TrimSpace(getenv("PLUME_GATEWAY_DAILY_USD")); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > maxDailyUSD {
			return Config{}, fmt.Errorf("PLUME_GATEWAY_DAILY_USD %q: want dollars from 0 (unlimited) to %d", s, maxDailyUSD)
		}
		c.DailyUSD = f
	}
	return c, nil
}
