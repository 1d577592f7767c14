package lambdaemu_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/lambdaemu"
)

// reply mirrors the answer of testdata/echo.
type reply struct {
	Echo         json.RawMessage `json:"echo"`
	Seq          int64           `json:"seq"`
	MaxInFlight  int64           `json:"max_in_flight"`
	RequestID    string          `json:"request_id"`
	FunctionARN  string          `json:"function_arn"`
	DeadlineMS   int64           `json:"deadline_ms"`
	TraceID      string          `json:"trace_id"`
	FunctionName string          `json:"function_name"`
	Region       string          `json:"region"`
}

// TestEmulator builds testdata/echo once and runs every scenario against it.
func TestEmulator(t *testing.T) {
	bin := buildEcho(t)
	t.Run("no goroutine leaks", func(t *testing.T) { testNoLeaks(t, bin) }) // before the parallel ones
	t.Run("invoke outcomes", func(t *testing.T) { t.Parallel(); testInvokeOutcomes(t, bin) })
	t.Run("sequential", func(t *testing.T) { t.Parallel(); testSequential(t, bin) })
	t.Run("environment", func(t *testing.T) { t.Parallel(); testEnvironment(t, bin) })
	t.Run("concurrent invokes queue", func(t *testing.T) { t.Parallel(); testConcurrent(t, bin) })
	t.Run("start failures", func(t *testing.T) { t.Parallel(); testStartFailures(t, bin) })
	t.Run("context ends", func(t *testing.T) { t.Parallel(); testContextEnds(t, bin) })
	t.Run("close", func(t *testing.T) { t.Parallel(); testClose(t, bin) })
	t.Run("runtime API errors", func(t *testing.T) { t.Parallel(); testRuntimeAPIErrors(t, bin) })
}

// buildEcho builds testdata/echo as a Lambda bootstrap for the host.
func buildEcho(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", bin, "./testdata/echo")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// start runs an emulator for the test and closes it when the test ends.
func start(t *testing.T, cfg lambdaemu.Config) *lambdaemu.Emulator {
	t.Helper()
	cfg.Stdout, cfg.Stderr = t.Output(), t.Output()
	emu, err := lambdaemu.Start(t.Context(), cfg)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, emu.Close()) })
	return emu
}

// invoke calls emu.Invoke and decodes the echo reply.
func invoke(t *testing.T, emu *lambdaemu.Emulator, payload string) reply {
	t.Helper()
	out, err := emu.Invoke(t.Context(), []byte(payload))
	require.NoError(t, err)
	var r reply
	require.NoError(t, json.Unmarshal(out, &r), "reply: %.200s", out)
	return r
}

// hold is an invocation the function keeps running until the test lets it go: it streams two
// chunks and asks the test's gate before the second. reached is closed once the function runs
// it; release lets it finish (and is called when the test ends, before the gate closes).
type hold struct {
	payload []byte
	reached <-chan struct{}
	release func()
}

func newHold(t *testing.T) hold {
	t.Helper()
	reached, released := make(chan struct{}), make(chan struct{})
	var arrived, freed sync.Once
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Do(func() { close(reached) })
		select {
		case <-released:
		case <-r.Context().Done(): // the process is gone
		}
	}))
	release := func() { freed.Do(func() { close(released) }) }
	t.Cleanup(gate.Close)
	t.Cleanup(release) // runs first
	return hold{payload: payload(t, map[string]any{"chunks": []string{"a", "b"}, "gate": gate.URL}), reached: reached, release: release}
}

func testInvokeOutcomes(t *testing.T, bin string) {
	tests := []struct {
		name    string
		payload string
		check   func(t *testing.T, out []byte, err error)
	}{
		{
			name:    "echo round trip",
			payload: `{"message":"hello","n":[1,2,3]}`,
			check: func(t *testing.T, out []byte, err error) {
				require.NoError(t, err)
				var r reply
				require.NoError(t, json.Unmarshal(out, &r))
				assert.JSONEq(t, `{"message":"hello","n":[1,2,3]}`, string(r.Echo))
			},
		},
		{
			name:    "non-object event",
			payload: `"just a string"`,
			check: func(t *testing.T, out []byte, err error) {
				require.NoError(t, err)
				var r reply
				require.NoError(t, json.Unmarshal(out, &r))
				assert.JSONEq(t, `"just a string"`, string(r.Echo))
			},
		},
		{
			name:    "function error",
			payload: `{"fail":"boom"}`,
			check: func(t *testing.T, out []byte, err error) {
				fe, ok := errors.AsType[*lambdaemu.FunctionError](err)
				require.True(t, ok, "want *FunctionError, got %v", err)
				assert.Equal(t, "EchoError", fe.Type)
				assert.Equal(t, "boom", fe.Message)
				assert.Equal(t, "EchoError: boom", fe.Error())
				assert.Nil(t, out)
			},
		},
		{
			name:    "panic",
			payload: `{"panic":"kaboom"}`,
			check: func(t *testing.T, _ []byte, err error) {
				fe, ok := errors.AsType[*lambdaemu.FunctionError](err)
				require.True(t, ok, "want *FunctionError, got %v", err)
				assert.Equal(t, "string", fe.Type)
				assert.Equal(t, "kaboom", fe.Message)
				assert.NotEmpty(t, fe.StackTrace)
			},
		},
		{
			name:    "process exit",
			payload: `{"exit":3}`,
			check: func(t *testing.T, _ []byte, err error) {
				require.ErrorIs(t, err, lambdaemu.ErrExited)
				assert.ErrorContains(t, err, "exit status 3")
			},
		},
		{
			name:    "response stream fails",
			payload: `{"broken":"disk on fire"}`,
			check: func(t *testing.T, _ []byte, err error) {
				fe, ok := errors.AsType[*lambdaemu.FunctionError](err)
				require.True(t, ok, "want *FunctionError, got %v", err)
				assert.Equal(t, "errorString", fe.Type)
				assert.Equal(t, "disk on fire", fe.Message)
			},
		},
		{
			name:    "response too large",
			payload: `{"pad":7000000}`,
			check: func(t *testing.T, _ []byte, err error) {
				fe, ok := errors.AsType[*lambdaemu.FunctionError](err)
				require.True(t, ok, "want *FunctionError, got %v", err)
				assert.Equal(t, "Function.ResponseSizeTooLarge", fe.Type)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			emu := start(t, lambdaemu.Config{Binary: bin})
			out, err := emu.Invoke(t.Context(), []byte(tt.payload))
			tt.check(t, out, err)
		})
	}

	t.Run("response at the limit", func(t *testing.T) {
		t.Parallel()
		emu := start(t, lambdaemu.Config{Binary: bin})
		const near = 6<<20 - 1000 // as many digits as the padding at the limit: the reply echoes the event
		out, err := emu.Invoke(t.Context(), fmt.Appendf(nil, `{"pad":%d}`, near))
		require.NoError(t, err)
		overhead := len(out) - near // the reply besides its padding (the first nine replies number alike)
		out, err = emu.Invoke(t.Context(), fmt.Appendf(nil, `{"pad":%d}`, 6<<20+100-overhead))
		require.NoError(t, err, "a response of exactly 6,291,556 bytes is Lambda's largest")
		assert.Len(t, out, 6<<20+100)
		_, err = emu.Invoke(t.Context(), fmt.Appendf(nil, `{"pad":%d}`, 6<<20+100-overhead+1))
		fe, ok := errors.AsType[*lambdaemu.FunctionError](err)
		require.True(t, ok, "want *FunctionError, got %v", err)
		assert.Equal(t, "Function.ResponseSizeTooLarge", fe.Type)
	})

	t.Run("payload too large", func(t *testing.T) {
		t.Parallel()
		emu := start(t, lambdaemu.Config{Binary: bin})
		// Lambda's request limit is 100 bytes under its response limit: an event of 6,291,457
		// bytes is refused although a response of that size would pass.
		_, err := emu.Invoke(t.Context(), make([]byte, 6<<20+1))
		require.ErrorIs(t, err, lambdaemu.ErrRequestTooLarge)
		assert.ErrorContains(t, err, "Request must be smaller than 6291456 bytes for the InvokeFunction operation")
		assert.Equal(t, int64(1), invoke(t, emu, `{}`).Seq, "the oversized event never reached the function")
	})
}

func testSequential(t *testing.T, bin string) {
	emu := start(t, lambdaemu.Config{Binary: bin})
	ids := map[string]bool{}
	for i := 1; i <= 5; i++ {
		before := time.Now()
		r := invoke(t, emu, fmt.Sprintf(`{"i":%d}`, i))
		assert.JSONEq(t, fmt.Sprintf(`{"i":%d}`, i), string(r.Echo))
		assert.Equal(t, int64(i), r.Seq)
		assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, r.RequestID)
		assert.False(t, ids[r.RequestID], "request id %s reused", r.RequestID)
		ids[r.RequestID] = true
		assert.Equal(t, "arn:aws:lambda:us-east-1:000000000000:function:function", r.FunctionARN)
		assert.Regexp(t, `^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=0$`, r.TraceID)
		deadline := time.UnixMilli(r.DeadlineMS)
		assert.WithinRange(t, deadline, before.Add(29*time.Second), time.Now().Add(30*time.Second))
	}
}

func testEnvironment(t *testing.T, bin string) {
	tests := []struct {
		name       string
		env        []string
		wantName   string
		wantRegion string
	}{
		{name: "defaults", wantName: "function", wantRegion: "us-east-1"},
		{
			name:       "overrides",
			env:        []string{"AWS_REGION=eu-west-1", "AWS_LAMBDA_FUNCTION_NAME=prompts", "AWS_LAMBDA_RUNTIME_API=nowhere:1"},
			wantName:   "prompts",
			wantRegion: "eu-west-1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			emu := start(t, lambdaemu.Config{Binary: bin, Env: tt.env})
			r := invoke(t, emu, `{}`)
			assert.Equal(t, tt.wantName, r.FunctionName)
			assert.Equal(t, tt.wantRegion, r.Region)
			assert.Equal(t, "arn:aws:lambda:"+tt.wantRegion+":000000000000:function:"+tt.wantName, r.FunctionARN)
		})
	}
}

func testConcurrent(t *testing.T, bin string) {
	// The runtime polls with four workers, so only the emulator keeps invocations apart.
	emu := start(t, lambdaemu.Config{Binary: bin, Env: []string{"AWS_LAMBDA_MAX_CONCURRENCY=4"}})
	const n = 8
	replies := make([]reply, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out, err := emu.Invoke(t.Context(), fmt.Appendf(nil, `{"i":%d,"sleep_ms":20}`, i))
			if err == nil {
				err = json.Unmarshal(out, &replies[i])
			}
			errs[i] = err
		})
	}
	wg.Wait()

	seqs := map[int64]bool{}
	for i, r := range replies {
		require.NoError(t, errs[i])
		assert.JSONEq(t, fmt.Sprintf(`{"i":%d,"sleep_ms":20}`, i), string(r.Echo))
		assert.Equal(t, int64(1), r.MaxInFlight, "invocations overlapped")
		seqs[r.Seq] = true
	}
	assert.Len(t, seqs, n, "every invocation ran exactly once")
}

func testStartFailures(t *testing.T, bin string) {
	tests := []struct {
		name     string
		env      []string
		wantErr  string
		wantInit string // message of the init error, if one is expected
	}{
		{name: "exit during init", env: []string{"ECHO_EXIT_AT_INIT=4"}, wantErr: "exit status 4"},
		{
			name:     "init error",
			env:      []string{"ECHO_INIT_ERROR=bad config"},
			wantErr:  "exit status 1",
			wantInit: "bad config",
		},
		{
			name:     "init error, process lingers",
			env:      []string{"ECHO_INIT_ERROR=bad config", "ECHO_INIT_HANG=1"},
			wantErr:  "signal: terminated",
			wantInit: "bad config",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			emu := start(t, lambdaemu.Config{Binary: bin, Env: tt.env})
			for range 2 { // the invocation that finds the process dead, and a later one
				_, err := emu.Invoke(t.Context(), []byte(`{}`))
				require.ErrorIs(t, err, lambdaemu.ErrExited)
				assert.ErrorContains(t, err, tt.wantErr)
				fe, ok := errors.AsType[*lambdaemu.FunctionError](err)
				if tt.wantInit == "" {
					assert.False(t, ok, "unexpected init error %v", fe)
					continue
				}
				require.True(t, ok, "want an init error in %v", err)
				assert.Equal(t, "EchoInitError", fe.Type)
				assert.Equal(t, tt.wantInit, fe.Message)
			}
		})
	}

	t.Run("missing binary", func(t *testing.T) {
		t.Parallel()
		_, err := lambdaemu.Start(t.Context(), lambdaemu.Config{Binary: filepath.Join(t.TempDir(), "nope")})
		require.ErrorContains(t, err, "lambdaemu: start")
	})

	t.Run("later invokes after a crash", func(t *testing.T) {
		t.Parallel()
		emu := start(t, lambdaemu.Config{Binary: bin})
		_, err := emu.Invoke(t.Context(), []byte(`{"panic":"once"}`))
		require.IsType(t, &lambdaemu.FunctionError{}, err)
		_, err = emu.Invoke(t.Context(), []byte(`{}`))
		require.ErrorIs(t, err, lambdaemu.ErrExited)
		assert.ErrorContains(t, err, "exit status 1")
	})
}

func testContextEnds(t *testing.T, bin string) {
	t.Run("caller gives up", func(t *testing.T) {
		t.Parallel()
		emu := start(t, lambdaemu.Config{Binary: bin})
		h := newHold(t)
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, err := emu.Invoke(ctx, h.payload)
			errc <- err
		}()
		<-h.reached // the function runs the event
		cancel()
		err := <-errc
		require.ErrorIs(t, err, context.Canceled)
		assert.ErrorContains(t, err, "abandoned waiting for the function")
		// The function finishes the abandoned event, then serves the next one.
		h.release()
		r := invoke(t, emu, `{"after":true}`)
		assert.Equal(t, int64(2), r.Seq)
		assert.JSONEq(t, `{"after":true}`, string(r.Echo))
	})

	t.Run("cancelled while queued", func(t *testing.T) {
		t.Parallel()
		emu := start(t, lambdaemu.Config{Binary: bin})
		h := newHold(t)
		first := make(chan error, 1)
		go func() {
			_, err := emu.Invoke(t.Context(), h.payload)
			first <- err
		}()
		<-h.reached // the first call holds the environment
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		_, err := emu.Invoke(ctx, []byte(`{}`))
		require.ErrorIs(t, err, context.Canceled)
		assert.ErrorContains(t, err, "waiting for earlier invocations")
		h.release()
		require.NoError(t, <-first)
		assert.Equal(t, int64(2), invoke(t, emu, `{}`).Seq, "the cancelled event never reached the function")
	})

	t.Run("invocation timeout", func(t *testing.T) {
		t.Parallel()
		emu := start(t, lambdaemu.Config{Binary: bin, Timeout: 200 * time.Millisecond})
		_, err := emu.Invoke(t.Context(), []byte(`{"sleep_ms":2000}`))
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.ErrorContains(t, err, "timed out after 200ms")
	})
}

func testClose(t *testing.T, bin string) {
	tests := []struct {
		name string
		env  []string
	}{
		{name: "process exits on SIGTERM"},
		{name: "process ignores SIGTERM", env: []string{"ECHO_IGNORE_SIGTERM=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			emu := start(t, lambdaemu.Config{Binary: bin, Env: tt.env})
			invoke(t, emu, `{}`) // the process is up and past its signal setup

			h := newHold(t)
			pending := make(chan error, 1)
			go func() {
				_, err := emu.Invoke(t.Context(), h.payload)
				pending <- err
			}()
			<-h.reached // the function runs the invocation

			require.NoError(t, emu.Close())
			assert.ErrorIs(t, syscall.Kill(emu.PID(), 0), syscall.ESRCH, "process %d still exists", emu.PID())
			assert.ErrorIs(t, <-pending, lambdaemu.ErrClosed)
			_, err := emu.Invoke(t.Context(), []byte(`{}`))
			assert.ErrorIs(t, err, lambdaemu.ErrClosed)
			assert.NoError(t, emu.Close(), "Close is idempotent")
		})
	}
}

func testRuntimeAPIErrors(t *testing.T, bin string) {
	emu := start(t, lambdaemu.Config{Binary: bin})
	invoke(t, emu, `{}`) // initialisation is over
	base := "http://" + emu.Addr() + "/2018-06-01/runtime"
	tests := []struct {
		name       string
		method     string
		path       string
		wantStatus int
		wantType   string
	}{
		{"response to unknown id", http.MethodPost, "/invocation/nope/response", http.StatusBadRequest, "InvalidRequestID"},
		{"error for unknown id", http.MethodPost, "/invocation/nope/error", http.StatusBadRequest, "InvalidRequestID"},
		{"init error after init", http.MethodPost, "/init/error", http.StatusForbidden, "InvalidStateTransition"},
		{"unknown endpoint", http.MethodGet, "/nope", http.StatusNotFound, ""},
		{"wrong method", http.MethodPost, "/invocation/next", http.StatusMethodNotAllowed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), tt.method, base+tt.path, strings.NewReader(`{}`))
			require.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			if tt.wantType != "" {
				var body struct {
					Type string `json:"errorType"`
				}
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
				assert.Equal(t, tt.wantType, body.Type)
			}
		})
	}
	assert.Equal(t, int64(2), invoke(t, emu, `{}`).Seq, "the function is unaffected")
}

func testNoLeaks(t *testing.T, bin string) {
	tests := []struct {
		name    string
		env     []string
		payload string
	}{
		{name: "idle", payload: `{}`},
		{name: "busy, ignoring SIGTERM", env: []string{"ECHO_IGNORE_SIGTERM=1"}, payload: `{"sleep_ms":10000}`},
		{name: "crashed", payload: `{"exit":2}`},
		{name: "init error", env: []string{"ECHO_INIT_ERROR=bad", "ECHO_INIT_HANG=1"}, payload: `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			emu, err := lambdaemu.Start(t.Context(), lambdaemu.Config{Binary: bin, Env: tt.env, Stderr: t.Output()})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
			defer cancel()
			_, _ = emu.Invoke(ctx, []byte(tt.payload)) // any outcome will do
			require.NoError(t, emu.Close())
			// Polled here: assert.Eventually would count its own goroutines.
			for end := time.Now().Add(time.Minute); runtime.NumGoroutine() > before && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
			}
			if after := runtime.NumGoroutine(); after > before {
				buf := make([]byte, 1<<20)
				t.Errorf("%d goroutines before, %d after:\n%s", before, after, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}
