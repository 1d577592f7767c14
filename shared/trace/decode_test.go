package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/jsonscan"
)

// testNow is the server clock of the tests: a few minutes after the fixtures' spans.
var testNow = time.Date(2024, 11, 21, 18, 10, 0, 0, time.UTC)

const testProject = "proj-1"

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// fixtureAttributes returns the compact attributes of the i-th span of a fixture, as
// encoding/json compacts them.
func fixtureAttributes(t *testing.T, body []byte, i int) string {
	t.Helper()
	var spans []struct {
		Attributes json.RawMessage `json:"attributes"`
	}
	require.NoError(t, json.Unmarshal(body, &spans))
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, spans[i].Attributes))
	return buf.String()
}

func TestDecodeBatchPythonSDK(t *testing.T) {
	body, err := os.ReadFile("testdata/python_batch.json")
	require.NoError(t, err)

	spans, rejected, err := DecodeBatch(body, testProject, testNow)
	require.NoError(t, err)
	require.Empty(t, rejected)
	require.Len(t, spans, 3)

	const (
		traceID = "6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f"
		rootID  = "0b7d9a3c-1e2f-4a5b-8c6d-7e8f9a0b1c2d"
		// uuid.uuid5(uuid.NAMESPACE_DNS, "user-42"), as the Python SDK sent it
		sessionID = "2991bdff-0fee-52e0-90c1-c76c57de7a2f"
	)
	messages := `[{"role": "system", "content": "You are a support assistant for Acme. Address the customer as Ada."}, {"role": "user", "content": "My order #1234 has not arrived. Can you check?"}]`
	answer := "I checked order #1234: it shipped yesterday and arrives tomorrow."

	llm := spans[0] // a child, before its parent
	assert.Equal(t, "c3a1f9e2-7b6d-4e5f-a1b2-c3d4e5f6a7b8", llm.ID)
	assert.Equal(t, traceID, llm.TraceID)
	assert.Equal(t, new(rootID), llm.ParentSpanID)
	assert.Equal(t, testProject, llm.ProjectID)
	assert.Equal(t, "openai.chat.completions.create", llm.Name)
	assert.Equal(t, KindLLM, llm.Kind)
	assert.Equal(t, new(StatusOK), llm.Status)
	assert.Equal(t, utc("2024-11-21T18:05:45.123456Z"), llm.StartedAt)
	assert.Equal(t, new(utc("2024-11-21T18:05:46.987654Z")), llm.EndedAt)
	assert.Equal(t, new(1864.1979694366455), llm.DurationMS, "the client's duration is kept")
	assert.Nil(t, llm.Cost)
	assert.Nil(t, llm.CostSource)
	assert.Equal(t, new(sessionID), llm.SessionID)
	assert.Equal(t, new("user-42"), llm.SessionName)
	assert.Nil(t, llm.SessionTags)
	assert.Equal(t, new(messages), llm.InputData)
	assert.Equal(t, new(answer), llm.OutputData)
	assert.Equal(t, fixtureAttributes(t, body, 0), string(llm.Attributes))
	assert.Equal(t, &LLMUsage{
		Provider: "openai", Model: "gpt-4o-mini",
		InputTokens: 1250, OutputTokens: 87, CachedInputTokens: 1024,
	}, llm.LLM)
	assert.Equal(t, &PromptLink{
		Task:            "support-bot",
		PromptSlug:      "support-bot",
		PromptVersion:   3,
		PromptVersionID: "9f3e2d1c-0b4a-4c5d-8e6f-7a8b9c0d1e2f",
		ContentHash:     "9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab",
	}, llm.Link)
	assert.Equal(t, map[string]string{"integration": "openai"}, llm.Tags.Map())
	assert.Nil(t, llm.TraceTags)
	assert.Nil(t, llm.ErrorCode)
	assert.Nil(t, llm.ErrorMessage)
	assert.Nil(t, llm.ErrorStack)
	assert.Nil(t, llm.CodeFilepath)
	assert.Nil(t, llm.CodeLineno)
	assert.Empty(t, llm.Attachments)
	assert.Equal(t, testNow, llm.CreatedAt)
	assert.Equal(t, testNow, llm.UpdatedAt)

	tool := spans[1]
	assert.Equal(t, "d4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70", tool.ID)
	assert.Equal(t, new(rootID), tool.ParentSpanID)
	assert.Equal(t, "lookup_order", tool.Name)
	assert.Equal(t, KindTool, tool.Kind)
	assert.Equal(t, new(StatusError), tool.Status)
	assert.Equal(t, utc("2024-11-21T18:05:44.5Z"), tool.StartedAt)
	assert.Equal(t, new(utc("2024-11-21T18:05:44.75Z")), tool.EndedAt)
	assert.Equal(t, new(250.0), tool.DurationMS)
	assert.Equal(t, new(`{"order_id": 1234}`), tool.InputData)
	assert.Nil(t, tool.OutputData)
	assert.Equal(t, "{}", string(tool.Attributes))
	assert.Nil(t, tool.LLM)
	assert.Nil(t, tool.Link)
	assert.Equal(t, new("TimeoutError"), tool.ErrorCode)
	assert.Equal(t, new("orders service did not answer in 250 ms"), tool.ErrorMessage)
	assert.Equal(t, new("Traceback (most recent call last):\n  File \"/app/tools.py\", line 18, in lookup_order\nTimeoutError: orders service did not answer in 250 ms"), tool.ErrorStack)
	assert.Equal(t, new("/app/tools.py"), tool.CodeFilepath)
	assert.Equal(t, new(12), tool.CodeLineno)
	assert.Equal(t, map[string]string{"tool": "lookup_order", "retries": "2", "cached": "false"}, tool.Tags.Map())
	assert.True(t, tool.HasError())

	root := spans[2]
	assert.Equal(t, rootID, root.ID)
	assert.Nil(t, root.ParentSpanID)
	assert.Equal(t, "answer_question", root.Name)
	assert.Equal(t, KindGeneric, root.Kind)
	assert.Equal(t, utc("2024-11-21T18:05:44Z"), root.StartedAt)
	assert.Equal(t, new(utc("2024-11-21T18:05:47.25Z")), root.EndedAt)
	assert.Equal(t, new(3250.0), root.DurationMS)
	assert.Equal(t, `{"user_id":42,"channel":"web"}`, string(root.Attributes))
	assert.Nil(t, root.LLM)
	assert.Nil(t, root.Link)
	assert.Equal(t, new(`{"question": "My order #1234 has not arrived. Can you check?"}`), root.InputData)
	assert.Nil(t, root.ErrorStack, `error_stack "" is absent`)
	assert.Equal(t, new("/app/bot.py"), root.CodeFilepath)
	assert.Equal(t, new(42), root.CodeLineno)
	assert.Equal(t, map[string]string{"customer_tier": "gold"}, root.Tags.Map())
	assert.Equal(t, map[string]string{"release": "2024.11.3"}, root.TraceTags.Map())
	assert.Equal(t, new(sessionID), root.SessionID)
	assert.Equal(t, map[string]string{"plan": "pro", "region": "eu"}, root.SessionTags.Map(), "session_tags merged with session.tags")
	assert.False(t, root.HasError())
}

func TestDecodeBatchTypeScriptSDK(t *testing.T) {
	body, err := os.ReadFile("testdata/typescript_batch.json")
	require.NoError(t, err)

	spans, rejected, err := DecodeBatch(body, testProject, testNow)
	require.NoError(t, err)
	require.Empty(t, rejected)
	require.Len(t, spans, 3)

	const (
		traceID = "1e6a0c4b-5f2d-4b8e-9a7c-3d2e1f0a9b8c" // sent uppercase
		rootID  = "7a9b8c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
		// Python: uuid.uuid5(uuid.NAMESPACE_DNS, "conv-7f3a")
		sessionID = "548d83a5-9187-5f12-a7f7-6e7dcf932ec8"
	)
	question := "Which plan includes SSO?"
	answer := "SSO is part of the Business plan."

	llm := spans[0]
	assert.Equal(t, "2b3c4d5e-6f70-4812-9a3b-4c5d6e7f8091", llm.ID)
	assert.Equal(t, traceID, llm.TraceID)
	assert.Equal(t, new(rootID), llm.ParentSpanID)
	assert.Equal(t, "anthropic.messages.create", llm.Name)
	assert.Equal(t, KindLLM, llm.Kind)
	assert.Equal(t, new(StatusOK), llm.Status)
	assert.Equal(t, utc("2024-11-21T18:05:45.120Z"), llm.StartedAt)
	assert.Equal(t, new(utc("2024-11-21T18:05:46.870Z")), llm.EndedAt)
	assert.Equal(t, new(1750.0), llm.DurationMS)
	assert.Equal(t, new(sessionID), llm.SessionID)
	assert.Nil(t, llm.SessionName, "no name is made up from the session id")
	assert.Equal(t, new(`[{"role":"user","content":"Which plan includes SSO?"}]`), llm.InputData)
	assert.Equal(t, new(answer), llm.OutputData)
	assert.Equal(t, fixtureAttributes(t, body, 0), string(llm.Attributes))
	assert.Equal(t, &LLMUsage{
		Provider: "anthropic", Model: "claude-3-5-sonnet-20241022",
		InputTokens: 20 + 2000 + 100, OutputTokens: 310,
		CachedInputTokens: 2000, CacheWriteTokens: 100,
	}, llm.LLM, "Anthropic input_tokens exclude cache reads and writes")
	assert.Nil(t, llm.Link)
	assert.Nil(t, llm.ErrorStack, `error_stack "" is absent`)
	assert.Nil(t, llm.ErrorCode)
	assert.Nil(t, llm.CodeLineno)
	assert.Equal(t, map[string]string{"integration": "vercel-ai"}, llm.Tags.Map())
	assert.Nil(t, llm.TraceTags, "{} is no tags")
	assert.Nil(t, llm.SessionTags)

	retrieve := spans[1]
	assert.Equal(t, "3c4d5e6f-7081-4923-8b4c-5d6e7f809102", retrieve.ID)
	assert.Equal(t, KindVectorStore, retrieve.Kind)
	assert.Equal(t, utc("2024-11-21T18:05:45.010Z"), retrieve.StartedAt)
	assert.Equal(t, new(105.0), retrieve.DurationMS)
	assert.Equal(t, new(question), retrieve.InputData)
	assert.Equal(t, new(`["pricing.md","sso.md"]`), retrieve.OutputData)
	assert.Equal(t, `{"kind":"vector_store","index":"docs","top_k":5}`, string(retrieve.Attributes))
	assert.Nil(t, retrieve.LLM)
	assert.Equal(t, map[string]string{"index": "docs", "hits": "2"}, retrieve.Tags.Map())
	assert.Equal(t, new(sessionID), retrieve.SessionID)

	root := spans[2]
	assert.Equal(t, rootID, root.ID)
	assert.Nil(t, root.ParentSpanID)
	assert.Equal(t, "chat-turn", root.Name)
	assert.Equal(t, KindGeneric, root.Kind)
	assert.Equal(t, utc("2024-11-21T18:05:45Z"), root.StartedAt)
	assert.Equal(t, new(utc("2024-11-21T18:05:46.9Z")), root.EndedAt)
	assert.Equal(t, new(sessionID), root.SessionID)
	assert.Equal(t, new("Checkout assistant"), root.SessionName, "top-level session_name (TypeScript)")
	assert.Equal(t, "{}", string(root.Attributes))
	assert.Equal(t, map[string]string{"route": "/api/chat"}, root.Tags.Map())
	assert.Equal(t, map[string]string{"env": "staging"}, root.TraceTags.Map())
	assert.Equal(t, map[string]string{"customer": "acme"}, root.SessionTags.Map())
}

// absent removes a key from the base span in the tables below.
type absent struct{}

const (
	baseID    = "11111111-2222-4333-8444-555555555555"
	baseTrace = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
)

// spanJSON is a minimal valid span with changes: a value of absent deletes the key, a
// json.RawMessage is written as is.
func spanJSON(changes map[string]any) string {
	m := map[string]any{
		"id":         baseID,
		"trace_id":   baseTrace,
		"name":       "op",
		"started_at": 1732212345.5,
	}
	for k, v := range changes {
		if _, ok := v.(absent); ok {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// decodeOne decodes one span between two valid ones and returns it or its rejection.
func decodeOne(t *testing.T, span string) (Span, *Rejected) {
	t.Helper()
	other := spanJSON(map[string]any{"id": absent{}})
	body := "[" + other + "," + span + "," + other + "]"
	spans, rejected, err := DecodeBatch([]byte(body), testProject, testNow)
	require.NoError(t, err)
	if len(rejected) > 0 {
		require.Len(t, rejected, 1)
		require.Len(t, spans, 2, "the rest of the batch survives")
		require.Equal(t, 1, rejected[0].Index)
		return Span{}, &rejected[0]
	}
	require.Len(t, spans, 3)
	return spans[1], nil
}

func TestDecodeBatchRejectsSpan(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	future := testNow.Add(MaxFutureSkew + time.Microsecond).Format(time.RFC3339Nano)
	manyTags := func(n int, prefix string) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("%s%d", prefix, i)] = "v"
		}
		return m
	}
	tests := []struct {
		name    string
		changes map[string]any
		span    string // instead of changes
		reason  string
	}{
		{name: "not an object", span: `42`, reason: "span must be a JSON object"},
		{name: "null", span: `null`, reason: "span must be a JSON object"},
		{name: "array", span: `[]`, reason: "span must be a JSON object"},
		{name: "id not a UUID", changes: map[string]any{"id": "span-1"}, reason: `id: "span-1" is not a UUID`},
		{name: "id a number", changes: map[string]any{"id": 7}, reason: "id: must be a string, got a number"},
		{name: "id with a bad hyphen", changes: map[string]any{"id": "11111111-2222-4333-8444_555555555555"}, reason: "id: "},
		{name: "trace_id missing", changes: map[string]any{"trace_id": absent{}}, reason: "trace_id: required"},
		{name: "trace_id null", changes: map[string]any{"trace_id": nil}, reason: "trace_id: required"},
		{name: "trace_id empty", changes: map[string]any{"trace_id": ""}, reason: "trace_id: required"},
		{name: "trace_id not a UUID", changes: map[string]any{"trace_id": "abc"}, reason: `trace_id: "abc" is not a UUID`},
		{name: "trace_id an object", changes: map[string]any{"trace_id": map[string]any{}}, reason: "trace_id: must be a string, got an object"},
		{name: "parent_span_id not a UUID", changes: map[string]any{"parent_span_id": "root"}, reason: `parent_span_id: "root" is not a UUID`},
		{name: "name missing", changes: map[string]any{"name": absent{}}, reason: "name: required"},
		{name: "name empty", changes: map[string]any{"name": ""}, reason: "name: required"},
		{name: "name a number", changes: map[string]any{"name": 1}, reason: "name: must be a string, got a number"},
		{name: "name too long", changes: map[string]any{"name": strings.Repeat("n", MaxNameLen+1)}, reason: "name: longer than 1024 bytes"},
		{name: "started_at missing", changes: map[string]any{"started_at": absent{}}, reason: "started_at: required"},
		{name: "started_at null", changes: map[string]any{"started_at": nil}, reason: "started_at: required"},
		{name: "started_at words", changes: map[string]any{"started_at": "yesterday"}, reason: `started_at: "yesterday" is not an ISO 8601 time`},
		{name: "started_at a boolean", changes: map[string]any{"started_at": true}, reason: "started_at: must be an ISO 8601 string or a Unix epoch number, got a boolean"},
		{name: "started_at before 2000", changes: map[string]any{"started_at": 946684799}, reason: "started_at: 1999-12-31T23:59:59Z is before 2000-01-01"},
		{name: "started_at in the future", changes: map[string]any{"started_at": future}, reason: "is more than a day in the future"},
		{name: "started_at negative", changes: map[string]any{"started_at": -5}, reason: "started_at: epoch -5 is out of range"},
		{name: "started_at huge", changes: map[string]any{"started_at": raw("1e400")}, reason: "out of range"},
		{name: "ended_at before started_at", changes: map[string]any{"ended_at": 1732212345.4}, reason: "ended_at: 2024-11-21T18:05:45.4Z is before started_at 2024-11-21T18:05:45.5Z"},
		{name: "ended_at invalid", changes: map[string]any{"ended_at": "2024-02-30T00:00:00Z"}, reason: "ended_at: "},
		{name: "duration_ms negative", changes: map[string]any{"duration_ms": -1}, reason: "duration_ms: must not be negative"},
		{name: "duration_ms a string", changes: map[string]any{"duration_ms": "12"}, reason: "duration_ms: must be a number, got a string"},
		{name: "duration_ms too large", changes: map[string]any{"duration_ms": raw("1e999")}, reason: "duration_ms: 1e999 is out of range"},
		{name: "kind with a space", changes: map[string]any{"kind": "LLM call"}, reason: `kind: "LLM call" has characters outside [a-z0-9_-]`},
		{name: "kind too long", changes: map[string]any{"kind": strings.Repeat("k", 65)}, reason: "kind: longer than 64 characters"},
		{name: "kind a number", changes: map[string]any{"kind": 3}, reason: "kind: must be a string"},
		{name: "status unknown", changes: map[string]any{"status": "done"}, reason: `status: "done" is not one of unset, ok, error`},
		{name: "status a boolean", changes: map[string]any{"status": false}, reason: "status: must be a string, got a boolean"},
		{name: "cost negative", changes: map[string]any{"cost": -0.01}, reason: "cost: must not be negative"},
		{name: "cost a string", changes: map[string]any{"cost": "0.01"}, reason: "cost: must be a number, got a string"},
		{name: "session_id a number", changes: map[string]any{"session_id": 5}, reason: "session_id: must be a string, got a number"},
		{name: "session_id too long", changes: map[string]any{"session_id": strings.Repeat("s", MaxIDLen+1)}, reason: "session id: not a UUID and longer than 128 bytes"},
		{name: "session a string", changes: map[string]any{"session": "s1"}, reason: "session: must be an object, got a string"},
		{name: "session.id a number", changes: map[string]any{"session": map[string]any{"id": 1}}, reason: "session.id: must be a string"},
		{name: "session.name too long", changes: map[string]any{"session": map[string]any{"id": "s", "name": strings.Repeat("x", MaxNameLen+1)}}, reason: "session.name: longer than"},
		{name: "session_name an array", changes: map[string]any{"session_name": []int{}}, reason: "session_name: must be a string, got an array"},
		{name: "input_data too large", changes: map[string]any{"input_data": strings.Repeat("i", MaxDataBytes+1)}, reason: "input_data: larger than 1048576 bytes"},
		{name: "output_data object too large", changes: map[string]any{"output_data": map[string]string{"x": strings.Repeat("o", MaxDataBytes)}}, reason: "output_data: larger than"},
		{name: "attributes an array", changes: map[string]any{"attributes": []int{1}}, reason: "attributes: must be an object, got an array"},
		{name: "attributes a string", changes: map[string]any{"attributes": "{}"}, reason: "attributes: must be an object, got a string"},
		{name: "attributes too large", changes: map[string]any{"attributes": map[string]string{"x": strings.Repeat("a", MaxAttributeBytes)}}, reason: "attributes: larger than 262144 bytes"},
		{name: "tags an array", changes: map[string]any{"tags": []string{"a"}}, reason: "tags: must be an object, got an array"},
		{name: "tags empty key", changes: map[string]any{"tags": map[string]string{"": "v"}}, reason: `tags: key "" must be 1 to 128 bytes`},
		{name: "tags key too long", changes: map[string]any{"tags": map[string]string{strings.Repeat("k", MaxTagKeyLen+1): "v"}}, reason: "must be 1 to 128 bytes"},
		{name: "tags value too long", changes: map[string]any{"tags": map[string]string{"k": strings.Repeat("v", MaxTagValueLen+1)}}, reason: `tags: value of "k" longer than 1024 bytes`},
		{name: "tags nested value too long", changes: map[string]any{"tags": map[string]any{"k": []string{strings.Repeat("v", MaxTagValueLen)}}}, reason: `tags: value of "k" longer than`},
		{name: "tags too many keys", changes: map[string]any{"tags": manyTags(MaxTagKeys+1, "k")}, reason: "tags: more than 64 keys"},
		{name: "trace_tags a string", changes: map[string]any{"trace_tags": "x"}, reason: "trace_tags: must be an object, got a string"},
		{name: "session_tags too many keys", changes: map[string]any{"session_tags": manyTags(MaxTagKeys+1, "k")}, reason: "session_tags: more than 64 keys"},
		{name: "session tags merged too many", changes: map[string]any{
			"session_tags": manyTags(40, "a"),
			"session":      map[string]any{"id": "s", "tags": manyTags(40, "b")},
		}, reason: "session_tags: more than 64 keys with session.tags"},
		{name: "error_code a number", changes: map[string]any{"error_code": 500}, reason: "error_code: must be a string, got a number"},
		{name: "error_code too long", changes: map[string]any{"error_code": strings.Repeat("e", MaxNameLen+1)}, reason: "error_code: longer than 1024 bytes"},
		{name: "error_message too long", changes: map[string]any{"error_message": strings.Repeat("m", MaxErrorBytes+1)}, reason: "error_message: longer than 65536 bytes"},
		{name: "error_stack too long", changes: map[string]any{"error_stack": strings.Repeat("s", MaxErrorBytes+1)}, reason: "error_stack: longer than 65536 bytes"},
		{name: "code_filepath too long", changes: map[string]any{"code_filepath": strings.Repeat("f", MaxErrorBytes+1)}, reason: "code_filepath: longer than"},
		{name: "code_lineno fractional", changes: map[string]any{"code_lineno": 1.5}, reason: "code_lineno: must be a non-negative integer, got 1.5"},
		{name: "code_lineno negative", changes: map[string]any{"code_lineno": -1}, reason: "code_lineno: must be a non-negative integer"},
		{name: "code_lineno words", changes: map[string]any{"code_lineno": "twelve"}, reason: "code_lineno: must be a non-negative integer"},
		{name: "code_lineno a boolean", changes: map[string]any{"code_lineno": true}, reason: "code_lineno: must be a non-negative integer"},
		{name: "ab_choices an object", changes: map[string]any{"ab_choices": map[string]any{}}, reason: "ab_choices: must be an array, got an object"},
		{name: "ab_choices too many", changes: map[string]any{"ab_choices": manyChoices(MaxABChoices + 1)}, reason: "ab_choices: more than 8 choices"},
		{name: "ab_choices element a string", changes: map[string]any{"ab_choices": []any{"x"}}, reason: "ab_choices[0]: must be an object, got a string"},
		{name: "ab_choices without choice_name", changes: map[string]any{"ab_choices": []any{map[string]any{"x": 1}}}, reason: "ab_choices[0].choice_name: required"},
		{name: "ab_choices without variant_key", changes: map[string]any{"ab_choices": []any{map[string]any{"choice_name": "t"}}}, reason: "ab_choices[0].variant_key: required"},
		{name: "ab_choices variant_key a number", changes: map[string]any{"ab_choices": []any{map[string]any{"choice_name": "t", "variant_key": 1}}}, reason: "ab_choices[0].variant_key: must be a string, got a number"},
		{name: "ab_choices name too long", changes: map[string]any{"ab_choices": []any{map[string]any{"choice_name": strings.Repeat("n", MaxChoiceNameLen+1), "variant_key": "a"}}}, reason: "ab_choices[0].choice_name: longer than 128 bytes"},
		{name: "ab_choices name with a control character", changes: map[string]any{"ab_choices": []any{map[string]any{"choice_name": "a\nb", "variant_key": "a"}}}, reason: "ab_choices[0].choice_name: must be UTF-8 without control characters"},
		{name: "ab_choices id not a UUID", changes: map[string]any{"ab_choices": []any{map[string]any{"ab_choice_id": "c-1", "choice_name": "t", "variant_key": "a"}}}, reason: `ab_choices[0].ab_choice_id: "c-1" is not a UUID`},
		{name: "ab_choices value too long", changes: map[string]any{"ab_choices": []any{map[string]any{"choice_name": "t", "variant_key": "a", "variant_value": strings.Repeat("v", MaxVariantValueLen+1)}}}, reason: "ab_choices[0].variant_value: longer than 4096 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := tt.span
			if span == "" {
				span = spanJSON(tt.changes)
			}
			_, rej := decodeOne(t, span)
			require.NotNil(t, rej, "the span must be rejected")
			assert.Contains(t, rej.Error, tt.reason)
		})
	}
}

func TestDecodeBatchRejectedID(t *testing.T) {
	_, rej := decodeOne(t, spanJSON(map[string]any{"id": strings.ToUpper(baseID), "name": ""}))
	require.NotNil(t, rej)
	assert.Equal(t, baseID, rej.ID, "the normalised id is echoed")

	_, rej = decodeOne(t, spanJSON(map[string]any{"id": "nope"}))
	require.NotNil(t, rej)
	assert.Empty(t, rej.ID, "an invalid id is not echoed")
}

func TestDecodeBatchAcceptsSpan(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	const derived = "548d83a5-9187-5f12-a7f7-6e7dcf932ec8" // uuid5(NAMESPACE_DNS, "conv-7f3a")
	tests := []struct {
		name    string
		changes map[string]any
		span    string // instead of changes
		check   func(t *testing.T, s Span)
	}{
		{name: "id absent is generated", changes: map[string]any{"id": absent{}}, check: func(t *testing.T, s Span) {
			u, err := uuid.Parse(s.ID)
			require.NoError(t, err)
			assert.Equal(t, uuid.Version(4), u.Version())
			assert.Equal(t, u.String(), s.ID)
		}},
		{name: "id null is generated", changes: map[string]any{"id": nil}, check: func(t *testing.T, s Span) {
			assert.NotEqual(t, baseID, s.ID)
			assert.Len(t, s.ID, 36)
		}},
		{name: "id empty is generated", changes: map[string]any{"id": ""}, check: func(t *testing.T, s Span) { assert.Len(t, s.ID, 36) }},
		{name: "ids are case-insensitive", changes: map[string]any{
			"id": strings.ToUpper(baseID), "trace_id": strings.ToUpper(baseTrace), "parent_span_id": "ABCDEF01-2345-4789-8BCD-EF0123456789",
		}, check: func(t *testing.T, s Span) {
			assert.Equal(t, baseID, s.ID)
			assert.Equal(t, baseTrace, s.TraceID)
			assert.Equal(t, new("abcdef01-2345-4789-8bcd-ef0123456789"), s.ParentSpanID)
		}},
		{name: "ids without hyphens", changes: map[string]any{"id": "11111111222243338444555555555555", "trace_id": "AAAAAAAABBBB4CCC8DDDEEEEEEEEEEEE"}, check: func(t *testing.T, s Span) {
			assert.Equal(t, baseID, s.ID)
			assert.Equal(t, baseTrace, s.TraceID)
		}},
		{name: "id in braces", changes: map[string]any{"id": "{" + baseID + "}"}, check: func(t *testing.T, s Span) { assert.Equal(t, baseID, s.ID) }},
		{name: "parent null", changes: map[string]any{"parent_span_id": nil}, check: func(t *testing.T, s Span) { assert.Nil(t, s.ParentSpanID) }},
		{name: "parent empty", changes: map[string]any{"parent_span_id": ""}, check: func(t *testing.T, s Span) { assert.Nil(t, s.ParentSpanID) }},
		{name: "name of MaxNameLen bytes", changes: map[string]any{"name": strings.Repeat("n", MaxNameLen)}, check: func(t *testing.T, s Span) { assert.Len(t, s.Name, MaxNameLen) }},
		{name: "name with escapes and unicode", changes: map[string]any{"name": "r\u00e9sum\u00e9 \"q\"\n\U0001F600"}, check: func(t *testing.T, s Span) {
			assert.Equal(t, "r\u00e9sum\u00e9 \"q\"\n\U0001F600", s.Name)
		}},
		{name: "name with a surrogate pair escape", span: `{"trace_id":"` + baseTrace + `","name":"\ud83d\ude00 \u00e9","started_at":1732212345}`, check: func(t *testing.T, s Span) {
			assert.Equal(t, "\U0001F600 \u00e9", s.Name)
		}},
		{name: "kind default", changes: map[string]any{"kind": absent{}}, check: func(t *testing.T, s Span) { assert.Equal(t, KindGeneric, s.Kind) }},
		{name: "kind null", changes: map[string]any{"kind": nil}, check: func(t *testing.T, s Span) { assert.Equal(t, KindGeneric, s.Kind) }},
		{name: "kind empty", changes: map[string]any{"kind": ""}, check: func(t *testing.T, s Span) { assert.Equal(t, KindGeneric, s.Kind) }},
		{name: "kind lowercased", changes: map[string]any{"kind": "LLM"}, check: func(t *testing.T, s Span) { assert.Equal(t, KindLLM, s.Kind) }},
		{name: "kind custom", changes: map[string]any{"kind": "Agent-Step_2"}, check: func(t *testing.T, s Span) { assert.Equal(t, "agent-step_2", s.Kind) }},
		{name: "status absent", check: func(t *testing.T, s Span) { assert.Nil(t, s.Status) }},
		{name: "status null", changes: map[string]any{"status": nil}, check: func(t *testing.T, s Span) { assert.Nil(t, s.Status) }},
		{name: "status empty", changes: map[string]any{"status": ""}, check: func(t *testing.T, s Span) { assert.Nil(t, s.Status) }},
		{name: "status any case", changes: map[string]any{"status": "Error"}, check: func(t *testing.T, s Span) { assert.Equal(t, new(StatusError), s.Status) }},
		{name: "status unset", changes: map[string]any{"status": "UNSET"}, check: func(t *testing.T, s Span) { assert.Equal(t, new(StatusUnset), s.Status) }},
		{name: "duration computed", changes: map[string]any{"ended_at": 1732212346.25}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(750.0), s.DurationMS)
		}},
		{name: "duration computed from ISO", changes: map[string]any{"started_at": "2024-11-21T18:05:45.000001Z", "ended_at": "2024-11-21T20:05:45.5+02:00"}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(499.999), s.DurationMS)
		}},
		{name: "duration without end", changes: map[string]any{"duration_ms": 12.5}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(12.5), s.DurationMS)
			assert.Nil(t, s.EndedAt)
		}},
		{name: "no duration without end", check: func(t *testing.T, s Span) { assert.Nil(t, s.DurationMS) }},
		{name: "ended_at equal to started_at", changes: map[string]any{"ended_at": 1732212345.5}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(0.0), s.DurationMS)
		}},
		{name: "ended_at null", changes: map[string]any{"ended_at": nil}, check: func(t *testing.T, s Span) { assert.Nil(t, s.EndedAt) }},
		{name: "started_at at 2000-01-01", changes: map[string]any{"started_at": 946684800}, check: func(t *testing.T, s Span) {
			assert.Equal(t, MinSpanTime, s.StartedAt)
		}},
		{name: "started_at a day ahead", changes: map[string]any{"started_at": testNow.Add(MaxFutureSkew).Format(time.RFC3339)}, check: func(t *testing.T, s Span) {
			assert.Equal(t, testNow.Add(MaxFutureSkew), s.StartedAt)
		}},
		{name: "cost", changes: map[string]any{"cost": 0.0042}, check: func(t *testing.T, s Span) { assert.Equal(t, new(0.0042), s.Cost) }},
		{name: "cost zero", changes: map[string]any{"cost": 0}, check: func(t *testing.T, s Span) { assert.Equal(t, new(0.0), s.Cost) }},
		{name: "cost null", changes: map[string]any{"cost": nil}, check: func(t *testing.T, s Span) { assert.Nil(t, s.Cost) }},
		{name: "session_id UUID", changes: map[string]any{"session_id": "ABCDEF01-2345-4789-8BCD-EF0123456789"}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new("abcdef01-2345-4789-8bcd-ef0123456789"), s.SessionID)
			assert.Nil(t, s.SessionName)
		}},
		{name: "session_id not a UUID", changes: map[string]any{"session_id": "conv-7f3a"}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(derived), s.SessionID)
			assert.Nil(t, s.SessionName)
		}},
		{name: "session_id is hashed byte for byte", changes: map[string]any{"session_id": "CONV-7F3A"}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(uuid.NewSHA1(uuid.NameSpaceDNS, []byte("CONV-7F3A")).String()), s.SessionID)
		}},
		{name: "session object only", changes: map[string]any{"session": map[string]any{"id": "conv-7f3a", "name": "Chat", "tags": map[string]any{"a": "1"}}}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(derived), s.SessionID)
			assert.Equal(t, new("Chat"), s.SessionName)
			assert.Equal(t, map[string]string{"a": "1"}, s.SessionTags.Map())
		}},
		{name: "session_id wins over session.id", changes: map[string]any{"session_id": "conv-7f3a", "session": map[string]any{"id": "other", "name": "Chat"}}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(derived), s.SessionID)
			assert.Equal(t, new("Chat"), s.SessionName)
		}},
		{name: "session.name wins over session_name", changes: map[string]any{"session_id": "conv-7f3a", "session_name": "Top", "session": map[string]any{"name": "Inner"}}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new("Inner"), s.SessionName)
		}},
		{name: "session_name (TypeScript)", changes: map[string]any{"session_id": "conv-7f3a", "session_name": "Top"}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new("Top"), s.SessionName)
		}},
		{name: "session_tags win over session.tags", changes: map[string]any{
			"session_id": "conv-7f3a", "session_tags": map[string]any{"a": "top", "b": nil},
			"session": map[string]any{"tags": map[string]any{"a": "inner", "b": "inner", "c": 3}},
		}, check: func(t *testing.T, s Span) {
			assert.Equal(t, map[string]string{"a": "top", "b": "inner", "c": "3"}, s.SessionTags.Map())
		}},
		{name: "no session id drops name and tags", changes: map[string]any{"session_name": "Top", "session_tags": map[string]any{"a": "b"}, "session": map[string]any{"id": nil, "name": "x"}}, check: func(t *testing.T, s Span) {
			assert.Nil(t, s.SessionID)
			assert.Nil(t, s.SessionName)
			assert.Nil(t, s.SessionTags)
		}},
		{name: "session null", changes: map[string]any{"session": nil}, check: func(t *testing.T, s Span) { assert.Nil(t, s.SessionID) }},
		{name: "input_data object kept as compact JSON", span: `{"trace_id":"` + baseTrace + `","name":"op","started_at":1732212345,"input_data": {"b": [1, 2], "a": "x y"}}`, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(`{"b":[1,2],"a":"x y"}`), s.InputData, "key order and text kept")
		}},
		{name: "output_data array", changes: map[string]any{"output_data": []any{"a", 1}}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(`["a",1]`), s.OutputData)
		}},
		{name: "output_data number", changes: map[string]any{"output_data": raw("4.50")}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new("4.50"), s.OutputData)
		}},
		{name: "input_data empty string kept", changes: map[string]any{"input_data": ""}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new(""), s.InputData)
		}},
		{name: "input_data null", changes: map[string]any{"input_data": nil}, check: func(t *testing.T, s Span) { assert.Nil(t, s.InputData) }},
		{name: "input_data of MaxDataBytes", changes: map[string]any{"input_data": strings.Repeat("i", MaxDataBytes)}, check: func(t *testing.T, s Span) {
			assert.Len(t, *s.InputData, MaxDataBytes)
		}},
		{name: "attributes absent", check: func(t *testing.T, s Span) { assert.Equal(t, "{}", string(s.Attributes)) }},
		{name: "attributes null", changes: map[string]any{"attributes": nil}, check: func(t *testing.T, s Span) { assert.Equal(t, "{}", string(s.Attributes)) }},
		{name: "attributes compacted", span: "{\"trace_id\":\"" + baseTrace + "\",\"name\":\"op\",\"started_at\":1732212345,\"attributes\": {\n  \"a b\": [1, {\"c\" : \"d \\\" e\"}],\t\"n\": null\n}}", check: func(t *testing.T, s Span) {
			assert.Equal(t, `{"a b":[1,{"c":"d \" e"}],"n":null}`, string(s.Attributes))
		}},
		{name: "attributes with invalid UTF-8", span: "{\"trace_id\":\"" + baseTrace + "\",\"name\":\"op\",\"started_at\":1732212345,\"attributes\":{\"k\":\"a\xffb\"}}", check: func(t *testing.T, s Span) {
			assert.Equal(t, "{\"k\":\"a\uFFFDb\"}", string(s.Attributes))
		}},
		{name: "tags values", changes: map[string]any{"tags": map[string]any{
			"s": "x", "i": 2, "f": raw("1.50"), "t": true, "n": nil, "o": map[string]any{"a": []int{1}}, "e": "",
		}}, check: func(t *testing.T, s Span) {
			assert.Equal(t, map[string]string{"s": "x", "i": "2", "f": "1.50", "t": "true", "o": `{"a":[1]}`, "e": ""}, s.Tags.Map())
		}},
		{name: "tags absent is empty", check: func(t *testing.T, s Span) {
			assert.Empty(t, s.Tags)
			assert.Contains(t, string(s.AppendJSON(nil)), `"tags":{}`)
		}},
		{name: "tags at the limits", changes: map[string]any{"tags": map[string]string{strings.Repeat("k", MaxTagKeyLen): strings.Repeat("v", MaxTagValueLen)}}, check: func(t *testing.T, s Span) {
			assert.Len(t, s.Tags, 1)
		}},
		{name: "trace_tags null", changes: map[string]any{"trace_tags": nil}, check: func(t *testing.T, s Span) { assert.Nil(t, s.TraceTags) }},
		{name: "empty error fields are absent", changes: map[string]any{"error_code": "", "error_message": "", "error_stack": "", "code_filepath": ""}, check: func(t *testing.T, s Span) {
			assert.Nil(t, s.ErrorCode)
			assert.Nil(t, s.ErrorMessage)
			assert.Nil(t, s.ErrorStack)
			assert.Nil(t, s.CodeFilepath)
			assert.False(t, s.HasError())
		}},
		{name: "error fields", changes: map[string]any{"error_code": "ValueError", "error_message": "bad"}, check: func(t *testing.T, s Span) {
			assert.Equal(t, new("ValueError"), s.ErrorCode)
			assert.Equal(t, new("bad"), s.ErrorMessage)
			assert.True(t, s.HasError())
		}},
		{name: "code_lineno integral float", changes: map[string]any{"code_lineno": raw("42.0")}, check: func(t *testing.T, s Span) { assert.Equal(t, new(42), s.CodeLineno) }},
		{name: "code_lineno numeric string", changes: map[string]any{"code_lineno": "42"}, check: func(t *testing.T, s Span) { assert.Equal(t, new(42), s.CodeLineno) }},
		{name: "code_lineno null", changes: map[string]any{"code_lineno": nil}, check: func(t *testing.T, s Span) { assert.Nil(t, s.CodeLineno) }},
		{name: "unknown keys ignored", changes: map[string]any{
			"code": "def f(): pass", "experiment_result_id": nil,
			"signals": map[string]any{}, "Name": 5, "ID": []int{},
		}, check: func(t *testing.T, s Span) {
			assert.Equal(t, "op", s.Name, "keys are case-sensitive")
			assert.Equal(t, baseID, s.ID)
		}},
		{name: "project_id never from the body", changes: map[string]any{"project_id": "evil"}, check: func(t *testing.T, s Span) {
			assert.Equal(t, testProject, s.ProjectID)
		}},
		{name: "duplicate keys: the last wins", span: `{"trace_id":"` + baseTrace + `","name":"first","started_at":1732212345,"name":"last","attributes":{"model":"m"},"attributes":null}`, check: func(t *testing.T, s Span) {
			assert.Equal(t, "last", s.Name)
			assert.Equal(t, "{}", string(s.Attributes))
			assert.Nil(t, s.LLM, "nothing read from the replaced attributes")
		}},
		{name: "escaped keys", span: `{"trace_id":"` + baseTrace + `","n\u0061me":"op","started_at":1732212345}`, check: func(t *testing.T, s Span) {
			assert.Equal(t, "op", s.Name)
		}},
		{name: "ab_choices", changes: map[string]any{"ab_choices": []any{
			map[string]any{"ab_choice_id": "AAAAAAAA-2222-4333-8444-555555555555", "choice_name": "model_test", "variant_key": "variant_a", "variant_value": "gpt-4o"},
			map[string]any{"ab_choice_id": nil, "choice_name": "temp", "variant_key": "hot", "variant_value": 0.9},
			map[string]any{"choice_name": "model_test", "variant_key": "control"},
		}}, check: func(t *testing.T, s Span) {
			assert.Equal(t, []ABChoice{
				{ID: "aaaaaaaa-2222-4333-8444-555555555555", Name: "model_test", Variant: "variant_a", Value: "gpt-4o"},
				{Name: "temp", Variant: "hot", Value: "0.9"},
			}, s.ABChoices, "ids normalised, values as text, the first choice of a name kept")
			require.NoError(t, s.Check(testNow))
		}},
		{name: "ab_choices at the limit", changes: map[string]any{"ab_choices": manyChoices(MaxABChoices)}, check: func(t *testing.T, s Span) {
			assert.Len(t, s.ABChoices, MaxABChoices)
		}},
		{name: "ab_choices null or empty", changes: map[string]any{"ab_choices": nil}, check: func(t *testing.T, s Span) {
			assert.Nil(t, s.ABChoices)
		}},
		{name: "timestamps", check: func(t *testing.T, s Span) {
			assert.Equal(t, testNow, s.CreatedAt)
			assert.Equal(t, testNow, s.UpdatedAt)
			assert.Equal(t, time.UTC, s.StartedAt.Location())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			span := tt.span
			if span == "" {
				span = spanJSON(tt.changes)
			}
			s, rej := decodeOne(t, span)
			require.Nil(t, rej, "rejected: %+v", rej)
			tt.check(t, s)
		})
	}
}

func TestDecodeBatchBody(t *testing.T) {
	valid := spanJSON(nil)
	invalid := spanJSON(map[string]any{"name": absent{}})
	many := func(n int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(valid+",", n), ",") + "]"
	}
	tests := []struct {
		name, body string
		want       string // "" = no error
		spans      int
	}{
		{name: "empty", body: "", want: "body is not valid JSON: unexpected end of JSON input"},
		{name: "spaces", body: " \n", want: "body is not valid JSON"},
		{name: "garbage", body: "spans please", want: "body is not valid JSON: invalid character 's' looking for beginning of value at offset 0"},
		{name: "an object", body: valid, want: "body must be a JSON array of spans, got an object"},
		{name: "a string", body: `"[]"`, want: "body must be a JSON array of spans, got a string"},
		{name: "an invalid object", body: `{"a":}`, want: "body is not valid JSON"},
		{name: "unterminated", body: "[" + valid, want: "body is not valid JSON: unexpected end of JSON input"},
		{name: "truncated span", body: `[` + valid + `,{"trace_id":"`, want: "body is not valid JSON"},
		{name: "trailing comma", body: "[" + valid + ",]", want: "body is not valid JSON: invalid character ']' looking for beginning of value"},
		{name: "missing comma", body: "[" + valid + " " + valid + "]", want: "body is not valid JSON: invalid character '{' after element"},
		{name: "trailing data", body: "[" + valid + "] x", want: "body is not valid JSON: invalid character after top-level value"},
		{name: "two arrays", body: "[" + valid + "][]", want: "body is not valid JSON"},
		{name: "bad literal inside a span", body: `[{"trace_id":"` + baseTrace + `","name":"op","started_at":1732212345,"x":nul}]`, want: "body is not valid JSON: invalid character '}' in literal null"},
		{name: "control character in a string", body: "[{\"name\":\"a\tb\"}]", want: "body is not valid JSON: invalid character '\\t' in string literal"},
		{name: "bad escape", body: `[{"name":"a\qb"}]`, want: `body is not valid JSON: invalid character 'q' in string escape code`},
		{name: "leading zero", body: `[{"x":01}]`, want: "body is not valid JSON"},
		{name: "too deep", body: "[" + strings.Repeat("[", jsonscan.MaxDepth) + strings.Repeat("]", jsonscan.MaxDepth) + "]", want: "body is not valid JSON: exceeded max nesting depth"},
		{name: "empty array", body: " [ ] ", want: "the batch has no spans"},
		{name: "all invalid", body: "[" + invalid + ", 1, null, " + invalid + "," + invalid + "]", want: "no valid span in the batch: [0] name: required; [1] span must be a JSON object; [2] span must be a JSON object (and 2 more)"},
		{name: "one invalid", body: "[" + invalid + "]", want: "no valid span in the batch: [0] name: required"},
		{name: "too many spans", body: many(MaxSpansPerBatch + 1), want: "too many spans in the batch: at most 1000"},
		{name: "too many before a syntax error", body: strings.TrimSuffix(many(MaxSpansPerBatch+1), "]"), want: "too many spans"},
		{name: "MaxSpansPerBatch spans", body: many(MaxSpansPerBatch), spans: MaxSpansPerBatch},
		{name: "whitespace everywhere", body: " \t[\r\n" + valid + " ,\n" + valid + "\n] \n", spans: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spans, rejected, err := DecodeBatch([]byte(tt.body), testProject, testNow)
			if tt.want == "" {
				require.NoError(t, err)
				assert.Len(t, spans, tt.spans)
				assert.Empty(t, rejected)
				return
			}
			require.Error(t, err)
			assert.True(t, errs.Is(err, errs.CodeInvalid), "code of %v", err)
			assert.Contains(t, err.Error(), tt.want)
			assert.Nil(t, spans)
		})
	}
}

func spanWithAttributes(t *testing.T, kind, attributes string) Span {
	t.Helper()
	body := `[{"trace_id":"` + baseTrace + `","name":"op","kind":"` + kind + `","started_at":1732212345,"attributes":` + attributes + `}]`
	spans, _, err := DecodeBatch([]byte(body), testProject, testNow)
	require.NoError(t, err)
	require.Len(t, spans, 1)
	return spans[0]
}

func TestLLMUsage(t *testing.T) {
	tests := []struct {
		name       string
		kind       string
		attributes string
		want       *LLMUsage
	}{
		{"spec fields", "llm", `{"provider":"openai","model":"gpt-4o","inputTokens":100,"outputTokens":20}`,
			&LLMUsage{Provider: "openai", Model: "gpt-4o", InputTokens: 100, OutputTokens: 20}},
		{"numeric strings", "llm", `{"provider":"openai","model":"gpt-4o","inputTokens":"100","outputTokens":"20.0"}`,
			&LLMUsage{Provider: "openai", Model: "gpt-4o", InputTokens: 100, OutputTokens: 20}},
		{"any kind naming a model", "generic", `{"model":"gpt-4o","inputTokens":1}`,
			&LLMUsage{Model: "gpt-4o", InputTokens: 1}},
		{"llm without a model", "llm", `{"provider":"openai","inputTokens":100}`, nil},
		{"model not a string", "llm", `{"model":4,"inputTokens":100}`, nil},
		{"empty model", "llm", `{"model":"","inputTokens":100}`, nil},
		{"no attributes", "llm", `null`, nil},
		{"openai chat usage", "llm", `{"provider":"openai","model":"o3-mini","usage":{"prompt_tokens":1250,"completion_tokens":300,"total_tokens":1550,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":256}}}`,
			&LLMUsage{Provider: "openai", Model: "o3-mini", InputTokens: 1250, OutputTokens: 300, CachedInputTokens: 1024, ReasoningTokens: 256}},
		{"openai responses usage", "llm", `{"model":"gpt-4.1","usage":{"input_tokens":1250,"output_tokens":300,"input_tokens_details":{"cached_tokens":1000},"output_tokens_details":{"reasoning_tokens":100}}}`,
			&LLMUsage{Model: "gpt-4.1", InputTokens: 1250, OutputTokens: 300, CachedInputTokens: 1000, ReasoningTokens: 100}},
		{"anthropic usage", "llm", `{"provider":"anthropic","model":"claude-sonnet-4","usage":{"input_tokens":20,"output_tokens":310,"cache_read_input_tokens":2000,"cache_creation_input_tokens":100}}`,
			&LLMUsage{Provider: "anthropic", Model: "claude-sonnet-4", InputTokens: 2120, OutputTokens: 310, CachedInputTokens: 2000, CacheWriteTokens: 100}},
		{"anthropic usage with null cache fields", "llm", `{"model":"claude","usage":{"input_tokens":20,"output_tokens":3,"cache_read_input_tokens":null}}`,
			&LLMUsage{Model: "claude", InputTokens: 20, OutputTokens: 3}},
		{"top-level counts win over usage", "llm", `{"model":"gpt-4o","inputTokens":1300,"outputTokens":90,"usage":{"prompt_tokens":1250,"completion_tokens":87,"prompt_tokens_details":{"cached_tokens":1024}}}`,
			&LLMUsage{Model: "gpt-4o", InputTokens: 1300, OutputTokens: 90, CachedInputTokens: 1024}},
		{"one top-level count, the other from usage", "llm", `{"model":"gpt-4o","outputTokens":90,"usage":{"prompt_tokens":1250,"completion_tokens":87}}`,
			&LLMUsage{Model: "gpt-4o", InputTokens: 1250, OutputTokens: 90}},
		{"breakdown capped by the totals", "llm", `{"model":"claude","inputTokens":20,"outputTokens":5,"usage":{"input_tokens":20,"output_tokens":5,"cache_read_input_tokens":2000,"cache_creation_input_tokens":100}}`,
			&LLMUsage{Model: "claude", InputTokens: 20, OutputTokens: 5, CachedInputTokens: 20}},
		{"invalid counts ignored", "llm", `{"model":"m","inputTokens":-1,"outputTokens":1.5,"usage":{"prompt_tokens":"x","completion_tokens":true}}`,
			&LLMUsage{Model: "m"}},
		{"usage not an object", "llm", `{"model":"m","inputTokens":3,"usage":"lots"}`,
			&LLMUsage{Model: "m", InputTokens: 3}},
		{"nested model is not the model", "llm", `{"request":{"model":"m"},"choices":[{"model":"m"}]}`, nil},
		{"keys are case-sensitive", "llm", `{"Model":"m"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spanWithAttributes(t, tt.kind, tt.attributes)
			assert.Equal(t, tt.want, s.LLM)
		})
	}
}

func TestPromptLink(t *testing.T) {
	tests := []struct {
		name       string
		attributes string
		want       *PromptLink
	}{
		{"zeroeval object", `{"zeroeval":{"task":"support-bot","variables":{"x":"1"},"prompt_slug":"support-bot","prompt_version":3,"prompt_version_id":"9F3E2D1C-0B4A-4C5D-8E6F-7A8B9C0D1E2F","content_hash":"ABCDEF"}}`,
			&PromptLink{Task: "support-bot", PromptSlug: "support-bot", PromptVersion: 3, PromptVersionID: "9f3e2d1c-0b4a-4c5d-8e6f-7a8b9c0d1e2f", ContentHash: "abcdef"}},
		{"task and hash only", `{"zeroeval":{"task":"t","content_hash":"abc"}}`, &PromptLink{Task: "t", ContentHash: "abc"}},
		{"top-level task without zeroeval", `{"task":"t"}`, &PromptLink{Task: "t"}},
		{"top-level task fills zeroeval's", `{"task":"t","zeroeval":{"prompt_version_id":"v1"}}`, &PromptLink{Task: "t", PromptVersionID: "v1"}},
		{"zeroeval task wins", `{"task":"top","zeroeval":{"task":"inner"}}`, &PromptLink{Task: "inner"}},
		{"version as a string", `{"zeroeval":{"prompt_version":"7"}}`, &PromptLink{PromptVersion: 7}},
		{"wrong types ignored", `{"zeroeval":{"task":1,"prompt_version":1.5,"prompt_version_id":[]},"task":{}}`, nil},
		{"zeroeval not an object", `{"zeroeval":"<zeroeval>{}</zeroeval>"}`, nil},
		{"nothing", `{"model":"m"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spanWithAttributes(t, "llm", tt.attributes)
			assert.Equal(t, tt.want, s.Link)
		})
	}
}

// manyChoices is an ab_choices array of n choices of distinct tests.
func manyChoices(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = map[string]any{"choice_name": fmt.Sprintf("test-%d", i), "variant_key": "a", "variant_value": "x"}
	}
	return out
}
