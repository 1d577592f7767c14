package prompts_test

import (
	"bytes"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/web"
)

// FuzzEnsureBody feeds arbitrary bytes through the ensure decoder and validation: every input
// either fails with a client error code or yields a version whose content is normalised and
// whose hash is the content's.
func FuzzEnsureBody(f *testing.F) {
	for _, seed := range []string{
		`{"content":"hi","content_hash":null,"metadata":null,"model_id":null}`,
		`{"content":"a\r\nb  ","metadata":{"k":[1,2,{"x":null}]},"model_id":"gpt-4o"}`,
		`{"content":"x","content_hash":"2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}`,
		`{"content":5}`, `[]`, `{"content":"\ud800"}`, `{"content":"` + "\u00a0" + `"}`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", ensurePath, bytes.NewReader(body))
		var req api.EnsureVersionRequest
		err := web.Decode(httptest.NewRecorder(), r, &req, prompts.BodyLimit)
		if err == nil {
			var v prompt.Version
			v, err = prompt.PrepareVersion("p", "support-bot", prompt.EnsureInput{
				Content: req.Content, ContentHash: req.ContentHash, ModelID: req.ModelID, Metadata: req.Metadata,
			}, "u", time.Now())
			if err == nil {
				if prompt.Normalize(v.Content) != v.Content || prompt.Hash(v.Content) != v.ContentHash {
					t.Fatalf("version not normalised or mis-hashed: %+v", v)
				}
				return
			}
		}
		if code := errs.CodeOf(err); code != errs.CodeInvalid && code != errs.CodeTooLarge {
			t.Fatalf("unexpected error code %s: %v", code, err)
		}
	})
}
