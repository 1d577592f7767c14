package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/plumehq/plume/api"
)

// EnsurePromptVersion returns the version of prompt slug with content (and model, metadata),
// creating it when no version has that content (spec §4.1). It is idempotent: the same content
// always gives the same version, so it is retried like a read.
func (c *Client) EnsurePromptVersion(ctx context.Context, slug string, req api.EnsureVersionRequest) (api.PromptVersion, error) {
	var v api.PromptVersion
	err := c.do(ctx, call{method: http.MethodPost, path: "/v1/tasks/" + url.PathEscape(slug) + "/prompt/versions/ensure", body: req, idempotent: true}, &v)
	return v, err
}

// PromptSelector picks a version: by Version number, else by Tag, else the latest. SessionID
// and UserID make a split tag's answer sticky: the same user (else session) gets the same
// version for the whole split, and the choice is recorded on the session (else the user);
// see docs/signals.md, "Prompt versions as variants".
type PromptSelector struct {
	Version   int
	Tag       string
	SessionID string
	UserID    string
}

// PromptVersion reads a version of prompt slug (GET /v1/prompts/{slug}): errors.Is(err,
// ErrNotFound) when the prompt, version or tag does not exist.
func (c *Client) PromptVersion(ctx context.Context, slug string, sel PromptSelector) (api.PromptVersion, error) {
	q := url.Values{}
	switch {
	case sel.Version > 0:
		q.Set("version", strconv.Itoa(sel.Version))
	case sel.Tag != "":
		q.Set("tag", sel.Tag)
	}
	if sel.SessionID != "" {
		q.Set(api.PromptSessionParam, sel.SessionID)
	}
	if sel.UserID != "" {
		q.Set(api.PromptUserParam, sel.UserID)
	}
	var v api.PromptVersion
	err := c.do(ctx, call{method: http.MethodGet, path: "/v1/prompts/" + url.PathEscape(slug), query: q}, &v)
	return v, err
}

// LatestPromptVersion reads the newest version of prompt slug.
func (c *Client) LatestPromptVersion(ctx context.Context, slug string) (api.PromptVersion, error) {
	var v api.PromptVersion
	err := c.do(ctx, call{method: http.MethodGet, path: "/v1/tasks/" + url.PathEscape(slug) + "/prompt/latest"}, &v)
	return v, err
}

// PromptVersionByHash reads the version of prompt slug whose content hash is hash.
func (c *Client) PromptVersionByHash(ctx context.Context, slug, hash string) (api.PromptVersion, error) {
	var v api.PromptVersion
	err := c.do(ctx, call{method: http.MethodGet, path: "/v1/tasks/" + url.PathEscape(slug) + "/prompt/versions/by-hash/" + url.PathEscape(hash)}, &v)
	return v, err
}

// VersionModel reads the model bound to a prompt version.
func (c *Client) VersionModel(ctx context.Context, versionID string) (api.VersionModel, error) {
	var m api.VersionModel
	err := c.do(ctx, call{method: http.MethodGet, path: "/v1/prompt-versions/" + url.PathEscape(versionID) + "/model"}, &m)
	return m, err
}

// Prompts lists the project's prompts, each with its newest version.
func (c *Client) Prompts(ctx context.Context) ([]api.Prompt, error) {
	path, err := c.projectPath("/prompts")
	if err != nil {
		return nil, err
	}
	_, out, err := whole(ctx, c, path, func(p *[]api.Prompt) []api.Prompt { return *p })
	return out, err
}

// PromptVersions lists the versions of prompt slug, oldest first.
func (c *Client) PromptVersions(ctx context.Context, slug string) ([]api.PromptVersion, error) {
	path, err := c.projectPath("/prompts/%s/versions", url.PathEscape(slug))
	if err != nil {
		return nil, err
	}
	_, out, err := whole(ctx, c, path, func(p *[]api.PromptVersion) []api.PromptVersion { return *p })
	return out, err
}

// PromptTags lists the tags of prompt slug.
func (c *Client) PromptTags(ctx context.Context, slug string) ([]api.PromptTag, error) {
	path, err := c.projectPath("/prompts/%s/tags", url.PathEscape(slug))
	if err != nil {
		return nil, err
	}
	_, out, err := whole(ctx, c, path, func(p *[]api.PromptTag) []api.PromptTag { return *p })
	return out, err
}

// PinTag points tag of prompt slug at version: how a version is deployed. Pinning a tag where it
// points already changes nothing, so it is retried like a read. With IfTagAt the pin happens
// only when the tag has not moved (ErrConflict otherwise).
func (c *Client) PinTag(ctx context.Context, slug, tag string, version int, opts ...PinOption) (api.PinResult, error) {
	path, err := c.projectPath("/prompts/%s/tags/%s:pin", url.PathEscape(slug), url.PathEscape(tag))
	if err != nil {
		return api.PinResult{}, err
	}
	n := api.WholeNumber(version)
	req := api.PinRequest{Version: &n}
	for _, o := range opts {
		o(&req)
	}
	var out api.PinResult
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: req, idempotent: true}, &out)
	return out, err
}

// SplitTag splits tag's traffic between versions of prompt slug for req.DurationDays (a prompt
// A/B test, reported by ABTest(ctx, split.Test)). ErrConflict when the tag has a running split
// or the name is taken.
func (c *Client) SplitTag(ctx context.Context, slug, tag string, req api.PromptSplitRequest) (api.PromptSplit, error) {
	path, err := c.projectPath("/prompts/%s/tags/%s:split", url.PathEscape(slug), url.PathEscape(tag))
	if err != nil {
		return api.PromptSplit{}, err
	}
	var out api.PromptSplit
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: req}, &out)
	return out, err
}

// EndSplit ends tag's running split: the tag serves its own version again and the split's test
// completes. ErrNotFound when the tag has no running split.
func (c *Client) EndSplit(ctx context.Context, slug, tag string) (api.PromptSplit, error) {
	path, err := c.projectPath("/prompts/%s/tags/%s:end-split", url.PathEscape(slug), url.PathEscape(tag))
	if err != nil {
		return api.PromptSplit{}, err
	}
	var out api.PromptSplit
	err = c.do(ctx, call{method: http.MethodPost, path: path}, &out)
	return out, err
}

// PinOption sets a pin request up.
type PinOption func(*api.PinRequest)

// IfTagAt makes a pin conditional on where the tag points now: at version expected, or nowhere
// when expected is 0. A tag elsewhere fails the pin with ErrConflict (its message names the
// tag's version) and changes nothing; a tag already at the pinned version passes, so the retry
// of a pin whose answer was lost succeeds. This is how a confirm step ("production moves from 3
// to 4") stays true when two people deploy at once.
func IfTagAt(expected int) PinOption {
	return func(r *api.PinRequest) {
		n := api.WholeNumber(expected)
		r.ExpectedVersion = &n
	}
}

// BindModel binds model to version n of prompt slug; nil unbinds it.
func (c *Client) BindModel(ctx context.Context, slug string, n int, model *string) (api.PromptVersion, error) {
	path, err := c.projectPath("/prompts/%s/versions/%d", url.PathEscape(slug), n)
	if err != nil {
		return api.PromptVersion{}, err
	}
	raw := json.RawMessage("null")
	if model != nil {
		raw, _ = json.Marshal(*model)
	}
	var out api.PromptVersion
	err = c.do(ctx, call{method: http.MethodPatch, path: path, body: api.BindModelRequest{ModelID: raw}, idempotent: true}, &out)
	return out, err
}
