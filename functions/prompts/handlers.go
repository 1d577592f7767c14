package prompts

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/web"
)

// bodyLimit caps request bodies: the largest content plus JSON escaping and metadata.
const bodyLimit = 2*prompt.MaxContentBytes + prompt.MaxMetadataBytes + 4096

type server struct {
	prompts *prompt.Service
}

// versionBody is a prompt version as every prompt endpoint answers it: the spec's fields plus
// what the zeroeval SDKs read (version_id, prompt, task_id, model, created_by ...), so that SDKs
// pointed at Plume work unchanged (COMPAT.md "Prompt responses").
type versionBody struct {
	ID          string          `json:"id"`
	VersionID   string          `json:"version_id"`
	PromptID    string          `json:"prompt_id"`
	TaskID      string          `json:"task_id"`
	ProjectID   string          `json:"project_id"`
	Prompt      string          `json:"prompt"`
	Content     string          `json:"content"`
	ContentHash string          `json:"content_hash"`
	Version     int             `json:"version"`
	ModelID     *string         `json:"model_id"`
	Model       *string         `json:"model"`
	Metadata    json.RawMessage `json:"metadata"`
	Tag         *string         `json:"tag,omitempty"`
	IsLatest    *bool           `json:"is_latest,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
	CreatedBy   string          `json:"created_by,omitempty"`
	UpdatedAt   time.Time       `json:"updated_at"`
	UpdatedBy   string          `json:"updated_by,omitempty"`
}

func toVersionBody(v prompt.Version) versionBody {
	meta := v.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage("{}")
	}
	return versionBody{
		ID: v.ID, VersionID: v.ID, PromptID: v.PromptID, TaskID: v.PromptID, ProjectID: v.ProjectID,
		Prompt: v.Slug, Content: v.Content, ContentHash: v.ContentHash, Version: v.Number,
		ModelID: v.ModelID, Model: v.ModelID, Metadata: meta,
		CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy, UpdatedAt: v.UpdatedAt, UpdatedBy: v.UpdatedBy,
	}
}

func toResolvedBody(r prompt.Resolved) versionBody {
	b := toVersionBody(r.Version)
	b.IsLatest = &r.IsLatest
	if r.Tag != "" {
		b.Tag = &r.Tag
	}
	return b
}

// caller returns the project and user id of the request's key.
func caller(r *http.Request) (projectID, userID string) {
	p, _ := auth.FromContext(r.Context())
	return p.ProjectID, p.User.ID
}

// getPrompt serves GET /v1/prompts/{slug}?version=&tag=. A version number wins over a tag when
// both are given; the default is the tag "latest".
func (s *server) getPrompt(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var sel prompt.Selector
	if raw := q.Get("version"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			web.Error(w, r, errs.Invalid("version must be a positive integer, not %q", raw))
			return
		}
		sel.Number = n
	}
	sel.Tag = q.Get("tag")
	pid, _ := caller(r)
	res, err := s.prompts.Get(r.Context(), pid, r.PathValue("slug"), sel)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toResolvedBody(res))
}

// ensureRequest is the ensure body. Nulls are accepted for every optional field.
type ensureRequest struct {
	Content     *string         `json:"content"`
	ContentHash *string         `json:"content_hash"`
	ModelID     *string         `json:"model_id"`
	Metadata    json.RawMessage `json:"metadata"`
}

func (s *server) ensureVersion(w http.ResponseWriter, r *http.Request) {
	var req ensureRequest
	if err := web.Decode(w, r, &req, bodyLimit); err != nil {
		web.Error(w, r, err)
		return
	}
	pid, uid := caller(r)
	v, created, err := s.prompts.Ensure(r.Context(), pid, r.PathValue("task"), prompt.EnsureInput{
		Content: req.Content, ContentHash: req.ContentHash, ModelID: req.ModelID, Metadata: req.Metadata,
	}, uid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	body := toVersionBody(v)
	if created {
		latest, tag := true, prompt.LatestTag
		body.IsLatest, body.Tag = &latest, &tag
	}
	w.Header().Set("X-Plume-Created", strconv.FormatBool(created))
	web.OK(w, body)
}

func (s *server) versionByHash(w http.ResponseWriter, r *http.Request) {
	pid, _ := caller(r)
	v, err := s.prompts.ByHash(r.Context(), pid, r.PathValue("task"), r.PathValue("hash"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toVersionBody(v))
}

func (s *server) latestVersion(w http.ResponseWriter, r *http.Request) {
	pid, _ := caller(r)
	v, err := s.prompts.Latest(r.Context(), pid, r.PathValue("task"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toResolvedBody(prompt.Resolved{Version: v, Tag: prompt.LatestTag, IsLatest: true}))
}

// modelBody answers the model endpoint with both the spec's model_id and the SDKs' model.
type modelBody struct {
	VersionID string  `json:"version_id"`
	Model     *string `json:"model"`
	ModelID   *string `json:"model_id"`
	Provider  *string `json:"provider"`
}

func (s *server) versionModel(w http.ResponseWriter, r *http.Request) {
	pid, _ := caller(r)
	b, err := s.prompts.Model(r.Context(), pid, r.PathValue("version_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, modelBody{VersionID: b.VersionID, Model: b.ModelID, ModelID: b.ModelID, Provider: b.Provider})
}

// promptBody is one entry of the prompt list.
type promptBody struct {
	ID            string      `json:"id"`
	Slug          string      `json:"slug"`
	ProjectID     string      `json:"project_id"`
	LatestVersion versionBody `json:"latest_version"`
	CreatedAt     time.Time   `json:"created_at"`
	UpdatedAt     time.Time   `json:"updated_at"`
}

func (s *server) listPrompts(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	list, err := s.prompts.List(r.Context(), pid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]promptBody, len(list))
	for i, p := range list {
		out[i] = promptBody{
			ID: p.ID, Slug: p.Slug, ProjectID: p.ProjectID, LatestVersion: toVersionBody(p.Latest),
			CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		}
	}
	web.OK(w, out)
}

func (s *server) listVersions(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	versions, err := s.prompts.Versions(r.Context(), pid, r.PathValue("slug"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]versionBody, len(versions))
	for i, v := range versions {
		out[i] = toVersionBody(v)
	}
	web.OK(w, out)
}

// tagBody is a tag entry: the spec's {tag, version} plus the version id and last change.
type tagBody struct {
	Tag       string    `json:"tag"`
	Version   int       `json:"version"`
	VersionID string    `json:"version_id"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by,omitempty"`
}

func toTagBody(t prompt.Tag) tagBody {
	return tagBody{Tag: t.Name, Version: t.Version, VersionID: t.VersionID, UpdatedAt: t.UpdatedAt, UpdatedBy: t.UpdatedBy}
}

func (s *server) listTags(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	tags, err := s.prompts.Tags(r.Context(), pid, r.PathValue("slug"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]tagBody, len(tags))
	for i, t := range tags {
		out[i] = toTagBody(t)
	}
	web.OK(w, out)
}

// pinBody answers a pin: the tag entry, the prompt and the version the tag left.
type pinBody struct {
	tagBody
	Prompt          string `json:"prompt"`
	PreviousVersion *int   `json:"previous_version"`
}

// pinTag serves POST .../tags/{tag}:pin with body {"version": n}.
func (s *server) pinTag(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	tag, ok := strings.CutSuffix(r.PathValue("tag_action"), ":pin")
	if !ok {
		web.NotFound(w, r)
		return
	}
	var req struct {
		Version *wholeNumber `json:"version"`
	}
	if err := web.Decode(w, r, &req, web.DefaultBodyLimit); err != nil {
		web.Error(w, r, err)
		return
	}
	if req.Version == nil {
		web.Error(w, r, errs.Invalid("version is required"))
		return
	}
	_, uid := caller(r)
	res, err := s.prompts.Pin(r.Context(), pid, r.PathValue("slug"), tag, int(*req.Version), uid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	body := pinBody{tagBody: toTagBody(res.Tag), Prompt: res.Slug}
	if res.Previous > 0 {
		body.PreviousVersion = &res.Previous
	}
	web.OK(w, body)
}

// bindModel serves PATCH .../versions/{version} with body {"model_id": "..." | null}.
func (s *server) bindModel(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	n, err := strconv.Atoi(r.PathValue("version"))
	if err != nil || n < 1 {
		web.Error(w, r, errs.Invalid("version must be a positive integer, not %q", r.PathValue("version")))
		return
	}
	var req map[string]json.RawMessage
	if err := web.Decode(w, r, &req, web.DefaultBodyLimit); err != nil {
		web.Error(w, r, err)
		return
	}
	raw, ok := req["model_id"]
	if !ok {
		web.Error(w, r, errs.Invalid("model_id is required (null unbinds the model)"))
		return
	}
	var model *string
	if err := json.Unmarshal(raw, &model); err != nil {
		web.Error(w, r, errs.Invalid("model_id must be a string or null"))
		return
	}
	_, uid := caller(r)
	v, err := s.prompts.BindModel(r.Context(), pid, r.PathValue("slug"), n, model, uid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toVersionBody(v))
}

// wholeNumber decodes a JSON integer, an integral float such as 3.0, or a string holding one.
type wholeNumber int

func (n *wholeNumber) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int(f)) || f > 1<<31 || f < -(1<<31) {
		return errs.Invalid("version must be an integer, not %s", b)
	}
	*n = wholeNumber(f)
	return nil
}
