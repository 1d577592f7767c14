package asyncinvoke

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/plumehq/plume/shared/lambdaemu"
)

// TestLambdaDelay: Lambda waits one minute before the first retry and two before the second.
func TestLambdaDelay(t *testing.T) {
	assert.Equal(t, time.Minute, lambdaDelay(1))
	assert.Equal(t, 2*time.Minute, lambdaDelay(2))
}

func TestErrorPayload(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"errors.New", errors.New("boom"), `{"errorMessage":"boom","errorType":"errorString"}`},
		{"wrapped", fmt.Errorf("judge: %w", errors.New("boom")), `{"errorMessage":"judge: boom","errorType":"wrapError"}`},
		{"function error", fmt.Errorf("invoke: %w", &lambdaemu.FunctionError{Type: "EchoError", Message: "boom"}), `{"errorMessage":"boom","errorType":"EchoError"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.JSONEq(t, tt.want, string(errorPayload(tt.err)))
		})
	}
	assert.Nil(t, errorPayload(nil))
}
