// Command echo is the Lambda function the lambdaemu tests run. It answers each event with the
// event itself and what it learned about the invocation, and the event or the environment can
// tell it to misbehave.
//
// Environment: ECHO_EXIT_AT_INIT=N exits with status N before polling for events;
// ECHO_INIT_ERROR=msg posts msg to /runtime/init/error and exits with status 1, or sleeps
// instead if ECHO_INIT_HANG is set; ECHO_IGNORE_SIGTERM ignores SIGTERM.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// event holds the instructions an event may carry; any other fields are only echoed.
type event struct {
	Fail    string   `json:"fail"`     // return an *EchoError with this message
	Panic   string   `json:"panic"`    // panic with this value
	Exit    int      `json:"exit"`     // exit the process with this status
	SleepMS int      `json:"sleep_ms"` // sleep this long first, ignoring the deadline
	Pad     int      `json:"pad"`      // add this many bytes to the reply
	Broken  string   `json:"broken"`   // reply with a stream that fails with this message
	Chunks  []string `json:"chunks"`   // reply with a stream of these chunks, each one read alone
	Gate    string   `json:"gate"`     // before each chunk but the first, GET this URL?chunk=i
}

// reply is the function's answer.
type reply struct {
	Echo         json.RawMessage `json:"echo"`
	Seq          int64           `json:"seq"`           // invocations begun by this process
	MaxInFlight  int64           `json:"max_in_flight"` // most invocations seen running at once
	RequestID    string          `json:"request_id"`
	FunctionARN  string          `json:"function_arn"`
	DeadlineMS   int64           `json:"deadline_ms"`
	TraceID      string          `json:"trace_id"`
	FunctionName string          `json:"function_name"`
	Region       string          `json:"region"`
	Pad          string          `json:"pad,omitempty"`
}

// EchoError is the error the function returns when asked to fail.
type EchoError struct{ Message string }

func (e *EchoError) Error() string { return e.Message }

// brokenReader is a reply stream that fails after its first read.
type brokenReader struct {
	err  error
	read bool
}

func (b *brokenReader) Read(p []byte) (int, error) {
	if b.read {
		return 0, b.err
	}
	b.read = true
	return copy(p, "partial"), nil
}

// chunkReader is a reply stream of chunks, each returned by one Read (which the runtime sends
// as one chunk). Before chunk i > 0 it waits for GET gate?chunk=i to answer, so that a test
// decides when each chunk leaves.
type chunkReader struct {
	chunks []string
	gate   string
	next   int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.next == len(c.chunks) {
		return 0, io.EOF
	}
	if c.next > 0 && c.gate != "" {
		resp, err := http.Get(fmt.Sprintf("%s?chunk=%d", c.gate, c.next))
		if err != nil {
			return 0, fmt.Errorf("gate: %w", err)
		}
		resp.Body.Close()
	}
	n := copy(p, c.chunks[c.next])
	c.next++
	return n, nil
}

// counters tracks the invocations this process runs.
var counters struct {
	sync.Mutex
	seq, inFlight, maxInFlight int64
}

// begin records the start of an invocation and returns its sequence number.
func begin() int64 {
	counters.Lock()
	defer counters.Unlock()
	counters.seq++
	counters.inFlight++
	counters.maxInFlight = max(counters.maxInFlight, counters.inFlight)
	return counters.seq
}

// end records the end of an invocation and returns the most invocations seen at once.
func end() int64 {
	counters.Lock()
	defer counters.Unlock()
	counters.inFlight--
	return counters.maxInFlight
}

// handle answers one event with a reply, or with an io.Reader when asked for a broken one.
func handle(ctx context.Context, in json.RawMessage) (any, error) {
	out := reply{Echo: in, Seq: begin(), FunctionName: lambdacontext.FunctionName, Region: os.Getenv("AWS_REGION")}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		out.RequestID, out.FunctionARN = lc.AwsRequestID, lc.InvokedFunctionArn
	}
	if deadline, ok := ctx.Deadline(); ok {
		out.DeadlineMS = deadline.UnixMilli()
	}
	out.TraceID, _ = ctx.Value("x-amzn-trace-id").(string)

	var ev event
	_ = json.Unmarshal(in, &ev) // events that are not objects are only echoed
	time.Sleep(time.Duration(ev.SleepMS) * time.Millisecond)
	out.MaxInFlight = end()
	switch {
	case ev.Exit != 0:
		os.Exit(ev.Exit)
	case ev.Panic != "":
		panic(ev.Panic)
	case ev.Fail != "":
		return nil, &EchoError{Message: ev.Fail}
	case ev.Broken != "":
		return &brokenReader{err: errors.New(ev.Broken)}, nil
	case ev.Chunks != nil:
		return &chunkReader{chunks: ev.Chunks, gate: ev.Gate}, nil
	}
	out.Pad = strings.Repeat("x", ev.Pad)
	return out, nil
}

// postInitError reports msg to the Runtime API as an initialisation error.
func postInitError(msg string) error {
	body, err := json.Marshal(map[string]string{"errorType": "EchoInitError", "errorMessage": msg})
	if err != nil {
		return fmt.Errorf("marshal init error: %w", err)
	}
	url := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/init/error"
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("post init error: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("post init error: status %d", resp.StatusCode)
	}
	return nil
}

func main() {
	if os.Getenv("ECHO_IGNORE_SIGTERM") != "" {
		signal.Ignore(syscall.SIGTERM)
	}
	if code, err := strconv.Atoi(os.Getenv("ECHO_EXIT_AT_INIT")); err == nil {
		os.Exit(code)
	}
	if msg := os.Getenv("ECHO_INIT_ERROR"); msg != "" {
		if err := postInitError(msg); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		if os.Getenv("ECHO_INIT_HANG") != "" {
			time.Sleep(time.Hour)
		}
		os.Exit(1)
	}
	lambda.Start(handle)
}
