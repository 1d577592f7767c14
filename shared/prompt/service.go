package prompt

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/llm"
)

// Store keeps prompts, versions and tags. Every method is scoped to one project. Methods
// return errs.CodeNotFound errors (naming the prompt, version or tag) when something is
// missing, and errs.CodeUnavailable when storage throttles.
type Store interface {
	// EnsureVersion returns the version of slug whose content hash is v.ContentHash, creating it
	// as the next version number when there is none (created is then true). Numbers are
	// gap-free and unique under any concurrency; the new version becomes latest.
	EnsureVersion(ctx context.Context, v Version) (stored Version, created bool, err error)
	// EnsureVersionPinned is EnsureVersion that also points tag t (its Name, UpdatedAt and
	// UpdatedBy) at the version, under PinTag's precondition with expected, and returns the tag
	// and the version it pointed at before. A new version is created only together with its
	// pin: when the tag is elsewhere, it returns PinTag's errs.CodeConflict and creates nothing,
	// so latest does not move. Content that has a version already is pinned as PinTag pins it.
	EnsureVersionPinned(ctx context.Context, v Version, t Tag, expected int) (stored Version, pinned Tag, previous int, err error)
	// VersionByHash returns the version of slug with the content hash.
	VersionByHash(ctx context.Context, projectID, slug, hash string) (Version, error)
	// LatestVersion returns the newest version of slug.
	LatestVersion(ctx context.Context, projectID, slug string) (Version, error)
	// VersionByNumber returns version n of slug and the newest version number.
	VersionByNumber(ctx context.Context, projectID, slug string, n int) (v Version, latest int, err error)
	// TagByName returns a (non-latest) tag, with its split when it has one, and the newest
	// version number.
	TagByName(ctx context.Context, projectID, slug, tag string) (t Tag, latest int, err error)
	// Version returns version n of slug.
	Version(ctx context.Context, projectID, slug string, n int) (Version, error)
	// StartSplit stores s, a split of an existing tag whose versions exist, with the versions'
	// ids filled in, and creates its A/B test. errs.CodeConflict when the tag has a running
	// split or the project has a test of that name; errs.CodeNotFound for a missing prompt,
	// tag or version.
	StartSplit(ctx context.Context, projectID string, s Split) (Split, error)
	// EndSplit removes the running split of tag and ends its A/B test at at
	// (errs.CodeNotFound when the tag has no running split).
	EndSplit(ctx context.Context, projectID, slug, tag string, at time.Time) (Split, error)
	// PinTag points tag at version n and returns the tag and the version it pointed at before
	// (0 when it is new). With expected, the tag must point at *expected (0: must not exist) or
	// already at t.Version, checked atomically with the write; otherwise it returns an
	// errs.CodeConflict error naming the tag's current version and changes nothing.
	PinTag(ctx context.Context, projectID, slug string, t Tag, expected *int) (pinned Tag, previous int, err error)
	// Versions returns every version of slug in ascending number order.
	Versions(ctx context.Context, projectID, slug string) ([]Version, error)
	// Tags returns the tags of slug, "latest" first.
	Tags(ctx context.Context, projectID, slug string) ([]Tag, error)
	// BindModel sets (or, with nil, removes) the model of version n and returns the version.
	BindModel(ctx context.Context, projectID, slug string, n int, model *string, by string, at time.Time) (Version, error)
	// Binding returns the model bound to the version with id versionID.
	Binding(ctx context.Context, projectID, versionID string) (Binding, error)
	// Prompts returns the project's prompts in slug order with their newest versions.
	Prompts(ctx context.Context, projectID string) ([]Prompt, error)
}

// Service is the prompt registry's behaviour on top of a Store.
type Service struct {
	store   Store
	now     func() time.Time
	choices ChoiceRecorder
	random  func() float64
}

// NewService returns a Service over store.
func NewService(store Store) *Service {
	return &Service{store: store, now: time.Now, random: rand.Float64}
}

// WithSplits makes Fetch serve the splits of tags, recording sticky callers' choices through
// choices, and reads the time from now (time.Now when nil).
func (s *Service) WithSplits(choices ChoiceRecorder, now func() time.Time) *Service {
	s.choices = choices
	if now != nil {
		s.now = now
	}
	return s
}

// EnsureInput is the body of ensure. Pointers distinguish absent (nil) from given.
type EnsureInput struct {
	Content     *string
	ContentHash *string
	ModelID     *string
	Metadata    json.RawMessage
}

// Ensure normalises and hashes the content and returns the existing version with that hash or
// a new one. A supplied hash must equal the service's; the model and metadata are only used
// for a new version (an existing version is returned unchanged). It returns errs.CodeInvalid
// for bad input.
func (s *Service) Ensure(ctx context.Context, projectID, slug string, in EnsureInput, by string) (Version, bool, error) {
	v, err := PrepareVersion(projectID, slug, in, by, s.now())
	if err != nil {
		return Version{}, false, err
	}
	return s.store.EnsureVersion(ctx, v)
}

// EnsurePinned is Ensure and PinIfAt of the version in one: the version of the content, new or
// existing, is pinned as tag if the tag points at version expected (nowhere when 0) or at the
// version already. A new version is created only together with its pin, so a refused pin
// (errs.CodeConflict, naming the tag's current version) leaves no new version behind and
// latest where it was. Errors: those of Ensure and PinIfAt.
func (s *Service) EnsurePinned(ctx context.Context, projectID, slug string, in EnsureInput, tag string, expected int, by string) (Version, PinResult, error) {
	v, err := PrepareVersion(projectID, slug, in, by, s.now())
	if err != nil {
		return Version{}, PinResult{}, err
	}
	if err := checkPin(tag, &expected); err != nil {
		return Version{}, PinResult{}, err
	}
	stored, t, prev, err := s.store.EnsureVersionPinned(ctx, v, Tag{Name: tag, UpdatedAt: v.CreatedAt, UpdatedBy: by}, expected)
	if err != nil {
		return Version{}, PinResult{}, err
	}
	return stored, PinResult{Tag: t, Slug: slug, Previous: prev}, nil
}

// PrepareVersion validates an ensure input and returns the version it would create: content
// normalised, hash computed (and compared with a supplied one), fresh ids. Every failure is an
// errs.CodeInvalid error.
func PrepareVersion(projectID, slug string, in EnsureInput, by string, now time.Time) (Version, error) {
	if err := ValidateSlug(slug); err != nil {
		return Version{}, err
	}
	if in.Content == nil {
		return Version{}, errs.Invalid("content is required")
	}
	content := Normalize(*in.Content)
	switch {
	case content == "":
		return Version{}, errs.Invalid("content is empty after normalisation")
	case len(content) > MaxContentBytes:
		return Version{}, errs.Invalid("content is %d bytes; the limit is %d", len(content), MaxContentBytes)
	}
	hash := Hash(content)
	if in.ContentHash != nil {
		given, err := ValidateHash(*in.ContentHash)
		if err != nil {
			return Version{}, err
		}
		if given != hash {
			return Version{}, errs.Invalid("content_hash %s does not match the SHA-256 of the normalised content (%s)", given, hash)
		}
	}
	if err := ValidateModelID(in.ModelID); err != nil {
		return Version{}, err
	}
	meta, err := validMetadata(in.Metadata)
	if err != nil {
		return Version{}, err
	}
	now = now.UTC()
	return Version{
		ID: uuid.NewString(), PromptID: uuid.NewString(), ProjectID: projectID, Slug: slug,
		Content: content, ContentHash: hash, ModelID: in.ModelID, Metadata: meta,
		CreatedAt: now, CreatedBy: by, UpdatedAt: now, UpdatedBy: by,
	}, nil
}

// validMetadata accepts a JSON object or null (stored as nil).
func validMetadata(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	if raw[0] != '{' {
		return nil, errs.Invalid("metadata must be a JSON object")
	}
	if len(raw) > MaxMetadataBytes {
		return nil, errs.Invalid("metadata is %d bytes; the limit is %d", len(raw), MaxMetadataBytes)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return nil, errs.Invalid("metadata is not valid JSON")
	}
	return compact.Bytes(), nil
}

// ByHash returns the version of slug with the content hash.
func (s *Service) ByHash(ctx context.Context, projectID, slug, hash string) (Version, error) {
	if err := ValidateSlug(slug); err != nil {
		return Version{}, err
	}
	h, err := ValidateHash(hash)
	if err != nil {
		return Version{}, err
	}
	return s.store.VersionByHash(ctx, projectID, slug, h)
}

// Latest returns the newest version of slug.
func (s *Service) Latest(ctx context.Context, projectID, slug string) (Version, error) {
	if err := ValidateSlug(slug); err != nil {
		return Version{}, err
	}
	return s.store.LatestVersion(ctx, projectID, slug)
}

// Selector chooses a version for Get: Number when it is above zero, else Tag ("latest" when
// empty). A number wins over a tag when both are given.
type Selector struct {
	Number int
	Tag    string
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }

// Get resolves a version of slug by number or tag; a split tag gives its own version (Fetch
// serves the split).
func (s *Service) Get(ctx context.Context, projectID, slug string, sel Selector) (Resolved, error) {
	return s.get(ctx, projectID, slug, sel, nil)
}

// Fetch is Get as the SDKs' fetch (GET /v1/prompts/{slug}) answers it: a tag with a running
// split gives one of the split's versions, picked by the caller's sticky key (the same key
// always gets the same version) or, without one, at random by weight. With a key the choice is
// recorded on the caller's session or user, once per test (Resolved.Served says what was
// served). The requests are those of Get: with a key the version is read together with the
// caller's record, and the first fetch of a caller in a test adds one write.
func (s *Service) Fetch(ctx context.Context, projectID, slug string, sel Selector, who Sticky) (Resolved, error) {
	if err := who.Check(); err != nil {
		return Resolved{}, err
	}
	return s.get(ctx, projectID, slug, sel, &who)
}

func (s *Service) get(ctx context.Context, projectID, slug string, sel Selector, who *Sticky) (Resolved, error) {
	if err := ValidateSlug(slug); err != nil {
		return Resolved{}, err
	}
	if sel.Number > 0 {
		v, latest, err := s.store.VersionByNumber(ctx, projectID, slug, sel.Number)
		if err != nil {
			return Resolved{}, err
		}
		r := Resolved{Version: v, IsLatest: v.Number == latest}
		if r.IsLatest {
			r.Tag = LatestTag
		}
		return r, nil
	}
	tag := sel.Tag
	if tag == "" {
		tag = LatestTag
	}
	if err := ValidateTag(tag); err != nil {
		return Resolved{}, err
	}
	if tag == LatestTag {
		v, err := s.store.LatestVersion(ctx, projectID, slug)
		return Resolved{Version: v, Tag: tag, IsLatest: true}, err
	}
	t, latest, err := s.store.TagByName(ctx, projectID, slug, tag)
	if err != nil {
		return Resolved{}, err
	}
	r := Resolved{Tag: tag}
	if who == nil || t.Split == nil || !t.Split.Running(s.now()) {
		r.Version, err = s.store.Version(ctx, projectID, slug, t.Version)
	} else {
		r.Version, r.Served, err = s.serveSplit(ctx, projectID, *t.Split, *who)
	}
	r.IsLatest = r.Version.Number == latest
	return r, err
}

// serveSplit picks the version of a running split for who and reads it, recording the
// choice when who names a session or user.
func (s *Service) serveSplit(ctx context.Context, projectID string, sp Split, who Sticky) (Version, *Served, error) {
	key := who.key()
	if key == "" || s.choices == nil {
		v := sp.Pick(s.random())
		got, err := s.store.Version(ctx, projectID, sp.Slug, v.Version)
		return got, &Served{Test: sp.Test, Variant: v}, err
	}
	v := sp.Pick(StickyPoint(sp.Test, key))
	typ, id := who.entity()
	got, choiceID, err := s.choices.ServeVersion(ctx, projectID, sp.Slug, v.Version,
		ServedChoice{Test: sp.Test, Variant: v.Key(), EntityType: typ, ID: id})
	return got, &Served{Test: sp.Test, Variant: v, ChoiceID: choiceID}, err
}

// PinResult is the outcome of Pin.
type PinResult struct {
	Tag      Tag
	Slug     string
	Previous int // the version the tag pointed at before; 0 when the tag is new
}

// Pin points tag at version n: this is how a version is deployed. "latest" cannot be pinned.
func (s *Service) Pin(ctx context.Context, projectID, slug, tag string, n int, by string) (PinResult, error) {
	return s.pin(ctx, projectID, slug, tag, n, nil, by)
}

// PinIfAt is Pin with a precondition on where the tag points now: at version expected, or
// nowhere when expected is 0. Pinning where the tag already points passes too, so a retried
// pin succeeds. Errors: errs.CodeConflict (naming the tag's current version) when the tag is
// elsewhere, errs.CodeInvalid for a negative expected, and those of Pin.
func (s *Service) PinIfAt(ctx context.Context, projectID, slug, tag string, n, expected int, by string) (PinResult, error) {
	return s.pin(ctx, projectID, slug, tag, n, &expected, by)
}

// checkPin validates a tag to pin and, if given, where it must point now.
func checkPin(tag string, expected *int) error {
	if err := ValidateTag(tag); err != nil {
		return err
	}
	if tag == LatestTag {
		return errs.Invalid("the tag %q is reserved: it always follows the newest version", LatestTag)
	}
	if expected != nil && *expected < 0 {
		return errs.Invalid("expected_version must be 0 (the tag must not exist) or a version number, not %d", *expected)
	}
	return nil
}

func (s *Service) pin(ctx context.Context, projectID, slug, tag string, n int, expected *int, by string) (PinResult, error) {
	if err := ValidateSlug(slug); err != nil {
		return PinResult{}, err
	}
	if err := checkPin(tag, expected); err != nil {
		return PinResult{}, err
	}
	if err := ValidateNumber(n); err != nil {
		return PinResult{}, err
	}
	t, prev, err := s.store.PinTag(ctx, projectID, slug, Tag{Name: tag, Version: n, UpdatedAt: s.now().UTC(), UpdatedBy: by}, expected)
	if err != nil {
		return PinResult{}, err
	}
	return PinResult{Tag: t, Slug: slug, Previous: prev}, nil
}

// Versions lists the versions of slug, oldest first.
func (s *Service) Versions(ctx context.Context, projectID, slug string) ([]Version, error) {
	if err := ValidateSlug(slug); err != nil {
		return nil, err
	}
	return s.store.Versions(ctx, projectID, slug)
}

// Tags lists the tags of slug, "latest" first.
func (s *Service) Tags(ctx context.Context, projectID, slug string) ([]Tag, error) {
	if err := ValidateSlug(slug); err != nil {
		return nil, err
	}
	return s.store.Tags(ctx, projectID, slug)
}

// BindModel binds model to version n of slug, or unbinds with nil.
func (s *Service) BindModel(ctx context.Context, projectID, slug string, n int, model *string, by string) (Version, error) {
	if err := ValidateSlug(slug); err != nil {
		return Version{}, err
	}
	if err := ValidateNumber(n); err != nil {
		return Version{}, err
	}
	if err := ValidateModelID(model); err != nil {
		return Version{}, err
	}
	return s.store.BindModel(ctx, projectID, slug, n, model, by, s.now().UTC())
}

// Model returns the model bound to a version and the model's provider.
func (s *Service) Model(ctx context.Context, projectID, versionID string) (Binding, error) {
	if _, err := uuid.Parse(versionID); err != nil {
		return Binding{}, errs.NotFound("prompt version %q not found", versionID)
	}
	b, err := s.store.Binding(ctx, projectID, versionID)
	if err != nil {
		return Binding{}, err
	}
	if b.ModelID != nil {
		if p := llm.ProviderOf(*b.ModelID); p != "" {
			b.Provider = &p
		}
	}
	return b, nil
}

// List returns the project's prompts with their newest versions.
func (s *Service) List(ctx context.Context, projectID string) ([]Prompt, error) {
	return s.store.Prompts(ctx, projectID)
}
