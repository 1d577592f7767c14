package dashboard_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// pngPixel is a 1×1 PNG.
var pngPixel, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

// chatInput is an OpenAI-style chat: a system message, a user message with text, a linked
// image and an inline (data: URL) image, each carrying text given.
func chatInput(t *testing.T, text string) string {
	t.Helper()
	b, err := json.Marshal([]any{
		map[string]any{"role": "system", "content": "You answer about " + text},
		map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "What is in this picture? " + text},
			map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngPixel)}},
		}},
	})
	require.NoError(t, err)
	return string(b)
}

// seedLLMTrace posts, to tenant A's project, a trace of a root and one llm span linked to
// prompt slug whose input is a chat carrying text, and returns the trace and llm span ids.
func (f *fixture) seedLLMTrace(t *testing.T, slug, text string, attrs map[string]any) (string, string) {
	t.Helper()
	versionID := f.api.EnsurePrompt(t, f.api.A, slug, "You are a helpful bot.")
	traceID, rootID, spanID := uuid.NewString(), uuid.NewString(), uuid.NewString()
	at := time.Now().Add(-time.Minute)
	llm := apitest.LLMSpan(spanID, traceID, "", slug, versionID, chatInput(t, text), `{"role":"assistant","content":"`+strings.ReplaceAll(text, `"`, `\"`)+`"}`, at)
	llm["parent_span_id"] = rootID
	for k, v := range attrs {
		llm["attributes"].(map[string]any)[k] = v
	}
	f.api.MustDo(t, "POST", "/spans", f.api.A.Key, []any{span(rootID, traceID, "", "agent run", at, 2*time.Second), llm})
	return traceID, spanID
}

// seedAttachment stores a PNG attachment of the span, as an SDK does (presigned upload).
func (f *fixture) seedAttachment(t *testing.T, key, spanID, label string) {
	t.Helper()
	res := f.api.MustDo(t, "POST", "/spans/"+spanID+"/attachments", key, map[string]any{
		"type": "image", "label": label, "content_type": "image/png", "size": len(pngPixel),
	})
	var up api.AttachmentUpload
	res.Decode(t, &up)
	req, err := http.NewRequest(up.Method, up.UploadURL, bytes.NewReader(pngPixel))
	require.NoError(t, err)
	for k, v := range up.Headers {
		req.Header.Set(k, v)
	}
	req.ContentLength = int64(len(pngPixel))
	put, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer put.Body.Close()
	require.Less(t, put.StatusCode, 300, "upload of the attachment")
}

// cspOrigins are the origins (scheme://...) a Content-Security-Policy names, in any directive.
func cspOrigins(csp string) []string {
	var out []string
	for _, w := range strings.Fields(strings.ReplaceAll(csp, ";", " ")) {
		if strings.Contains(w, "://") || strings.HasSuffix(w, ":") || strings.Contains(w, "*") {
			out = append(out, w)
		}
	}
	return out
}

// spanFeedback is the human feedback the API has on a span.
func (f *fixture) spanFeedback(t *testing.T, tenantKey, projectID, spanID string) []map[string]any {
	t.Helper()
	var u struct {
		Items []map[string]any `json:"items"`
	}
	f.api.MustDo(t, "GET", "/projects/"+projectID+"/feedback/span/"+spanID, tenantKey, nil).Decode(t, &u)
	var human []map[string]any
	for _, it := range u.Items {
		if it["kind"] != "judge_evaluation" {
			human = append(human, it)
		}
	}
	return human
}

func TestSpanDetail(t *testing.T) {
	f := newFixture(t)
	traceID, spanID := f.seedLLMTrace(t, "support-bot", "refunds", map[string]any{"note": xssLink})
	f.seedAttachment(t, f.api.A.Key, spanID, "screenshot")
	plainTrace, plainSpans := f.seedTrace(t, f.api.A.Key, "plain", 1, func(_ int, s map[string]any) {
		s["input_data"] = `{"query":"x","limit":3}`
	})
	otherTrace, otherSpans := f.seedTrace(t, f.api.B.Key, "other", 1, nil)
	b := f.browser(t)
	csrfToken := b.signIn(t, f.api.A.Key)
	path := "/ui/traces/" + traceID + "/spans/" + spanID

	t.Run("chat, attachments and the form", func(t *testing.T) {
		p := b.get(t, path)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Equal(t, 2, strings.Count(p.Body, `data-testid="message"`), "the input's messages")
		assert.Contains(t, p.Body, `data-role="system"`)
		assert.Contains(t, p.Body, "What is in this picture? refunds")
		assert.Contains(t, p.Body, "Image (data URL, ")
		assert.NotContains(t, p.Body, "data:image", "an inline image is described, not shown")
		assert.Contains(t, p.Body, `data-testid="attachment-image"`)
		assert.Contains(t, p.Body, `data-testid="feedback-form"`)
		assert.Contains(t, p.Body, `action="`+path+`/feedback"`)
		assert.Contains(t, p.Body, `data-testid="tokens">100 in, 20 out<`)

		req, err := http.NewRequest("GET", f.srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("X-Plume-Fragment", "1")
		frag := b.do(t, req)
		require.Equal(t, http.StatusOK, frag.Status)
		assert.Regexp(t, `<img src="`+regexp.QuoteMeta(f.api.S3URL)+`/[^"]+" alt="screenshot" loading="lazy" data-testid="attachment-image">`, frag.Body,
			"the fragment shows the image from the bucket")
		assert.Equal(t, 1, strings.Count(frag.Body, "<img"))
		assert.NotContains(t, frag.Body, `data-testid="attachment-link"`)

		plain := b.get(t, "/ui/traces/"+plainTrace+"/spans/"+plainSpans[1])
		require.Equal(t, http.StatusOK, plain.Status)
		assert.Contains(t, plain.Body, `<details><summary>JSON</summary><pre data-testid="span-input">{
  &#34;query&#34;`, "other JSON pretty-printed and folded")
		assert.NotContains(t, plain.Body, `data-testid="feedback-form"`, "no prompt, no feedback")

		// Every page allows images from the dashboard and the bucket's origin, from no other.
		login := f.browser(t).get(t, "/ui/login")
		for name, pg := range map[string]page{
			"span": p, "fragment": frag, "plain span": plain, "trace": b.get(t, "/ui/traces/"+traceID),
			"traces": b.get(t, "/ui/traces"), "overview": b.get(t, "/ui/"), "not found": b.get(t, "/ui/nothing"), "sign-in": login,
		} {
			assert.Contains(t, pg.Header.Get("Content-Security-Policy"), "; img-src 'self' "+f.api.S3URL+"; ", name)
			assert.Equal(t, []string{f.api.S3URL}, cspOrigins(pg.Header.Get("Content-Security-Policy")), name)
		}
	})

	t.Run("trace roll-ups", func(t *testing.T) {
		p := b.get(t, "/ui/traces/"+traceID)
		require.Equal(t, http.StatusOK, p.Status, p.Body)
		assert.Contains(t, p.Body, `data-testid="subtree">with children: 2 spans`)
		assert.Contains(t, p.Body, `id="tree-keys"`)
		assert.NotContains(t, p.Body, "What is in this picture", "span bodies are loaded when opened")
	})

	t.Run("feedback recorded", func(t *testing.T) {
		res := b.post(t, path+"/feedback", url.Values{"csrf": {csrfToken}, "thumbs": {"down"}, "reason": {"wrong <b>refund</b> amount"}})
		require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
		assert.Equal(t, path+"#span-feedback", res.Header.Get("Location"))
		fb := f.spanFeedback(t, f.api.A.Key, f.api.A.ProjectID, spanID)
		require.Len(t, fb, 1)
		assert.Equal(t, false, fb[0]["thumbs_up"])
		assert.Equal(t, "wrong <b>refund</b> amount", fb[0]["reason"])
		p := b.get(t, path)
		assert.Contains(t, p.Body, `data-testid="feedback-reason">wrong &lt;b&gt;refund&lt;/b&gt; amount<`)
		assert.Contains(t, p.Body, "Thumbs down")

		// Sent again, it replaces the person's feedback.
		res = b.post(t, path+"/feedback", url.Values{"csrf": {csrfToken}, "thumbs": {"up"}})
		require.Equal(t, http.StatusSeeOther, res.Status, res.Body)
		fb = f.spanFeedback(t, f.api.A.Key, f.api.A.ProjectID, spanID)
		require.Len(t, fb, 1)
		assert.Equal(t, true, fb[0]["thumbs_up"])
	})

	t.Run("bad input", func(t *testing.T) {
		freshTrace, fresh := f.seedLLMTrace(t, "support-bot", "fresh", nil)
		freshPath := "/ui/traces/" + freshTrace + "/spans/" + fresh
		tests := []struct {
			name, thumbs, reason, want string
		}{
			{"no thumbs", "", "a reason kept", "Choose thumbs up or thumbs down."},
			{"bogus thumbs", "sideways", "a reason kept", "Choose thumbs up or thumbs down."},
			{"reason too long", "down", strings.Repeat("r", 16<<10+1), "reason: at most " + strconv.Itoa(16<<10) + " bytes"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := b.post(t, freshPath+"/feedback", url.Values{"csrf": {csrfToken}, "thumbs": {tt.thumbs}, "reason": {tt.reason}})
				require.Equal(t, http.StatusBadRequest, res.Status, res.Body)
				assert.Contains(t, res.Body, `data-testid="feedback-error">`+tt.want)
				assert.Contains(t, res.Body, ">"+tt.reason+"</textarea>", "the input kept")
				assert.Empty(t, f.spanFeedback(t, f.api.A.Key, f.api.A.ProjectID, fresh), "nothing stored")
			})
		}
		res := b.post(t, "/ui/traces/"+plainTrace+"/spans/"+plainSpans[1]+"/feedback", url.Values{"csrf": {csrfToken}, "thumbs": {"up"}})
		assert.Equal(t, http.StatusBadRequest, res.Status, "a span without a prompt")
		res = b.post(t, path+"/feedback", url.Values{"thumbs": {"up"}})
		assert.Equal(t, http.StatusForbidden, res.Status, "no CSRF token")
	})

	t.Run("another project's span", func(t *testing.T) {
		other := "/ui/traces/" + otherTrace + "/spans/" + otherSpans[1]
		assert.Equal(t, http.StatusNotFound, b.get(t, other).Status)
		res := b.post(t, other+"/feedback", url.Values{"csrf": {csrfToken}, "thumbs": {"down"}, "reason": {"leak"}})
		assert.Equal(t, http.StatusNotFound, res.Status, res.Body)
		assert.NotContains(t, res.Body, "other")
		assert.Empty(t, f.spanFeedback(t, f.api.B.Key, f.api.B.ProjectID, otherSpans[1]))
		// The span exists in A's trace id space only under its own trace.
		assert.Equal(t, http.StatusNotFound, b.post(t, "/ui/traces/"+plainTrace+"/spans/"+spanID+"/feedback",
			url.Values{"csrf": {csrfToken}, "thumbs": {"up"}}).Status, "a span under another trace")
	})
}
