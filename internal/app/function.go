package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/plumehq/plume/shared/awsjson"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/lambdahttp"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/web"
)

// Function is one Lambda function of template.yaml.
type Function struct {
	// Name is the function's logical id in template.yaml ("PromptsFunction"), and its Makefile
	// target is build-<Name>.
	Name string
	// Routes are the API Gateway route keys of the function's events; plume-local mounts the
	// handler on the same keys.
	Routes []string
	// Build makes the function's handler from the Env. It fails for configuration the function
	// cannot run with, such as a missing bucket.
	Build func(*Env) (http.Handler, error)
	// Streaming serves the function's Function URL in RESPONSE_STREAM invoke mode: what the
	// handler flushes reaches the client at once (lambdahttp.StartStreaming).
	Streaming bool
}

// Only is f serving the requests of the given methods only: an area mounted in-process by a
// surface (the dashboard, the MCP server) that calls part of it, under a policy that grants
// that part only. Its routes of other methods are dropped; a request of another method on one
// of its ANY routes answers the in-process API's 404, as an unmounted route does.
func Only(f Function, methods ...string) Function {
	var routes []string
	for _, r := range f.Routes {
		method, _, _ := strings.Cut(r, " ")
		if method == "ANY" || slices.Contains(methods, method) {
			routes = append(routes, r)
		}
	}
	build := f.Build
	f.Routes, f.Build = routes, func(e *Env) (http.Handler, error) {
		h, err := build(e)
		if err != nil {
			return nil, err
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !slices.Contains(methods, r.Method) {
				web.NotFound(w, r)
				return
			}
			h.ServeHTTP(w, r)
		}), nil
	}
	return f
}

// Main is the whole main of a Lambda function: it reads the configuration from the environment,
// sets up JSON logging and the AWS configuration, builds fn's handler once (at init, not per
// request) and serves it until the execution environment ends. A function that cannot be
// built logs why and exits with status 1, which Lambda reports as an init error.
func Main(fn Function) {
	h, err := build(context.Background(), fn, os.Getenv)
	if err != nil {
		slog.Error("cannot start", "function", fn.Name, "error", err)
		os.Exit(1)
	}
	if fn.Streaming {
		lambdahttp.StartStreaming(h)
		return
	}
	lambdahttp.Start(h)
}

// build is Main up to the handler.
func build(ctx context.Context, fn Function, getenv func(string) string) (http.Handler, error) {
	env, err := envFrom(ctx, getenv)
	if err != nil {
		return nil, err
	}
	return fn.Build(env)
}

// envFrom is the Env of a deployed function: the configuration read from getenv, JSON logs on
// stdout, the AWS clients of the SDK's own configuration.
func envFrom(ctx context.Context, getenv func(string) string) (*Env, error) {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, fmt.Errorf("bad configuration: %w", err)
	}
	slog.SetDefault(web.NewLogger(os.Stdout, cfg.LogLevel))
	awsCfg, err := config.AWS(ctx)
	if err != nil {
		return nil, err
	}
	c := ClientsFromAWS(cfg, awsCfg)
	c.Models = func(ctx context.Context) (*llm.Client, error) { return ModelsFromEnv(ctx, cfg, awsCfg, getenv) }
	if cfg.OptimizationQueueURL != "" {
		c.Optimizations = NewSQSQueue(awsjson.New(awsCfg, awsjson.SQS), cfg.OptimizationQueueURL)
	}
	if url := cfg.Webhooks.QueueURL; url != "" {
		c.Webhooks = NewSQSQueue(awsjson.New(awsCfg, awsjson.SQS), url)
	}
	if url := cfg.Webhooks.DeadLetterURL; url != "" {
		c.WebhookDeadLetter = NewSQSQueue(awsjson.New(awsCfg, awsjson.SQS), url)
	}
	c.EventBus = EventBusFromAWS(cfg, awsCfg)
	return NewEnv(cfg, c), nil
}

// Mount builds every function of fns from env and mounts each on its route keys, as API
// Gateway routes them, with a JSON 404 for every other path: several areas on one handler, as
// the MCP tool server and the dashboard call the REST areas in-process.
//
// Each function is built on the first request routed to it, not here: the MCP tool server and
// the dashboard mount ten areas, and building them all at start (each registering its routes
// on its own ServeMux, beside the routes registered here) was 2-7 ms of every cold start,
// mostly for areas a given instance may never call. A function whose Build fails answers
// every request 500, the cause logged. MountDeployed builds every function at once.
//
// The route keys themselves are registered on the first request too: ServeMux checks each
// new pattern against those it holds, and the ten areas' 200-odd patterns took about 0.8 ms of
// every MCPFunction and DashboardFunction start, when MCP's initialize and tools/list, and the
// dashboard's sign-in page and assets, route nothing here.
func Mount(env *Env, fns []Function) (http.Handler, error) {
	routed := sync.OnceValue(func() http.Handler {
		mux := http.NewServeMux()
		for _, fn := range fns {
			web.Mount(mux, fn.Routes, &lazyFunction{fn: fn, env: env})
		}
		notFound := web.Chain(http.HandlerFunc(web.NotFound))
		mux.Handle("/", notFound)
		return web.CleanPathsOnly(mux, notFound)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { routed().ServeHTTP(w, r) }), nil
}

// lazyFunction is a function built on its first request.
type lazyFunction struct {
	fn   Function
	env  *Env
	once sync.Once
	h    http.Handler
	err  error
}

func (l *lazyFunction) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.once.Do(func() {
		if l.h, l.err = l.fn.Build(l.env); l.err != nil {
			l.err = fmt.Errorf("build %s: %w", l.fn.Name, l.err)
		}
	})
	if l.err != nil {
		web.Error(w, r, l.err)
		return
	}
	l.h.ServeHTTP(w, r)
}

// MountDeployed is Mount with each function served as a deployment serves it: behind API
// Gateway and Lambda's limits (lambdahttp.AsDeployed: a request whose event is over 6 MB is
// API Gateway's 413, an answer over Lambda's response payload limit its 500), and a streaming
// function as its Function URL streams (lambdahttp.StreamingAsDeployed).
// plume-local and the tests of the whole API serve through it, so that they see what
// production would answer.
func MountDeployed(env *Env, fns []Function) (http.Handler, error) {
	return mount(env, fns, func(fn Function, h http.Handler) http.Handler {
		if fn.Streaming {
			return lambdahttp.StreamingAsDeployed(h)
		}
		return lambdahttp.AsDeployed(h)
	})
}

// mount is Mount with each function's handler wrapped by serve.
func mount(env *Env, fns []Function, serve func(Function, http.Handler) http.Handler) (http.Handler, error) {
	mux := http.NewServeMux()
	for _, fn := range fns {
		h, err := fn.Build(env)
		if err != nil {
			return nil, fmt.Errorf("build %s: %w", fn.Name, err)
		}
		web.Mount(mux, fn.Routes, serve(fn, h))
	}
	notFound := web.Chain(http.HandlerFunc(web.NotFound))
	mux.Handle("/", notFound)
	return web.CleanPathsOnly(mux, notFound), nil
}
