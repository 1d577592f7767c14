package fakemodel_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// awsKeyID signs the tests' Bedrock requests.
const awsKeyID = "AKIDFAKEMODELTEST"

// bedrock calls the server at url as Plume's Bedrock client does (llm.Upstream: SigV4-signed,
// the model id escaped as one path segment), for model, and reads the answer whole.
func bedrock(t *testing.T, url, model string, stream bool, body string) response {
	t.Helper()
	c := llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderBedrock: {BaseURL: url, Region: "us-east-1"}}},
		llm.Options{AWSCredentials: credentials.NewStaticCredentialsProvider(awsKeyID, "fake-secret", "")})
	up, err := c.Upstream("bedrock/" + model)
	require.NoError(t, err)
	send := up.Do
	if stream {
		send = up.DoStream
	}
	res, err := send(t.Context(), []byte(body))
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// frame is one message of an AWS event stream, its payload decoded.
type frame struct {
	headers map[string]string
	payload map[string]any
}

// frames decodes an event stream with the AWS SDK's decoder, which checks every CRC.
func frames(t *testing.T, body []byte) []frame {
	t.Helper()
	dec := eventstream.NewDecoder()
	r := bytes.NewReader(body)
	var out []frame
	for r.Len() > 0 {
		msg, err := dec.Decode(r, nil)
		require.NoError(t, err)
		f := frame{headers: map[string]string{}}
		for _, h := range msg.Headers {
			f.headers[h.Name] = h.Value.String()
		}
		require.NoError(t, json.Unmarshal(msg.Payload, &f.payload), "%s", msg.Payload)
		out = append(out, f)
	}
	return out
}

// pngBase64 is image bytes as a request carries them.
const pngBase64 = "iVBORw0KGgo="

// TestBedrockConverse: a signed Converse call with a system prompt, turns and an image is
// answered in Converse's shape and logged as read.
func TestBedrockConverse(t *testing.T) {
	srv, url := start(t)
	body := `{"system":[{"text":"You are a judge."}],
		"inferenceConfig":{"maxTokens":512,"temperature":0.2,"topP":0.9,"stopSequences":["END"]},
		"messages":[
			{"role":"user","content":[{"text":"Hello."}]},
			{"role":"assistant","content":[{"text":"Hi."}]},
			{"role":"user","content":[{"image":{"format":"png","source":{"bytes":"` + pngBase64 + `"}}},{"text":"Describe it."}]}]}`
	resp := bedrock(t, url, "us.anthropic.claude-3-5-haiku-20241022-v1:0", false, body)
	require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
	assert.Equal(t, "application/json", resp.header.Get("Content-Type"))
	assert.Regexp(t, `^fakemodel-[0-9a-f]{8}0001$`, resp.header.Get("X-Amzn-Requestid"))
	v := resp.json(t)
	assert.Equal(t, "end_turn", v["stopReason"])
	assert.Equal(t, "assistant", dig(v, "output", "message", "role"))
	text := dig(v, "output", "message", "content", 0, "text").(string)
	assert.Contains(t, text, "Simulated answer from us.anthropic.claude-3-5-haiku-20241022-v1:0")
	assert.NotNil(t, dig(v, "metrics", "latencyMs"))

	c := srv.Calls()[0]
	assert.Equal(t, fakemodel.Bedrock, c.API)
	assert.Equal(t, "us.anthropic.claude-3-5-haiku-20241022-v1:0", c.Model, "the escaped path segment, unescaped")
	assert.Equal(t, "You are a judge.", c.System)
	require.Len(t, c.Messages, 3)
	assert.Equal(t, fakemodel.Message{Role: "user", Text: "Describe it.", Images: 1}, c.Messages[2])
	assert.Equal(t, 512, c.MaxTokens)
	assert.InDelta(t, 0.2, *c.Temperature, 1e-9)
	assert.False(t, c.Stream)
	assert.True(t, strings.HasPrefix(c.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+awsKeyID+"/"))
	want := fakemodel.Tokens("You are a judge.") + fakemodel.Tokens("Hello.") + fakemodel.Tokens("Hi.") + fakemodel.Tokens("Describe it.") + 85
	assert.EqualValues(t, want, dig(v, "usage", "inputTokens"))
	assert.EqualValues(t, fakemodel.Tokens(text), dig(v, "usage", "outputTokens"))
	assert.EqualValues(t, want+fakemodel.Tokens(text), dig(v, "usage", "totalTokens"))
}

// TestBedrockModelIDs: model ids are one escaped path segment, ARNs (with "/") included.
func TestBedrockModelIDs(t *testing.T) {
	srv, url := start(t)
	for _, id := range []string{
		"amazon.nova-lite-v1:0",
		"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0",
	} {
		resp := bedrock(t, url, id, false, `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`)
		require.Equal(t, http.StatusOK, resp.status, "%s: %s", id, resp.body)
		calls := srv.Calls()
		assert.Equal(t, id, calls[len(calls)-1].Model)
	}
}

// TestBedrockReplies: the rules' replies in Converse's words: refusals, cut answers, cache
// reads, errors with x-amzn-ErrorType, forced tools.
func TestBedrockReplies(t *testing.T) {
	srv, url := start(t, fakemodel.WithRules(
		fakemodel.Rule{Match: fakemodel.Contains("forbidden"), Reply: fakemodel.Reply{Refusal: "No."}},
		fakemodel.Rule{Match: fakemodel.Contains("ramble"), Reply: fakemodel.Reply{Text: strings.Repeat("abcd", 10), Truncate: true}},
		fakemodel.Rule{Match: fakemodel.Contains("cache"), Reply: fakemodel.Reply{Text: "ok", CachedTokens: 4}},
		fakemodel.Rule{Match: fakemodel.Contains("busy"), Reply: fakemodel.Reply{Status: 429, RetryAfter: 2 * time.Second, ErrorMessage: "Too many requests."}},
		fakemodel.Rule{Match: fakemodel.Contains("down"), Reply: fakemodel.Reply{Status: 503}},
		fakemodel.Rule{Match: fakemodel.Contains("verdict"), Reply: fakemodel.Reply{JSON: json.RawMessage(`{"pass":false}`)}},
	))
	const model = "amazon.nova-lite-v1:0"
	ask := func(user, extra string) response {
		return bedrock(t, url, model, false, `{"messages":[{"role":"user","content":[{"text":"`+user+`"}]}]`+extra+`}`)
	}
	refusal := ask("something forbidden", "").json(t)
	assert.Equal(t, "content_filtered", refusal["stopReason"])
	assert.Equal(t, "No.", dig(refusal, "output", "message", "content", 0, "text"))

	cut := ask("ramble", "").json(t)
	assert.Equal(t, "max_tokens", cut["stopReason"])
	assert.Equal(t, strings.Repeat("abcd", 5), dig(cut, "output", "message", "content", 0, "text"))

	limited := ask("hello", `,"inferenceConfig":{"maxTokens":1}`).json(t)
	assert.Equal(t, "max_tokens", limited["stopReason"])
	assert.Equal(t, "Simu", dig(limited, "output", "message", "content", 0, "text"))

	cached := ask("please cache this long prompt", "").json(t)
	assert.EqualValues(t, 4, dig(cached, "usage", "cacheReadInputTokens"))
	assert.EqualValues(t, fakemodel.Tokens("please cache this long prompt")-4, dig(cached, "usage", "inputTokens"),
		"inputTokens leave out cache reads")

	busy := ask("busy", "")
	assert.Equal(t, http.StatusTooManyRequests, busy.status)
	assert.Equal(t, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", busy.header.Get("X-Amzn-Errortype"))
	assert.Equal(t, "2", busy.header.Get("Retry-After"))
	assert.Equal(t, map[string]any{"message": "Too many requests."}, busy.json(t))

	down := ask("down", "")
	assert.Equal(t, http.StatusServiceUnavailable, down.status)
	assert.True(t, strings.HasPrefix(down.header.Get("X-Amzn-Errortype"), "ServiceUnavailableException:"))

	tools := `,"toolConfig":{"tools":[{"toolSpec":{"name":"other","inputSchema":{"json":{"type":"object"}}}},` +
		`{"toolSpec":{"name":"record_verdict","inputSchema":{"json":` + verdictSchema + `}}}],"toolChoice":`
	forced := ask("give a verdict", tools+`{"tool":{"name":"record_verdict"}}}`).json(t)
	assert.Equal(t, "tool_use", forced["stopReason"])
	assert.Equal(t, "record_verdict", dig(forced, "output", "message", "content", 0, "toolUse", "name"))
	assert.Regexp(t, `^tooluse_`, dig(forced, "output", "message", "content", 0, "toolUse", "toolUseId"))
	assert.Equal(t, map[string]any{"pass": false}, dig(forced, "output", "message", "content", 0, "toolUse", "input"), "Reply.JSON is the tool input")
	c := srv.Calls()[len(srv.Calls())-1]
	assert.Equal(t, fakemodel.FormatTool, c.Format)
	assert.Equal(t, "record_verdict", c.SchemaName)
	assert.Equal(t, []string{"other", "record_verdict"}, c.Tools)

	anyTool := ask("judge it", tools+`{"any":{}}}`).json(t)
	assert.Equal(t, "other", dig(anyTool, "output", "message", "content", 0, "toolUse", "name"), "any: the first tool")
	auto := ask("judge it", tools+`{"auto":{}}}`).json(t)
	assert.Equal(t, "end_turn", auto["stopReason"])
}

// TestBedrockStream: ConverseStream sends the answer of Converse as AWS event stream messages,
// in Bedrock's order of events.
func TestBedrockStream(t *testing.T) {
	srv, url := start(t)
	const model = "amazon.nova-lite-v1:0"
	for _, tt := range []struct {
		name, extra string
		tool        bool
	}{
		{name: "text"},
		{name: "tool", extra: `,"toolConfig":{"tools":[{"toolSpec":{"name":"record_verdict","inputSchema":{"json":` + verdictSchema +
			`}}}],"toolChoice":{"tool":{"name":"record_verdict"}}}`, tool: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := `{"messages":[{"role":"user","content":[{"text":"stream please"}]}]` + tt.extra + `}`
			whole := bedrock(t, url, model, false, req).json(t)
			resp := bedrock(t, url, model, true, req)
			require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
			assert.Equal(t, "application/vnd.amazon.eventstream", resp.header.Get("Content-Type"))
			c := srv.Calls()[srv.Count()-1]
			assert.True(t, c.Stream)
			assert.Equal(t, "/model/"+model+"/converse-stream", c.Path)
			assert.Equal(t, "application/vnd.amazon.eventstream", c.Header.Get("Accept"), "as the AWS SDK asks for a stream")

			var names []string
			var streamed strings.Builder
			for _, f := range frames(t, resp.body) {
				assert.Equal(t, "event", f.headers[":message-type"])
				assert.Equal(t, "application/json", f.headers[":content-type"])
				assert.NotEmpty(t, f.payload["p"], "padded as Bedrock pads events")
				name := f.headers[":event-type"]
				if len(names) == 0 || names[len(names)-1] != name {
					names = append(names, name)
				}
				switch name {
				case "contentBlockStart":
					assert.Equal(t, "record_verdict", dig(f.payload, "start", "toolUse", "name"))
				case "contentBlockDelta":
					if tt.tool {
						streamed.WriteString(dig(f.payload, "delta", "toolUse", "input").(string))
					} else {
						streamed.WriteString(dig(f.payload, "delta", "text").(string))
					}
				case "messageStop":
					assert.Equal(t, whole["stopReason"], f.payload["stopReason"])
				case "metadata":
					assert.Equal(t, whole["usage"], f.payload["usage"])
				}
			}
			if tt.tool {
				assert.Equal(t, []string{"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}, names)
				input, _ := json.Marshal(dig(whole, "output", "message", "content", 0, "toolUse", "input"))
				assert.JSONEq(t, string(input), streamed.String())
				return
			}
			assert.Equal(t, []string{"messageStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}, names,
				"text blocks open with their first delta")
			assert.Equal(t, dig(whole, "output", "message", "content", 0, "text"), streamed.String())
		})
	}
}

// signedPost posts body to url+path signed with SigV4 for service, as an AWS client would.
func signedPost(t *testing.T, url, path, service, body string) response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256([]byte(body))
	creds := aws.Credentials{AccessKeyID: awsKeyID, SecretAccessKey: "fake-secret"}
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), service, "us-east-1", time.Now()))
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// TestBedrockRejects: requests Bedrock refuses are refused in its shape, and logged.
func TestBedrockRejects(t *testing.T) {
	const path = "/model/amazon.nova-lite-v1%3A0/converse"
	user := func(content string) string { return `{"role":"user","content":[` + content + `]}` }
	valid := `{"messages":[` + user(`{"text":"hi"}`) + `]}`
	toolUse := `{"role":"assistant","content":[{"toolUse":{"toolUseId":"call_1","name":"lookup","input":{}}}]}`
	tools := `"toolConfig":{"tools":[{"toolSpec":{"name":"lookup","inputSchema":{"json":{"type":"object"}}}}]}`
	tests := []struct {
		name     string
		send     func(url, body string) response // bedrock's signed call when nil
		body     string
		opts     []fakemodel.Option
		status   int
		wantType string
		wantMsg  string
	}{
		{name: "not signed", send: func(url, body string) response { return post(t, url, path, nil, body) },
			body: valid, status: 403, wantType: "UnrecognizedClientException", wantMsg: "security token"},
		{name: "a bearer key", send: func(url, body string) response { return post(t, url, path, openAIHeaders, body) },
			body: valid, status: 403, wantType: "UnrecognizedClientException"},
		{name: "signed for another service", send: func(url, body string) response { return signedPost(t, url, path, "s3", body) },
			body: valid, status: 403, wantType: "InvalidSignatureException", wantMsg: "'bedrock'"},
		{name: "unknown key id", opts: []fakemodel.Option{fakemodel.WithAPIKey("AKIDOTHER")}, body: valid, status: 403, wantType: "UnrecognizedClientException"},
		{name: "not JSON", body: `{"messages":`, status: 400, wantType: "ValidationException", wantMsg: "Malformed"},
		{name: "no messages", body: `{}`, status: 400, wantType: "ValidationException", wantMsg: "'messages'"},
		{name: "empty messages", body: `{"messages":[]}`, status: 400, wantMsg: "must start with a user message"},
		{name: "system role", body: `{"messages":[{"role":"system","content":[{"text":"hi"}]}]}`, status: 400, wantMsg: "enum value set: [user, assistant]"},
		{name: "assistant first", body: `{"messages":[{"role":"assistant","content":[{"text":"hi"}]}]}`, status: 400, wantMsg: "must start with a user message"},
		{name: "same role twice", body: `{"messages":[` + user(`{"text":"a"}`) + `,` + user(`{"text":"b"}`) + `]}`, status: 400, wantMsg: "must alternate"},
		{name: "no content", body: `{"messages":[` + user(``) + `]}`, status: 400, wantMsg: "messages.0 is empty"},
		{name: "blank text", body: `{"messages":[` + user(`{"text":""}`) + `]}`, status: 400, wantMsg: "messages.0.content.0 is blank"},
		{name: "two members", body: `{"messages":[` + user(`{"text":"a","image":{"format":"png","source":{"bytes":"`+pngBase64+`"}}}`) + `]}`, status: 400, wantMsg: "exactly one"},
		{name: "image format", body: `{"messages":[` + user(`{"image":{"format":"bmp","source":{"bytes":"`+pngBase64+`"}}}`) + `]}`, status: 400, wantMsg: "[png, jpeg, gif, webp]"},
		{name: "image bytes", body: `{"messages":[` + user(`{"image":{"format":"png","source":{"bytes":"not base64!"}}}`) + `]}`, status: 400, wantMsg: "base64"},
		{name: "tool use without toolConfig", body: `{"messages":[` + user(`{"text":"a"}`) + `,` + toolUse + `,` +
			user(`{"toolResult":{"toolUseId":"call_1","content":[{"text":"42"}]}}`) + `]}`, status: 400, wantMsg: "toolConfig field must be defined"},
		{name: "result of a call not made", body: `{"messages":[` + user(`{"text":"a"}`) + `,` + toolUse + `,` +
			user(`{"toolResult":{"toolUseId":"call_2","content":[{"text":"42"}]}}`) + `],` + tools + `}`, status: 400, wantMsg: "call_2"},
		{name: "call without its result", body: `{"messages":[` + user(`{"text":"a"}`) + `,` + toolUse + `,` + user(`{"text":"b"}`) + `],` + tools + `}`,
			status: 400, wantMsg: "Expected toolResult blocks at messages.2.content for the following Ids: call_1"},
		{name: "tool use id", body: `{"messages":[` + user(`{"text":"a"}`) + `,{"role":"assistant","content":[{"toolUse":{"toolUseId":"call:1","name":"lookup","input":{}}}]}],` + tools + `}`,
			status: 400, wantMsg: "toolUseId"},
		{name: "max tokens", body: `{"inferenceConfig":{"maxTokens":0},"messages":[` + user(`{"text":"a"}`) + `]}`, status: 400, wantMsg: "inferenceConfig.maxTokens"},
		{name: "temperature", body: `{"inferenceConfig":{"temperature":1.5},"messages":[` + user(`{"text":"a"}`) + `]}`, status: 400, wantMsg: "less than or equal to 1"},
		{name: "top p", body: `{"inferenceConfig":{"topP":-0.1},"messages":[` + user(`{"text":"a"}`) + `]}`, status: 400, wantMsg: "inferenceConfig.topP"},
		{name: "empty stop sequence", body: `{"inferenceConfig":{"stopSequences":[""]},"messages":[` + user(`{"text":"a"}`) + `]}`, status: 400, wantMsg: "stopSequences"},
		{name: "tool name", body: `{"messages":[` + user(`{"text":"a"}`) + `],"toolConfig":{"tools":[{"toolSpec":{"name":"a.b","inputSchema":{"json":{}}}}]}}`,
			status: 400, wantMsg: "toolSpec.name"},
		{name: "unknown forced tool", body: `{"messages":[` + user(`{"text":"a"}`) + `],"toolConfig":{"tools":[{"toolSpec":{"name":"a","inputSchema":{"json":{}}}}],"toolChoice":{"tool":{"name":"b"}}}}`,
			status: 400, wantMsg: "not among the tools"},
		{name: "unknown model", opts: []fakemodel.Option{fakemodel.WithModels("anthropic.claude-3-haiku-20240307-v1:0")}, body: valid,
			status: 404, wantType: "ResourceNotFoundException"},
		{name: "access denied", opts: []fakemodel.Option{fakemodel.WithRules(fakemodel.Rule{Reply: fakemodel.Reply{Status: 403}})}, body: valid,
			status: 403, wantType: "AccessDeniedException"},
		{name: "model timeout", opts: []fakemodel.Option{fakemodel.WithRules(fakemodel.Rule{Reply: fakemodel.Reply{Status: 408}})}, body: valid,
			status: 408, wantType: "ModelTimeoutException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := start(t, tt.opts...)
			var resp response
			if tt.send != nil {
				resp = tt.send(url, tt.body)
			} else {
				resp = bedrock(t, url, "amazon.nova-lite-v1:0", false, tt.body)
			}
			assert.Equal(t, tt.status, resp.status, "%s", resp.body)
			typ, _, _ := strings.Cut(resp.header.Get("X-Amzn-Errortype"), ":")
			if tt.wantType != "" {
				assert.Equal(t, tt.wantType, typ)
			}
			assert.Contains(t, resp.json(t)["message"], tt.wantMsg)
			require.Equal(t, 1, srv.Count(), "a refused call is logged")
			assert.Equal(t, fakemodel.Bedrock, srv.Calls()[0].API)
			assert.Equal(t, tt.status, srv.Calls()[0].Status)
		})
	}
}

// TestBedrockUnknownOperation: a path under /model/ the server does not serve is a 404 in
// Bedrock's shape.
func TestBedrockUnknownOperation(t *testing.T) {
	_, url := start(t)
	resp := signedPost(t, url, "/model/amazon.nova-lite-v1%3A0/invoke", "bedrock", `{}`)
	assert.Equal(t, http.StatusNotFound, resp.status)
	assert.True(t, strings.HasPrefix(resp.header.Get("X-Amzn-Errortype"), "ResourceNotFoundException:"))
	assert.Contains(t, resp.json(t)["message"], "/invoke")
}

// TestBedrockToolRoundTrip: a tool call and its result, with the toolConfig Converse wants,
// pass; the result's text is the user turn's text in the call log.
func TestBedrockToolRoundTrip(t *testing.T) {
	srv, url := start(t)
	body := `{"messages":[
		{"role":"user","content":[{"text":"What is 6 times 7?"}]},
		{"role":"assistant","content":[{"text":"Let me compute."},{"toolUse":{"toolUseId":"call_1","name":"multiply","input":{"a":6,"b":7}}}]},
		{"role":"user","content":[{"toolResult":{"toolUseId":"call_1","content":[{"json":{"product":42}}]}}]}],
		"toolConfig":{"tools":[{"toolSpec":{"name":"multiply","inputSchema":{"json":{"type":"object"}}}}]}}`
	resp := bedrock(t, url, "amazon.nova-lite-v1:0", false, body)
	require.Equal(t, http.StatusOK, resp.status, "%s", resp.body)
	c := srv.Calls()[0]
	require.Len(t, c.Messages, 3)
	assert.Equal(t, "Let me compute.", c.Messages[1].Text)
	assert.Equal(t, `{"product":42}`, c.LastUser())
	assert.Equal(t, []string{"multiply"}, c.Tools)
	assert.Equal(t, fakemodel.FormatText, c.Format)
}

// TestBedrockStreamEndsWithTheClient: a paced stream stops when its client goes away.
func TestBedrockStreamEndsWithTheClient(t *testing.T) {
	srv, url := start(t, fakemodel.WithRules(fakemodel.Rule{Reply: fakemodel.Reply{Text: "one two three four", ChunkInterval: time.Hour}}))
	c := llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderBedrock: {BaseURL: url, Region: "us-east-1"}}},
		llm.Options{AWSCredentials: credentials.NewStaticCredentialsProvider(awsKeyID, "fake-secret", "")})
	up, err := c.Upstream("bedrock/amazon.nova-lite-v1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	res, err := up.DoStream(ctx, []byte(`{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`))
	require.NoError(t, err)
	defer res.Body.Close()
	msg, err := eventstream.NewDecoder().Decode(res.Body, nil)
	require.NoError(t, err, "the first event comes at once")
	assert.Equal(t, "messageStart", msg.Headers.Get(":event-type").String())
	cancel()
	_, err = io.ReadAll(res.Body)
	assert.True(t, errors.Is(err, context.Canceled), "the rest never comes: %v", err)
	assert.Equal(t, 1, srv.Count())
}
