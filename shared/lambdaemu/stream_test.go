package lambdaemu_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/lambdaemu"
)

// TestInvokeStream: a streamed response reaches the caller chunk by chunk while the function
// is still answering; a stream the function cuts ends with its error; a function that fails
// before answering fails InvokeStream; the environment serves the next invocation afterwards.
func TestInvokeStream(t *testing.T) {
	emu := start(t, lambdaemu.Config{Binary: buildEcho(t)})
	// A failure surfaces when this bound passes rather than hanging the run; it is not a measure.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	t.Run("chunk by chunk", func(t *testing.T) {
		// The function sends chunk i only once the test opens gate i, which it does only after
		// reading chunk i-1: a response held back until it is whole would never arrive.
		chunks := []string{`data: {"n":0}` + "\n\n", `data: {"n":1}` + "\n\n", "data: [DONE]\n\n"}
		gates, stop := make([]chan struct{}, len(chunks)), make(chan struct{})
		for i := range gates {
			gates[i] = make(chan struct{})
		}
		gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			i, err := strconv.Atoi(r.URL.Query().Get("chunk"))
			if err != nil || i <= 0 || i >= len(gates) {
				http.Error(w, "bad chunk", http.StatusBadRequest)
				return
			}
			select {
			case <-gates[i]:
			case <-stop:
			}
		}))
		defer gate.Close()
		defer close(stop) // before Close, which waits for the gates in progress

		s, err := emu.InvokeStream(ctx, payload(t, map[string]any{"chunks": chunks, "gate": gate.URL}))
		require.NoError(t, err)
		defer s.Close()
		for i, want := range chunks {
			if i > 0 {
				close(gates[i])
			}
			got := make([]byte, len(want))
			_, err := io.ReadFull(s, got)
			require.NoError(t, err, "chunk %d", i)
			assert.Equal(t, want, string(got))
		}
		n, err := s.Read(make([]byte, 1))
		assert.Equal(t, 0, n)
		assert.ErrorIs(t, err, io.EOF)
	})

	t.Run("cut midway", func(t *testing.T) {
		s, err := emu.InvokeStream(ctx, payload(t, map[string]any{"broken": "disk on fire"}))
		require.NoError(t, err)
		defer s.Close()
		got, err := io.ReadAll(s)
		assert.Equal(t, "partial", string(got))
		fe, ok := errors.AsType[*lambdaemu.FunctionError](err)
		require.True(t, ok, "want *FunctionError, got %v", err)
		assert.Contains(t, fe.Message, "disk on fire")
	})

	t.Run("failed before answering", func(t *testing.T) {
		_, err := emu.InvokeStream(ctx, payload(t, map[string]any{"fail": "boom"}))
		fe, ok := errors.AsType[*lambdaemu.FunctionError](err)
		require.True(t, ok, "want *FunctionError, got %v", err)
		assert.Equal(t, "EchoError", fe.Type)
	})

	t.Run("a buffered answer is one stream", func(t *testing.T) {
		s, err := emu.InvokeStream(ctx, payload(t, map[string]any{"message": "whole"}))
		require.NoError(t, err)
		defer s.Close()
		body, err := io.ReadAll(s)
		require.NoError(t, err)
		var r reply
		require.NoError(t, json.Unmarshal(body, &r), "body: %s", body)
		assert.JSONEq(t, `{"message":"whole"}`, string(r.Echo))
	})

	t.Run("the environment is free again", func(t *testing.T) {
		r := invoke(t, emu, `{"after":"streams"}`)
		assert.JSONEq(t, `{"after":"streams"}`, string(r.Echo))
	})
}

func payload(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err, fmt.Sprintf("%v", v))
	return b
}
