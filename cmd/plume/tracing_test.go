package main

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/errs"
)

// traceFixture is a trace of four spans (a root, an llm call under it with a tool call under
// that, and a failed step) in a session with a second trace, and a third trace without a
// session. Its ids are fixed and its times are in the past, so that output does not change
// from run to run but for the times of storage, which the scrubbers replace.
type traceFixture struct {
	session, trace, second, third string
	root, llm, tool, failed       string
}

// fixtureStart is when the fixture's trace started.
var fixtureStart = time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)

func newTraceFixture(t *testing.T, h *clientHarness) traceFixture {
	t.Helper()
	fx := traceFixture{
		session: "0195a0b0-0000-7000-8000-00000000000a", trace: "0195a0b0-0000-7000-8000-0000000000b1",
		second: "0195a0b0-0000-7000-8000-0000000000b2", third: "0195a0b0-0000-7000-8000-0000000000b3",
		root: "0195a0b0-0000-7000-8000-0000000000c1", llm: "0195a0b0-0000-7000-8000-0000000000c2",
		tool: "0195a0b0-0000-7000-8000-0000000000c3", failed: "0195a0b0-0000-7000-8000-0000000000c4",
	}
	at := func(d time.Duration) string { return fixtureStart.Add(d).Format(time.RFC3339Nano) }
	llm := apitest.LLMSpan(fx.llm, fx.trace, fx.session, "support-bot", "", `[{"role":"user","content":"How do I reset my password?"}]`,
		"Open Settings, then Security.", fixtureStart.Add(500*time.Millisecond))
	llm["parent_span_id"] = fx.root
	spans := []any{
		map[string]any{
			"id": fx.root, "trace_id": fx.trace, "name": "handle-request", "kind": "generic", "status": "ok",
			"started_at": at(0), "ended_at": at(2500 * time.Millisecond), "session": map[string]any{"id": fx.session, "name": "checkout"},
			"input_data": "How do I reset my password?", "output_data": "Open Settings, then Security.",
			"tags": map[string]string{"env": "production"}, "trace_tags": map[string]string{"env": "production"},
		},
		llm,
		map[string]any{
			"id": fx.tool, "trace_id": fx.trace, "parent_span_id": fx.llm, "name": "search-docs", "kind": "http",
			"status": "ok", "session_id": fx.session, "started_at": at(600 * time.Millisecond), "ended_at": at(900 * time.Millisecond),
		},
		map[string]any{
			"id": fx.failed, "trace_id": fx.trace, "parent_span_id": fx.root, "name": "send-email", "kind": "generic",
			"status": "error", "session_id": fx.session, "started_at": at(2 * time.Second), "ended_at": at(2200 * time.Millisecond),
			"error_code": "SMTP_DOWN", "error_message": "connection refused", "error_stack": "send.go:12\nmain.go:40",
			"attributes": map[string]any{"attachments": []any{map[string]any{
				"type": "text", "label": "bounce", "base64": base64.StdEncoding.EncodeToString([]byte("550 mailbox unavailable")),
			}}},
		},
		map[string]any{
			"id": "0195a0b0-0000-7000-8000-0000000000d1", "trace_id": fx.second, "name": "follow-up", "status": "ok",
			"session_id": fx.session, "started_at": at(time.Minute), "ended_at": at(time.Minute + time.Second),
		},
		map[string]any{
			"id": "0195a0b0-0000-7000-8000-0000000000e1", "trace_id": fx.third, "name": "nightly-job", "status": "ok",
			"started_at": at(time.Hour), "ended_at": at(time.Hour + 300*time.Millisecond),
		},
	}
	h.api.MustDo(t, "POST", "/spans", h.api.A.Key, spans)
	return fx
}

// TestTracingCommands: every traces, spans and sessions command, text and json, against the
// whole API, and the server's filters reached through their flags.
func TestTracingCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	fx := newTraceFixture(t, h)

	h.goldenBoth("traces-list", "traces", "list", "--sort-by", "started_at", "--sort-order", "asc")
	h.goldenBoth("traces-get", "traces", "get", fx.trace)
	h.goldenBoth("traces-spans", "traces", "spans", fx.trace)
	h.goldenBoth("spans-list", "spans", "list", "--trace-id", fx.trace, "--sort-by", "started_at", "--sort-order", "asc")
	h.goldenBoth("spans-get", "spans", "get", fx.llm)
	h.goldenBoth("spans-attachments", "spans", "attachments", fx.failed)
	h.goldenBoth("sessions-list", "sessions", "list")
	h.goldenBoth("sessions-get", "sessions", "get", fx.session)

	// A person's feedback and a judge's evaluation of the llm span, read from the span, its
	// trace and its session.
	h.api.EnsurePrompt(t, h.api.A, "support-bot", "You help with {{product}}.")
	h.api.MustDo(t, "POST", "/v1/prompts/support-bot/completions/"+fx.llm+"/feedback", h.api.A.Key,
		map[string]any{"thumbs_up": false, "reason": "too long"})
	judge := h.api.MustDo(t, "POST", "/projects/"+h.api.A.ProjectID+"/judges", h.api.A.Key,
		map[string]any{"name": "helpful", "template": "Is {{output}} helpful?"}).Map(t)["id"].(string)
	h.api.MustDo(t, "POST", "/projects/"+h.api.A.ProjectID+"/judges/"+judge+"/evaluations", h.api.A.Key, []any{map[string]any{
		"span_id": fx.llm, "evaluation_result": true, "evaluation_reason": "answers the question", "confidence_score": 0.9, "model_used": "openai/gpt-4o-mini",
	}})
	h.goldenBoth("traces-feedback", "traces", "feedback", fx.trace)
	assert.Len(t, h.listedIDs("spans", "feedback", fx.llm), 2)
	assert.Len(t, h.listedIDs("sessions", "feedback", fx.session, "--where", "evaluation_result=true"), 1)
	passed := h.ok("sessions", "feedback", fx.session, "--where", "verdict=pass", "--select", "by,why")
	assert.Equal(t, "BY  WHY\nhelpful  answers the question\n", scrub(passed), "text output's own fields")
	assert.Empty(t, h.listedIDs("spans", "feedback", fx.tool))

	failed := h.ok("spans", "get", fx.failed)
	assert.Contains(t, failed, "Error stack:\n  send.go:12\n  main.go:40\n")
	assert.Regexp(t, `Attachments: +1\n`, failed)

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"traces of a session", []string{"traces", "list", "--session-id", fx.session, "--sort-by", "started_at"}, []string{fx.second, fx.trace}},
		{"traces with an error", []string{"traces", "list", "--has-error"}, []string{fx.trace}},
		{"traces without an error", []string{"traces", "list", "--has-error=false", "--sort-by", "name"}, []string{fx.third, fx.second}},
		{"traces by tag", []string{"traces", "list", "--tag", "env=production"}, []string{fx.trace}},
		{"traces by status", []string{"traces", "list", "--status", "error"}, []string{fx.trace}},
		{"traces by duration", []string{"traces", "list", "--duration-min", "2000"}, []string{fx.trace}},
		{"traces by cost", []string{"traces", "list", "--cost-min", "0.000001"}, []string{fx.trace}},
		{"traces by name", []string{"traces", "list", "--name", "nightly-job", "--name", "follow-up", "--sort-by", "name", "--sort-order", "asc"}, []string{fx.second, fx.third}},
		{"traces paged", []string{"traces", "list", "--sort-by", "started_at", "--limit", "1", "--offset", "1"}, []string{fx.second}},
		{"traces stored in the last hour", []string{"traces", "list", "--created-after", "1h", "--sort-by", "name"}, []string{fx.third, fx.trace, fx.second}},
		{"traces stored over an hour ago", []string{"traces", "list", "--created-before", "1h"}, []string{}},
		{"spans of a kind", []string{"spans", "list", "--trace-id", fx.trace, "--kind", "llm"}, []string{fx.llm}},
		{"root spans", []string{"spans", "list", "--trace-id", fx.trace, "--parent-span-id", "null"}, []string{fx.root}},
		{"children", []string{"spans", "list", "--trace-id", fx.trace, "--parent-span-id", fx.root, "--sort-by", "started_at"}, []string{fx.failed, fx.llm}},
		{"spans by error code", []string{"spans", "list", "--trace-id", fx.trace, "--error-code", "SMTP_DOWN"}, []string{fx.failed}},
		{"spans by name", []string{"spans", "list", "--trace-id", fx.trace, "--name", "chat", "--name", "search-docs", "--sort-by", "name"}, []string{fx.tool, fx.llm}},
		{"spans of a session", []string{"spans", "list", "--session-id", fx.session, "--where", "trace_id==" + fx.second}, []string{"0195a0b0-0000-7000-8000-0000000000d1"}},
		{"spans by tag", []string{"spans", "list", "--trace-id", fx.trace, "--tag", "env=production"}, []string{fx.root}},
		{"spans project-wide", []string{"spans", "list", "--kind", "http"}, []string{fx.tool}},
		{"the llm spans of a trace's tree", []string{"traces", "spans", fx.trace, "--kind", "llm"}, []string{fx.llm}},
		{"sessions by name", []string{"sessions", "list", "--name", "checkout"}, []string{fx.session}},
		{"sessions by another name", []string{"sessions", "list", "--name", "nothing"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := *h
			h.t = t
			assert.Equal(t, tt.want, h.listedIDs(tt.args...))
		})
	}

	var s api.Span
	h.okJSON(&s, "spans", "get", fx.llm)
	require.NotNil(t, s.Cost)
	assert.Positive(t, *s.Cost)
	require.NotNil(t, s.DurationMS)
	assert.InDelta(t, 1000, *s.DurationMS, 0.001)
}

// TestTracingErrors: usage errors, and traces, spans and sessions that are not the key's
// project's, exit 2; an id of project B reads as not found from project A.
func TestTracingErrors(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	fx := newTraceFixture(t, h)
	otherTrace, otherSpan, otherSession := uuid.NewString(), uuid.NewString(), uuid.NewString()
	h.api.MustDo(t, "POST", "/spans", h.api.B.Key, []any{map[string]any{
		"id": otherSpan, "trace_id": otherTrace, "session_id": otherSession, "name": "theirs", "started_at": fixtureStart.Format(time.RFC3339),
		"attributes": map[string]any{"attachments": []any{map[string]any{"type": "text", "base64": base64.StdEncoding.EncodeToString([]byte("secret"))}}},
	}})
	unknown := uuid.NewString()
	tests := []usageError{
		{"traces get without an id", []string{"traces", "get"}, errs.CodeInvalid, "accepts 1 arg(s)"},
		{"spans get with two ids", []string{"spans", "get", fx.llm, fx.root}, errs.CodeInvalid, "accepts 1 arg(s)"},
		{"traces spans without an id", []string{"traces", "spans"}, errs.CodeInvalid, "accepts 1 arg(s)"},
		{"bad where", []string{"spans", "list", "--trace-id", fx.trace, "--where", "kind"}, errs.CodeInvalid, "--where"},
		{"bad sort key", []string{"traces", "list", "--sort-by", "kind"}, errs.CodeInvalid, "--sort-by must be one of"},
		{"bad sort order", []string{"sessions", "list", "--sort-order", "up"}, errs.CodeInvalid, "--sort-order"},
		{"tag without a value", []string{"traces", "list", "--tag", "env"}, errs.CodeInvalid, "want key=value"},
		{"tag named like a filter", []string{"spans", "list", "--tag", "span_kind=llm"}, errs.CodeInvalid, "filter of its own"},
		{"negative relative time", []string{"traces", "list", "--created-after=-1h"}, errs.CodeInvalid, "must not be negative"},
		{"bad time", []string{"traces", "list", "--created-after", "yesterday"}, errs.CodeInvalid, "created_after"},
		{"bad number", []string{"spans", "list", "--cost-min", "cheap"}, errs.CodeInvalid, "--cost-min"},
		{"limit over the server's", []string{"traces", "list", "--limit", "501"}, errs.CodeInvalid, "limit"},
		{"not a uuid", []string{"spans", "get", "not-a-uuid"}, errs.CodeInvalid, "UUID"},
		{"unknown trace", []string{"traces", "get", unknown}, errs.CodeNotFound, "trace " + unknown + " not found"},
		{"unknown trace's spans", []string{"traces", "spans", unknown}, errs.CodeNotFound, "not found"},
		{"unknown span", []string{"spans", "get", unknown}, errs.CodeNotFound, "span " + unknown + " not found"},
		{"unknown span's attachments", []string{"spans", "attachments", unknown}, errs.CodeNotFound, "not found"},
		{"unknown session", []string{"sessions", "get", unknown}, errs.CodeNotFound, "session " + unknown + " not found"},
		{"another project's trace", []string{"traces", "get", otherTrace}, errs.CodeNotFound, "not found"},
		{"another project's trace's spans", []string{"traces", "spans", otherTrace}, errs.CodeNotFound, "not found"},
		{"another project's span", []string{"spans", "get", otherSpan}, errs.CodeNotFound, "not found"},
		{"another project's attachments", []string{"spans", "attachments", otherSpan}, errs.CodeNotFound, "not found"},
		{"another project's session", []string{"sessions", "get", otherSession}, errs.CodeNotFound, "not found"},
	}
	h.refuses(tests)

	// Project B's records are not among project A's lists either.
	var rows []api.Span
	h.okJSON(&rows, "spans", "list", "--name", "theirs")
	assert.Empty(t, rows)
	h.okJSON(&rows, "spans", "list", "--session-id", otherSession)
	assert.Empty(t, rows)
}

// listedIDs runs a list command in json mode and returns the ids of the records it printed.
func (h *clientHarness) listedIDs(args ...string) []string {
	h.t.Helper()
	var rows []struct {
		ID string `json:"id"`
	}
	h.okJSON(&rows, args...)
	out := []string{}
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}
