package client

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/plumehq/plume/api"
)

// Errors of the prompt helpers (spec §4.8 and §7). An error that comes from an API answer also
// matches the answer's sentinel: errors.Is(err, ErrNotFound) holds with ErrPromptNotFound.
var (
	// ErrPromptRequest is the spec's PromptRequestError: Prompt with From latest found no
	// version of the task.
	ErrPromptRequest = errors.New("plume: prompt request failed")
	// ErrPromptNotFound is the spec's PromptNotFoundError: no version has the hash given as
	// From, or GetPrompt found no such prompt, version or tag and had no fallback.
	ErrPromptNotFound = errors.New("plume: prompt not found")
	// ErrPromptUsage is a call the helpers refuse before asking the API: a bad combination of
	// Content and From, a name or tag that is not [a-z0-9-]+, a variable name that is not an
	// identifier.
	ErrPromptUsage = errors.New("plume: invalid prompt arguments")
	// ErrMissingVariable is a {{variable}} left without a value by a render with MissingError.
	ErrMissingVariable = errors.New("plume: prompt variable has no value")
)

// From values of a PromptRequest; any other non-empty From is a content hash.
const (
	FromLatest   = "latest"
	FromExplicit = "explicit"
)

// PromptRequest is what Prompt resolves (spec §4.8).
type PromptRequest struct {
	// Name is the task, which is also the prompt's slug: [a-z0-9-]+. Required.
	Name string
	// Content is the prompt text the application ships ("": none).
	Content string
	// From is "" (the default mode), FromLatest, FromExplicit or a 64-character lowercase hex
	// SHA-256 content hash.
	From string
	// Variables are the values of the {{var}} tokens. Prompt does not substitute them: it
	// writes them into the linkage metadata, and the integrations substitute them when the
	// prompt is sent to a model.
	Variables map[string]string
}

// Prompt resolves a prompt version as spec §4.8 says and returns its content prefixed with the
// hidden linkage metadata (see api.Linkage), which the integrations strip, read and record so that
// a completion is linked to the version. The modes:
//
//   - Content alone (default): the latest version of the task if one exists, else Content,
//     registered through ensure. One GET of the latest version (cached as the cache rules say)
//     when it exists; when it does not, ensure is called at once, with no model to inherit.
//   - From FromLatest, no Content: the latest version; ErrPromptRequest when there is none.
//   - From a hash, no Content: that version; ErrPromptNotFound when no version has the hash.
//   - From FromExplicit with Content: always Content's version. It is read by its hash (an
//     immutable, cached read); only when it does not exist yet is it ensured, bound to the
//     latest version's model as the zeroeval SDKs bind it.
//
// Content with another From, or neither Content nor From, is ErrPromptUsage. Errors of the API
// (after the client's retries) are returned as they are.
func (c *Client) Prompt(ctx context.Context, req PromptRequest) (string, error) {
	v, err := c.resolvePrompt(ctx, req)
	if err != nil {
		return "", err
	}
	return linkageOf(req.Name, req.Variables, v).Decorate(v.Content, c.prompt.style), nil
}

func (c *Client) resolvePrompt(ctx context.Context, req PromptRequest) (api.PromptVersion, error) {
	if err := req.check(); err != nil {
		return api.PromptVersion{}, err
	}
	latest := promptKey{slug: req.Name, kind: kindLatest}
	switch req.From {
	case FromExplicit:
		return c.explicitPrompt(ctx, req.Name, req.Content)
	case FromLatest:
		v, err := c.prompt.cache.get(ctx, latest)
		if errors.Is(err, ErrNotFound) {
			err = fmt.Errorf("%w: task %q has no version yet (publish one, or pass Content): %w", ErrPromptRequest, req.Name, err)
		}
		return v, err
	case "":
		v, err := c.prompt.cache.get(ctx, latest)
		if !errors.Is(err, ErrNotFound) {
			return v, err
		}
		// No version yet, so no model to inherit: the zeroeval SDKs' second read of the
		// latest version before ensuring would find nothing either.
		norm := normalizePromptText(req.Content)
		return c.ensurePrompt(ctx, req.Name, norm, hashPromptText(norm), nil)
	default:
		v, err := c.prompt.cache.get(ctx, promptKey{slug: req.Name, kind: kindHash, s: req.From})
		if errors.Is(err, ErrNotFound) {
			err = fmt.Errorf("%w: task %q has no version with hash %s: %w", ErrPromptNotFound, req.Name, req.From, err)
		}
		return v, err
	}
}

// explicitPrompt returns the version of content, ensuring it when it does not exist yet.
func (c *Client) explicitPrompt(ctx context.Context, name, content string) (api.PromptVersion, error) {
	norm := normalizePromptText(content)
	hash := hashPromptText(norm)
	v, err := c.prompt.cache.get(ctx, promptKey{slug: name, kind: kindHash, s: hash})
	if !errors.Is(err, ErrNotFound) {
		return v, err
	}
	// A new version inherits the model bound to the latest one, as the SDKs make it; when the
	// latest cannot be read it is ensured without one, as they do too.
	var model *string
	if latest, err := c.prompt.cache.get(ctx, promptKey{slug: name, kind: kindLatest}); err == nil {
		model = cmp.Or(latest.ModelID, latest.Model)
	}
	return c.ensurePrompt(ctx, name, norm, hash, model)
}

// ensurePrompt ensures the version of normalised content and caches it by its hash.
func (c *Client) ensurePrompt(ctx context.Context, name, norm, hash string, model *string) (api.PromptVersion, error) {
	v, err := c.EnsurePromptVersion(ctx, name, api.EnsureVersionRequest{Content: &norm, ContentHash: &hash, ModelID: model})
	if err != nil {
		return v, err
	}
	byHash := v
	byHash.Tag, byHash.IsLatest = nil, nil // as the by-hash route answers it
	c.prompt.cache.put(promptKey{slug: name, kind: kindHash, s: v.ContentHash}, byHash)
	return v, nil
}

// check refuses the combinations spec §4.8 calls errors.
func (r PromptRequest) check() error {
	switch {
	case !isPromptSlug(r.Name):
		return fmt.Errorf("%w: name %q is not a task name ([a-z0-9-]+)", ErrPromptUsage, r.Name)
	case r.Content == "" && r.From == "":
		return fmt.Errorf("%w: pass Content, From, or both with From %q", ErrPromptUsage, FromExplicit)
	case r.From == FromExplicit && r.Content == "":
		return fmt.Errorf("%w: From %q needs Content", ErrPromptUsage, FromExplicit)
	case r.From != "" && r.From != FromExplicit && r.Content != "":
		return fmt.Errorf("%w: Content goes with From %q only, not with From %q", ErrPromptUsage, FromExplicit, r.From)
	case r.From != "" && r.From != FromExplicit && r.From != FromLatest && !isContentHash(r.From):
		return fmt.Errorf("%w: From %q is not %q, %q or a 64-character lowercase hex SHA-256", ErrPromptUsage, r.From, FromLatest, FromExplicit)
	case r.Content != "" && normalizePromptText(r.Content) == "":
		return fmt.Errorf("%w: Content is empty once normalised", ErrPromptUsage)
	}
	return nil
}

// linkageOf is the linkage metadata of version v resolved for task.
func linkageOf(task string, variables map[string]string, v api.PromptVersion) api.Linkage {
	return api.Linkage{
		Task: task, Variables: variables, PromptSlug: v.Prompt, PromptVersion: v.Version,
		PromptVersionID: cmp.Or(v.VersionID, v.ID), ContentHash: v.ContentHash,
	}
}

// PromptSource tells where a ResolvedPrompt's content comes from.
type PromptSource string

// Sources of a ResolvedPrompt.
const (
	SourceAPI      PromptSource = "api"
	SourceFallback PromptSource = "fallback"
)

// MissingPolicy says what rendering does with a {{variable}} that has no value.
type MissingPolicy int

// Missing-variable policies.
const (
	// MissingError fails the render with ErrMissingVariable (the default).
	MissingError MissingPolicy = iota
	// MissingIgnore leaves the token, written {{name}}, as the SDKs' "leave" does.
	MissingIgnore
)

// GetPromptOptions are GetPrompt's options (spec §4.8's fetch helper). The zero value asks for
// the default tag, rendered, through the cache.
type GetPromptOptions struct {
	// Version selects a version by number (immutable, so cached until evicted). It wins over
	// Tag.
	Version int
	// Tag selects the version a tag points at (cached for the cache's TTL). The default is
	// PLUME_PROMPT_TAG or ZEROEVAL_PROMPT_TAG when set, else "production" when PLUME_ENV or
	// ZEROEVAL_ENV is "production", else "latest".
	Tag string
	// Fallback is the content served, with Source SourceFallback, when the prompt, version or
	// tag does not exist, or when the API cannot be reached (a network error, a timeout or a
	// 5xx) and the cache has nothing to serve. "" is no fallback. Other errors (a refused
	// key, a bad request) are returned.
	Fallback string
	// Variables are substituted for the {{name}} tokens when not nil; a nil map renders
	// nothing, an empty one makes every token missing. Names are identifiers
	// ([a-zA-Z_][a-zA-Z0-9_]*); \{{ and \}} stand for literal {{ and }}.
	Variables map[string]string
	// TaskName, when set, prefixes the content with the linkage metadata of that task.
	TaskName string
	// NoRender leaves the tokens as they are even with Variables (the spec's render=false).
	NoRender bool
	// Missing is what rendering does with a token without a value.
	Missing MissingPolicy
	// NoCache reads from the API, neither reading nor filling the cache.
	NoCache bool
	// SessionID and UserID make a split tag's answer sticky (PromptSelector says how); the
	// cache then keeps an entry per tag and ids.
	SessionID string
	UserID    string
	// Timeout bounds this call (0: the client's timeout alone).
	Timeout time.Duration
}

// ResolvedPrompt is a prompt as GetPrompt returns it. Fields that do not apply are zero: a
// fallback has only Content and Source.
type ResolvedPrompt struct {
	Content   string
	Version   int
	VersionID string
	// Tag is the tag the version was selected by ("" when selected by number).
	Tag      string
	IsLatest bool
	// Model is the model bound to the version ("": none), as stored: "openai/gpt-4o-mini", not
	// the Python SDK's "zeroeval/..." form.
	Model string
	// Metadata is the version's metadata object. It is shared with the cache: read only.
	Metadata    json.RawMessage
	Source      PromptSource
	ContentHash string
	// ABChoice is the variant a split tag served, to record in the span's ab_choices.
	ABChoice *api.PromptChoice
}

// GetPrompt reads a version of prompt slug by number or tag (GET /v1/prompts/{slug}), through
// the prompt cache, and renders it (spec §4.8). opts may be nil. Errors: ErrPromptUsage for a
// slug or tag that is not [a-z0-9-]+, a negative version or a variable name that is not an
// identifier; ErrPromptNotFound (with ErrNotFound) when the prompt, version or tag does not
// exist and there is no Fallback; ErrMissingVariable; the API's errors otherwise.
func (c *Client) GetPrompt(ctx context.Context, slug string, opts *GetPromptOptions) (ResolvedPrompt, error) {
	var o GetPromptOptions
	if opts != nil {
		o = *opts
	}
	key, err := c.getPromptKey(slug, o)
	if err != nil {
		return ResolvedPrompt{}, err
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	var v api.PromptVersion
	if o.NoCache {
		v, err = c.fetchPrompt(ctx, key)
	} else {
		v, err = c.prompt.cache.get(ctx, key)
	}
	var p ResolvedPrompt
	switch {
	case err == nil:
		p = resolvedPrompt(v)
	case o.Fallback != "" && (errors.Is(err, ErrNotFound) || isFault(err)):
		p = ResolvedPrompt{Content: o.Fallback, Source: SourceFallback}
	case errors.Is(err, ErrNotFound):
		return ResolvedPrompt{}, fmt.Errorf("%w: %s: %w", ErrPromptNotFound, key, err)
	default:
		return ResolvedPrompt{}, err
	}
	if o.Variables != nil && !o.NoRender {
		if p.Content, err = renderPrompt(p.Content, o.Variables, o.Missing); err != nil {
			return ResolvedPrompt{}, fmt.Errorf("render %s: %w", key, err)
		}
	}
	if o.TaskName != "" {
		l := api.Linkage{Task: o.TaskName, Variables: o.Variables, PromptSlug: slug,
			PromptVersion: p.Version, PromptVersionID: p.VersionID, ContentHash: p.ContentHash}
		p.Content = l.Decorate(p.Content, c.prompt.style)
	}
	return p, nil
}

// getPromptKey is the cache key of a GetPrompt call, or why the call is refused.
func (c *Client) getPromptKey(slug string, o GetPromptOptions) (promptKey, error) {
	tag := cmp.Or(o.Tag, c.prompt.defaultTag)
	switch {
	case !isPromptSlug(slug):
		return promptKey{}, fmt.Errorf("%w: slug %q is not [a-z0-9-]+", ErrPromptUsage, slug)
	case o.Version < 0:
		return promptKey{}, fmt.Errorf("%w: version %d is not positive", ErrPromptUsage, o.Version)
	case o.Version > 0:
		return promptKey{slug: slug, kind: kindVersion, n: o.Version}, nil
	case !isPromptSlug(tag):
		return promptKey{}, fmt.Errorf("%w: tag %q is not [a-z0-9-]+", ErrPromptUsage, tag)
	}
	return promptKey{slug: slug, kind: kindTag, s: tag, session: o.SessionID, user: o.UserID}, nil
}

// resolvedPrompt is GetPrompt's form of an API answer.
func resolvedPrompt(v api.PromptVersion) ResolvedPrompt {
	p := ResolvedPrompt{
		Content: v.Content, Version: v.Version, VersionID: cmp.Or(v.VersionID, v.ID),
		Metadata: v.Metadata, Source: SourceAPI, ContentHash: v.ContentHash, ABChoice: v.ABChoice,
	}
	if v.Tag != nil {
		p.Tag = *v.Tag
	}
	if v.IsLatest != nil {
		p.IsLatest = *v.IsLatest
	}
	if m := cmp.Or(v.ModelID, v.Model); m != nil {
		p.Model = *m
	}
	return p
}

// defaultPromptTag is GetPrompt's tag when none is given (COMPAT.md, "Prompt responses"; the
// Python SDK also reads ZEROEVAL_PROMPT_TAG).
func defaultPromptTag(getenv func(string) string) string {
	if t := cmp.Or(strings.TrimSpace(getenv("PLUME_PROMPT_TAG")), strings.TrimSpace(getenv("ZEROEVAL_PROMPT_TAG"))); t != "" {
		return t
	}
	env := cmp.Or(strings.TrimSpace(getenv("PLUME_ENV")), strings.TrimSpace(getenv("ZEROEVAL_ENV")))
	if strings.EqualFold(env, "production") {
		return "production"
	}
	return "latest"
}

// renderPrompt substitutes variables for the {{name}} tokens of content as the zeroeval SDKs'
// render_template does: white space inside the braces is allowed, \{{ and \}} are literal {{
// and }}, and a token left by MissingIgnore is written {{name}}.
func renderPrompt(content string, variables map[string]string, missing MissingPolicy) (string, error) {
	for name := range variables {
		if !isTemplateName(name) {
			return "", fmt.Errorf("%w: variable name %q is not an identifier", ErrPromptUsage, name)
		}
	}
	if !strings.Contains(content, "{{") && !strings.Contains(content, `\}}`) {
		return content, nil
	}
	var b strings.Builder
	b.Grow(len(content))
	for i := 0; i < len(content); {
		rest := content[i:]
		switch {
		case strings.HasPrefix(rest, `\{{`):
			b.WriteString("{{")
			i += 3
		case strings.HasPrefix(rest, `\}}`):
			b.WriteString("}}")
			i += 3
		case strings.HasPrefix(rest, "{{"):
			name, n := templateToken(rest)
			if n == 0 {
				b.WriteByte('{')
				i++
				continue
			}
			value, ok := variables[name]
			switch {
			case ok:
				b.WriteString(value)
			case missing == MissingError:
				return "", fmt.Errorf("%w: {{%s}}", ErrMissingVariable, name)
			default:
				b.WriteString("{{" + name + "}}")
			}
			i += n
		default:
			b.WriteByte(content[i])
			i++
		}
	}
	return b.String(), nil
}

// templateToken reads the token `{{ name }}` at the start of s: its name and length, or 0.
func templateToken(s string) (name string, n int) {
	i := 2
	skip := func() {
		for i < len(s) {
			r, w := utf8.DecodeRuneInString(s[i:])
			if !api.PromptSpace(r) {
				return
			}
			i += w
		}
	}
	skip()
	start := i
	for i < len(s) && isTemplateNameByte(s[i], i > start) {
		i++
	}
	name = s[start:i]
	skip()
	if name == "" || !strings.HasPrefix(s[i:], "}}") {
		return "", 0
	}
	return name, i + 2
}

// isTemplateName reports whether s is a variable name: [a-zA-Z_][a-zA-Z0-9_]*.
func isTemplateName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isTemplateNameByte(s[i], i > 0) {
			return false
		}
	}
	return s != ""
}

func isTemplateNameByte(b byte, digitOK bool) bool {
	return b == '_' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || digitOK && '0' <= b && b <= '9'
}

// isPromptSlug reports whether s is [a-z0-9-]+, the form of slugs, task names and tags.
func isPromptSlug(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; !('a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '-') {
			return false
		}
	}
	return true
}

// isContentHash reports whether s is a lowercase hex SHA-256.
func isContentHash(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; !('0' <= b && b <= '9' || 'a' <= b && b <= 'f') {
			return false
		}
	}
	return true
}

// normalizePromptText normalises prompt text as the API and the SDKs do before hashing
// (COMPAT.md, "Prompt text normalisation and hash"): CRLF and CR become LF, trailing white
// space is stripped from every line, and the whole text is stripped.
func normalizePromptText(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, api.PromptSpace)
	}
	return strings.TrimFunc(strings.Join(lines, "\n"), api.PromptSpace)
}

// hashPromptText is the content_hash of normalised text: lowercase hex SHA-256.
func hashPromptText(norm string) string {
	sum := sha256.Sum256([]byte(norm))
	return hex.EncodeToString(sum[:])
}

// WithLinkageStyle sets how Prompt and GetPrompt write the linkage metadata (api.LinkagePython).
func WithLinkageStyle(s api.LinkageStyle) Option { return func(c *Client) { c.prompt.style = s } }
