package ratelimit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/ratelimit"
)

func TestLimitConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    ratelimit.Config
		wantErr string
	}{
		{name: "unset: unlimited", env: nil,
			want: ratelimit.Config{MaxStaleness: ratelimit.DefaultMaxStaleness}},
		{name: "every limit",
			env: map[string]string{"PLUME_GATEWAY_RPM": "60", "PLUME_GATEWAY_TPM": " 100000 ", "PLUME_GATEWAY_DAILY_USD": "12.50"},
			want: ratelimit.Config{RequestsPerMinute: 60, TokensPerMinute: 100000, DailyUSD: 12.5,
				MaxStaleness: ratelimit.DefaultMaxStaleness}},
		{name: "zero: unlimited",
			env:  map[string]string{"PLUME_GATEWAY_RPM": "0", "PLUME_GATEWAY_TPM": "0", "PLUME_GATEWAY_DAILY_USD": "0"},
			want: ratelimit.Config{MaxStaleness: ratelimit.DefaultMaxStaleness}},
		{name: "negative rpm", env: map[string]string{"PLUME_GATEWAY_RPM": "-1"}, wantErr: "PLUME_GATEWAY_RPM"},
		{name: "fractional tpm", env: map[string]string{"PLUME_GATEWAY_TPM": "1.5"}, wantErr: "PLUME_GATEWAY_TPM"},
		{name: "tpm too large", env: map[string]string{"PLUME_GATEWAY_TPM": "1000000000001"}, wantErr: "PLUME_GATEWAY_TPM"},
		{name: "dollars with a sign", env: map[string]string{"PLUME_GATEWAY_DAILY_USD": "$5"}, wantErr: "PLUME_GATEWAY_DAILY_USD"},
		{name: "negative dollars", env: map[string]string{"PLUME_GATEWAY_DAILY_USD": "-5"}, wantErr: "PLUME_GATEWAY_DAILY_USD"},
		{name: "not a number of dollars", env: map[string]string{"PLUME_GATEWAY_DAILY_USD": "NaN"}, wantErr: "PLUME_GATEWAY_DAILY_USD"},
		{name: "infinite dollars", env: map[string]string{"PLUME_GATEWAY_DAILY_USD": "Inf"}, wantErr: "PLUME_GATEWAY_DAILY_USD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ratelimit.ConfigFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
