package prompts

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// bodyLimit caps request bodies: the largest content plus JSON escaping and metadata.
const bodyLimit = 2*prompt.MaxContentBytes + prompt.MaxMetadataBytes + 4096

type server struct {
	prompts *prompt.Service
}

// toVersion is the API form of a version.
func toVersion(v prompt.Version) api.PromptVersion {
	meta := v.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage("{}")
	}
	return api.PromptVersion{
		ID: v.ID, VersionID: v.ID, PromptID: v.PromptID, TaskID: v.PromptID, ProjectID: v.ProjectID,
		Prompt: v.Slug, Content: v.Content, ContentHash: v.ContentHash, Version: v.Number,
		ModelID: v.ModelID, Model: v.ModelID, Metadata: meta,
		CreatedAt: v.CreatedAt, CreatedBy: v.CreatedBy, UpdatedAt: v.UpdatedAt, UpdatedBy: v.UpdatedBy,
	}
}

// toResolved is the API form of a version found by tag or number.
func toResolved(r prompt.Resolved) api.PromptVersion {
	b := toVersion(r.Version)
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
	who := prompt.Sticky{SessionID: q.Get(api.PromptSessionParam), UserID: q.Get(api.PromptUserParam)}
	if err := who.Check(); err != nil {
		web.Error(w, r, err)
		return
	}
	if who.SessionID != "" {
		// The session as ingestion stores it: the SDK's id and its uuid5 are one session.
		who.SessionID = trace.SessionIDOf(who.SessionID)
	}
	pid, _ := caller(r)
	res, err := s.prompts.Fetch(r.Context(), pid, r.PathValue("slug"), sel, who)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	body := toResolved(res)
	if sv := res.Served; sv != nil {
		// A split's answer depends on the caller (or on chance): no cache may keep it, let
		// alone share it between users.
		w.Header().Set("Cache-Control", "private, no-store")
		body.ABChoice = &api.PromptChoice{ChoiceName: sv.Test, VariantKey: sv.Variant.Key(), VariantValue: sv.Variant.VersionID}
		if sv.ChoiceID != "" {
			body.ABChoice.ABChoiceID = &sv.ChoiceID
		}
	}
	web.OK(w, body)
}

func (s *server) ensureVersion(w http.ResponseWriter, r *http.Request) {
	var req api.EnsureVersionRequest
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
	body := toVersion(v)
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
	web.OK(w, toVersion(v))
}

func (s *server) latestVersion(w http.ResponseWriter, r *http.Request) {
	pid, _ := caller(r)
	v, err := s.prompts.Latest(r.Context(), pid, r.PathValue("task"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toResolved(prompt.Resolved{Version: v, Tag: prompt.LatestTag, IsLatest: true}))
}

func (s *server) versionModel(w http.ResponseWriter, r *http.Request) {
	pid, _ := caller(r)
	b, err := s.prompts.Model(r.Context(), pid, r.PathValue("version_id"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, api.VersionModel{VersionID: b.VersionID, Model: b.ModelID, ModelID: b.ModelID, Provider: b.Provider})
}

// listPrompts serves GET /projects/{project_id}/prompts: the prompts with their latest versions,
// as many as fit one answer from ?offset= (web.List).
func (s *server) listPrompts(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	list, err := s.prompts.List(r.Context(), pid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]api.Prompt, len(list))
	for i, p := range list {
		out[i] = api.Prompt{
			ID: p.ID, Slug: p.Slug, ProjectID: p.ProjectID, LatestVersion: toVersion(p.Latest),
			CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
		}
	}
	web.List(w, r, out, web.Array)
}

// listVersions serves GET /projects/{project_id}/prompts/{slug}/versions, oldest first, as many as
// fit one answer from ?offset= (web.List).
func (s *server) listVersions(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	versions, err := s.prompts.Versions(r.Context(), pid, r.PathValue("slug"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]api.PromptVersion, len(versions))
	for i, v := range versions {
		out[i] = toVersion(v)
	}
	web.List(w, r, out, web.Array)
}

// toTag is the API form of a tag, with its split while it runs at now.
func toTag(t prompt.Tag, now time.Time) api.PromptTag {
	out := api.PromptTag{Tag: t.Name, Version: t.Version, VersionID: t.VersionID, UpdatedAt: t.UpdatedAt, UpdatedBy: t.UpdatedBy}
	if t.Split != nil && t.Split.Running(now) {
		sp := toSplit(*t.Split, now)
		out.Split = &sp
	}
	return out
}

// toSplit is the API form of a split.
func toSplit(sp prompt.Split, now time.Time) api.PromptSplit {
	out := api.PromptSplit{Test: sp.Test, Prompt: sp.Slug, Tag: sp.Tag, Status: api.ABRunning, DurationDays: sp.DurationDays,
		StartedAt: sp.StartedAt, EndsAt: sp.EndsAt, StartedBy: sp.StartedBy}
	if !sp.Running(now) {
		out.Status = api.ABCompleted
	}
	for _, v := range sp.Variants {
		out.Variants = append(out.Variants, api.PromptSplitVariant{Version: api.WholeNumber(v.Version), VersionID: v.VersionID, Weight: v.Weight, Key: v.Key()})
	}
	return out
}

// listTags serves GET /projects/{project_id}/prompts/{slug}/tags, as many as fit one answer from
// ?offset= (web.List).
func (s *server) listTags(w http.ResponseWriter, r *http.Request) {
	pid := auth.ProjectID(r)
	tags, err := s.prompts.Tags(r.Context(), pid, r.PathValue("slug"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	out := make([]api.PromptTag, len(tags))
	now := s.prompts.Now()
	for i, t := range tags {
		out[i] = toTag(t, now)
	}
	web.List(w, r, out, web.Array)
}

// tagAction serves POST .../tags/{tag}:pin, {tag}:split and {tag}:end-split: "{tag}:action"
// is one path segment, so the wildcard takes it whole.
func (s *server) tagAction(w http.ResponseWriter, r *http.Request) {
	tag, action, _ := strings.Cut(r.PathValue("tag_action"), ":")
	switch action {
	case "pin":
		s.pinTag(w, r, tag)
	case "split":
		s.splitTag(w, r, tag)
	case "end-split":
		s.endSplit(w, r, tag)
	default:
		web.NotFound(w, r)
	}
}

// splitTag serves POST .../tags/{tag}:split (api.PromptSplitRequest): the tag's traffic is
// shared between versions for the split's duration, as the A/B test it creates.
func (s *server) splitTag(w http.ResponseWriter, r *http.Request, tag string) {
	var req api.PromptSplitRequest
	if err := web.Decode(w, r, &req, web.DefaultBodyLimit); err != nil {
		web.Error(w, r, err)
		return
	}
	d := req.DurationDays
	if d != math.Trunc(d) || d < 1 || d > prompt.MaxSplitDays {
		web.Error(w, r, errs.Invalid("duration_days must be a whole number from 1 to %d", prompt.MaxSplitDays))
		return
	}
	in := prompt.SplitInput{Name: req.Name, DurationDays: int(d)}
	for _, v := range req.Variants {
		in.Variants = append(in.Variants, prompt.SplitVariant{Version: int(v.Version), Weight: v.Weight})
	}
	_, uid := caller(r)
	sp, err := s.prompts.StartSplit(r.Context(), auth.ProjectID(r), r.PathValue("slug"), tag, in, uid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toSplit(sp, s.prompts.Now()))
}

// endSplit serves POST .../tags/{tag}:end-split: the tag serves its own version again and the
// split's A/B test completes.
func (s *server) endSplit(w http.ResponseWriter, r *http.Request, tag string) {
	sp, err := s.prompts.EndSplit(r.Context(), auth.ProjectID(r), r.PathValue("slug"), tag)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toSplit(sp, sp.EndsAt))
}

// pinTag serves POST .../tags/{tag}:pin with body {"version": n} and optionally
// "expected_version" (the tag's version now, 0 for a new tag; 409 otherwise).
func (s *server) pinTag(w http.ResponseWriter, r *http.Request, tag string) {
	pid := auth.ProjectID(r)
	var req api.PinRequest
	if err := web.Decode(w, r, &req, web.DefaultBodyLimit); err != nil {
		web.Error(w, r, err)
		return
	}
	if req.Version == nil {
		web.Error(w, r, errs.Invalid("version is required"))
		return
	}
	_, uid := caller(r)
	var res prompt.PinResult
	var err error
	if req.ExpectedVersion != nil {
		res, err = s.prompts.PinIfAt(r.Context(), pid, r.PathValue("slug"), tag, int(*req.Version), int(*req.ExpectedVersion), uid)
	} else {
		res, err = s.prompts.Pin(r.Context(), pid, r.PathValue("slug"), tag, int(*req.Version), uid)
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	body := api.PinResult{PromptTag: toTag(res.Tag, time.Time{}), Prompt: res.Slug}
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
	var req api.BindModelRequest
	if err := web.Decode(w, r, &req, web.DefaultBodyLimit); err != nil {
		web.Error(w, r, err)
		return
	}
	if req.ModelID == nil {
		web.Error(w, r, errs.Invalid("model_id is required (null unbinds the model)"))
		return
	}
	var model *string
	if err := json.Unmarshal(req.ModelID, &model); err != nil {
		web.Error(w, r, errs.Invalid("model_id must be a string or null"))
		return
	}
	_, uid := caller(r)
	v, err := s.prompts.BindModel(r.Context(), pid, r.PathValue("slug"), n, model, uid)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toVersion(v))
}
