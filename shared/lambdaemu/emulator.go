package lambdaemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// defaultTimeout is the invocation deadline used when Config.Timeout is zero.
	defaultTimeout = 30 * time.Second
	// stopGrace is how long a process may take to exit after SIGTERM before it gets SIGKILL,
	// and how long it may linger after reporting an init error before it gets SIGTERM.
	stopGrace = 500 * time.Millisecond
	// accountID is the AWS account used in the invoked function ARN (LocalStack's default).
	accountID = "000000000000"
)

var (
	// ErrExited is wrapped by the error Invoke returns once the function process has exited.
	ErrExited = errors.New("lambdaemu: function process exited")
	// ErrClosed is returned by Invoke once Close has stopped the process.
	ErrClosed = errors.New("lambdaemu: emulator closed")
)

// Config describes the function an Emulator runs.
type Config struct {
	// Binary is the path of the bootstrap executable, built for the host.
	Binary string
	// Env holds extra KEY=VALUE environment variables. They are added after the base
	// environment, so they override it: AWS_LAMBDA_FUNCTION_NAME, AWS_REGION and the others
	// listed on Start can all be set here. AWS_LAMBDA_RUNTIME_API cannot.
	Env []string
	// Timeout is the deadline of each invocation, sent to the runtime as
	// Lambda-Runtime-Deadline-Ms. It is 30 seconds when zero.
	Timeout time.Duration
	// Stdout and Stderr receive the function's output; nil discards it. In a test,
	// t.Output() ties the output to the test.
	Stdout, Stderr io.Writer
}

// Emulator is one running function process and the Runtime API it polls. Its methods are safe
// for concurrent use.
type Emulator struct {
	addr    string // host:port of the Runtime API
	arn     string // invoked function ARN sent with every event
	timeout time.Duration

	cmd    *exec.Cmd
	cancel context.CancelFunc // stops the process: SIGTERM, then SIGKILL after stopGrace
	srv    *http.Server

	turn    chan struct{}    // holds a token while an Invoke owns the environment
	invokes chan *invocation // hands the next event to a waiting GET /next
	exited  chan struct{}    // closed once the process has exited and exitErr is set
	served  chan struct{}    // closed once the HTTP server has stopped
	exitErr error            // why Invoke can no longer succeed; written before exited closes

	mu      sync.Mutex
	pending map[string]*invocation // events handed to the runtime and not yet answered
	started bool                   // the runtime has asked for an event, so init is over
	initErr *FunctionError         // what the runtime posted to /init/error
	closing bool                   // Close has been called

	closeOnce sync.Once
	closeErr  error // the result of Close, set once
}

// Start listens on 127.0.0.1 on a free port and starts cfg.Binary with a minimal Lambda
// environment: PATH and HOME from the host, TZ=:UTC, LAMBDA_TASK_ROOT (the binary's directory),
// _HANDLER=bootstrap, AWS_LAMBDA_FUNCTION_NAME=function, AWS_LAMBDA_FUNCTION_VERSION=$LATEST,
// AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128, AWS_REGION and AWS_DEFAULT_REGION (us-east-1 unless
// AWS_REGION is in cfg.Env), AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE set to the null
// device and AWS_EC2_METADATA_DISABLED=true, so that the function never picks up the host's
// AWS profiles, then cfg.Env and AWS_LAMBDA_RUNTIME_API. The process is stopped when ctx is
// done; Close must still be called, typically from t.Cleanup, to release the listener.
func Start(ctx context.Context, cfg Config) (*Emulator, error) {
	bin, err := filepath.Abs(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("lambdaemu: binary path: %w", err)
	}
	cfg.Binary = bin // never looked up in PATH
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("lambdaemu: listen: %w", err)
	}
	e := &Emulator{
		addr:    ln.Addr().String(),
		timeout: cfg.Timeout,
		turn:    make(chan struct{}, 1),
		invokes: make(chan *invocation),
		exited:  make(chan struct{}),
		served:  make(chan struct{}),
		pending: make(map[string]*invocation),
	}
	if e.timeout <= 0 {
		e.timeout = defaultTimeout
	}
	env := e.environment(cfg)
	e.arn = fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s",
		lookupEnv(env, "AWS_REGION"), accountID, lookupEnv(env, "AWS_LAMBDA_FUNCTION_NAME"))

	ctx, e.cancel = context.WithCancel(ctx)
	e.cmd = exec.CommandContext(ctx, cfg.Binary)
	e.cmd.Env = env
	e.cmd.Stdout, e.cmd.Stderr = cfg.Stdout, cfg.Stderr
	e.cmd.Cancel = func() error { return e.cmd.Process.Signal(syscall.SIGTERM) }
	e.cmd.WaitDelay = stopGrace
	if err := e.cmd.Start(); err != nil {
		e.cancel()
		_ = ln.Close()
		return nil, fmt.Errorf("lambdaemu: start %s: %w", cfg.Binary, err)
	}
	go e.wait()

	e.srv = &http.Server{Handler: e.routes(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(e.served)
		_ = e.srv.Serve(ln) // returns http.ErrServerClosed once Close shuts it down
	}()
	return e, nil
}

// environment returns the process environment described on Start.
func (e *Emulator) environment(cfg Config) []string {
	region := lookupEnv(cfg.Env, "AWS_REGION")
	if region == "" {
		region = "us-east-1"
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"TZ=:UTC",
		"LAMBDA_TASK_ROOT=" + filepath.Dir(cfg.Binary),
		"_HANDLER=bootstrap",
		"AWS_LAMBDA_FUNCTION_NAME=function",
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=128",
		"AWS_REGION=" + region,
		"AWS_DEFAULT_REGION=" + region,
		"AWS_CONFIG_FILE=" + os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE=" + os.DevNull,
		"AWS_EC2_METADATA_DISABLED=true",
	}
	env = append(env, cfg.Env...)
	// exec.Cmd keeps the last value of a duplicated key, so this one always wins.
	return append(env, "AWS_LAMBDA_RUNTIME_API="+e.addr)
}

// lookupEnv returns the last value of key in env, or "" if it is absent.
func lookupEnv(env []string, key string) string {
	value := ""
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			value = v
		}
	}
	return value
}

// wait reaps the process and records why later invocations cannot succeed.
func (e *Emulator) wait() {
	err := e.cmd.Wait()
	status := "exit status 0"
	if err != nil {
		status = err.Error()
	}
	e.mu.Lock()
	switch {
	case e.closing:
		e.exitErr = ErrClosed
	case e.initErr != nil:
		e.exitErr = fmt.Errorf("%w: %s (init error: %w)", ErrExited, status, e.initErr)
	default:
		e.exitErr = fmt.Errorf("%w: %s", ErrExited, status)
	}
	e.mu.Unlock()
	close(e.exited)
}

// stopAfter stops the process if it has not exited on its own within d.
func (e *Emulator) stopAfter(d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-e.exited:
	case <-timer.C:
		e.cancel()
	}
}

// Addr returns the host:port of the Runtime API, the value of AWS_LAMBDA_RUNTIME_API.
func (e *Emulator) Addr() string { return e.addr }

// PID returns the process id of the function process.
func (e *Emulator) PID() int { return e.cmd.Process.Pid }

// Close stops the function process by its PID (SIGTERM, then SIGKILL if it is still running
// after a short grace period), waits for it to exit and shuts the Runtime API down. Waiting and
// later Invoke calls return ErrClosed, or the exit error if the process had already exited on
// its own. Close is idempotent.
func (e *Emulator) Close() error {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.closing = true
		e.mu.Unlock()
		e.cancel()
		<-e.exited

		ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
		defer cancel()
		if err := e.srv.Shutdown(ctx); err != nil {
			if err := e.srv.Close(); err != nil {
				e.closeErr = fmt.Errorf("lambdaemu: close runtime API: %w", err)
			}
		}
		<-e.served
	})
	return e.closeErr
}
