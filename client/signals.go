package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/plumehq/plume/api"
)

// SendSignals records business signals on spans, traces, sessions or completions (POST
// /signals/bulk). A signal set again is updated, so the call is retried like a read. Signals
// the server refused are listed in the answer's Errors by index; when it refuses every one the
// call fails with a 400 *Error.
func (c *Client) SendSignals(ctx context.Context, signals []api.SignalRequest) (api.SignalsAnswer, error) {
	var out api.SignalsAnswer
	err := c.do(ctx, call{method: http.MethodPost, path: "/signals/bulk", body: api.BulkSignalsRequest{Signals: signals}, idempotent: true}, &out)
	return out, err
}

// EntitySignals reads the signals of an entity ("span", "trace", "session" or "completion"),
// by name.
func (c *Client) EntitySignals(ctx context.Context, entityType, entityID string) ([]api.Signal, error) {
	var out []api.Signal
	err := c.do(ctx, call{method: http.MethodGet, path: "/signals/entity/" + url.PathEscape(entityType) + "/" + url.PathEscape(entityID)}, &out)
	return out, err
}

// RecordChoice records an A/B choice on an entity (POST /ab-choices), creating the test on its
// first choice. An entity counts once per test, so the call is retried like a read.
func (c *Client) RecordChoice(ctx context.Context, req api.ABChoiceRequest) (api.ABChoiceAnswer, error) {
	var out api.ABChoiceAnswer
	err := c.do(ctx, call{method: http.MethodPost, path: "/ab-choices", body: req, idempotent: true}, &out)
	return out, err
}

// ABTests lists the project's A/B tests by name.
func (c *Client) ABTests(ctx context.Context) ([]api.ABTest, error) {
	path, err := c.projectPath("/ab-tests")
	if err != nil {
		return nil, err
	}
	_, out, err := whole(ctx, c, path, func(p *api.ABTestList) []api.ABTest { return p.Tests })
	return out, err
}

// ABTest reads an A/B test's report.
func (c *Client) ABTest(ctx context.Context, name string) (api.ABReport, error) {
	path, err := c.projectPath("/ab-tests/%s", url.PathEscape(name))
	if err != nil {
		return api.ABReport{}, err
	}
	var out api.ABReport
	err = c.do(ctx, call{method: http.MethodGet, path: path}, &out)
	return out, err
}

// Span reads one span with the signals recorded on it (GET /spans/{span_id}).
func (c *Client) Span(ctx context.Context, spanID string) (api.SpanWithSignals, error) {
	var out api.SpanWithSignals
	err := c.do(ctx, call{method: http.MethodGet, path: "/spans/" + url.PathEscape(spanID)}, &out)
	return out, err
}

// Trace reads one trace with the signals recorded on it (GET /traces/{trace_id}).
func (c *Client) Trace(ctx context.Context, traceID string) (api.TraceWithSignals, error) {
	var out api.TraceWithSignals
	err := c.do(ctx, call{method: http.MethodGet, path: "/traces/" + url.PathEscape(traceID)}, &out)
	return out, err
}

// Session reads one session with the signals recorded on it (GET /sessions/{session_id}).
func (c *Client) Session(ctx context.Context, sessionID string) (api.SessionWithSignals, error) {
	var out api.SessionWithSignals
	err := c.do(ctx, call{method: http.MethodGet, path: "/sessions/" + url.PathEscape(sessionID)}, &out)
	return out, err
}
