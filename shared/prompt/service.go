package prompt

import (
	"bytes"
	"context"
	"encoding/json"
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
	// VersionByTag returns the version a (non-latest) tag points at and the newest version number.
	VersionByTag(ctx context.Context, projectID, slug, tag string) (v Version, latest int, err error)
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
	store Store
	now   func() time.Time
}

// NewService returns a Service over store.
func NewService(store Store) *Service { return &Service{store: store, now: time.Now} }

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

// Get resolves a version of slug by number or tag.
func (s *Service) Get(ctx context.Context, projectID, slug string, sel Selector) (Resolved, error) {
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
	v, latest, err := s.store.VersionByTag(ctx, projectID, slug, tag)
	return Resolved{Version: v, Tag: tag, IsLatest: v.Number == latest}, err
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
