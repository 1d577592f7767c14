package api

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// LatestTag is the reserved tag that follows a prompt's newest version: it cannot be pinned.
const LatestTag = "latest"

// IsSlug reports whether s is a prompt slug (also a task name): 1 to 128 of [a-z0-9-]. It
// allocates nothing, for hot paths such as span ingestion.
func IsSlug(s string) bool { return isName(s, 128) }

// IsTag reports whether s is a tag name: 1 to 64 of [a-z0-9-].
func IsTag(s string) bool { return isName(s, 64) }

// isName reports whether s is 1 to max of [a-z0-9-].
func isName(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// PromptVersion is a prompt version as every prompt endpoint answers it (spec §2.2, §4.1): the
// spec's fields plus what the zeroeval SDKs read (COMPAT.md "Prompt responses"): VersionID
// equals ID, TaskID equals PromptID (a task is a prompt slug), Model equals ModelID. Metadata is
// always an object. Tag and IsLatest are present on get-prompt and latest, and on ensure when
// it created the version.
type PromptVersion struct {
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
	// ABChoice is set when the version was served through a split tag: which variant of
	// which A/B test it is.
	ABChoice  *PromptChoice `json:"ab_choice,omitempty"`
	CreatedAt time.Time     `json:"created_at"`
	CreatedBy string        `json:"created_by,omitempty"`
	UpdatedAt time.Time     `json:"updated_at"`
	UpdatedBy string        `json:"updated_by,omitempty"`
}

// EnsureVersionRequest is the body of POST /v1/tasks/{task}/prompt/versions/ensure (spec §4.1).
// Null is accepted for every optional field. ContentHash, when given, must be the hash of the
// normalised content.
type EnsureVersionRequest struct {
	Content     *string         `json:"content"`
	ContentHash *string         `json:"content_hash"`
	ModelID     *string         `json:"model_id"`
	Metadata    json.RawMessage `json:"metadata"`
}

// VersionModel answers GET /v1/prompt-versions/{version_id}/model (spec §4.1): the spec's
// model_id, the SDKs' model (the same value) and the provider inferred from it.
type VersionModel struct {
	VersionID string  `json:"version_id"`
	Model     *string `json:"model"`
	ModelID   *string `json:"model_id"`
	Provider  *string `json:"provider"`
}

// Prompt is one entry of GET /projects/{project_id}/prompts.
type Prompt struct {
	ID            string        `json:"id"`
	Slug          string        `json:"slug"`
	ProjectID     string        `json:"project_id"`
	LatestVersion PromptVersion `json:"latest_version"`
	CreatedAt     time.Time     `json:"created_at"`
	UpdatedAt     time.Time     `json:"updated_at"`
}

// PromptTag is one entry of GET /projects/{project_id}/prompts/{slug}/tags: the spec's
// {tag, version} (§2.3) plus the version id and the last change.
type PromptTag struct {
	Tag       string    `json:"tag"`
	Version   int       `json:"version"`
	VersionID string    `json:"version_id"`
	UpdatedAt time.Time `json:"updated_at"`
	UpdatedBy string    `json:"updated_by,omitempty"`
	// Split is the tag's running split, if any.
	Split *PromptSplit `json:"split,omitempty"`
}

// PinRequest is the body of POST /projects/{project_id}/prompts/{slug}/tags/{tag}:pin.
// ExpectedVersion, when given, is a precondition on where the tag points now: that version, or
// 0 for a tag that must not exist yet. A tag elsewhere is 409 and nothing changes; a tag already
// at Version passes, so a retried pin succeeds. Absent (or null), the pin is unconditional.
type PinRequest struct {
	Version         *WholeNumber `json:"version"`
	ExpectedVersion *WholeNumber `json:"expected_version,omitempty"`
}

// PinResult answers a pin: the tag entry, the prompt and the version the tag left (null when
// the tag is new).
type PinResult struct {
	PromptTag
	Prompt          string `json:"prompt"`
	PreviousVersion *int   `json:"previous_version"`
}

// BindModelRequest is the body of PATCH /projects/{project_id}/prompts/{slug}/versions/{n}:
// ModelID is required and is a model id or null (which unbinds). It is kept raw so that an
// absent field (nil) and null ("null") differ.
type BindModelRequest struct {
	ModelID json.RawMessage `json:"model_id"`
}

// WholeNumber decodes a JSON integer, an integral float such as 3.0, or a string holding one,
// as SDKs and hand-written clients send version numbers.
type WholeNumber int

// UnmarshalJSON implements json.Unmarshaler; a value that is not a whole number is an
// *InvalidError.
func (n *WholeNumber) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != float64(int(f)) || f > 1<<31 || f < -(1<<31) {
		return &InvalidError{Message: "version must be an integer, not " + string(b)}
	}
	*n = WholeNumber(f)
	return nil
}

// PromptChoice is the A/B choice a fetch of a split tag was served (PromptVersion.ABChoice), in
// the shape of one element of a span's ab_choices (COMPAT.md): an application that records it
// on the span of the completion links that span's outcomes to the variant. ABChoiceID is
// present when the choice was recorded on the caller's session or user (the fetch named one).
type PromptChoice struct {
	ABChoiceID   *string `json:"ab_choice_id"`
	ChoiceName   string  `json:"choice_name"`
	VariantKey   string  `json:"variant_key"`
	VariantValue string  `json:"variant_value"`
}

// Query parameters of GET /v1/prompts/{slug} that make a split tag's answer sticky: the same
// session (or user) is served the same version for the whole test. UserID wins for the choice
// of version; the choice is recorded on the session when one is given, else on the user.
const (
	PromptSessionParam = "session_id"
	PromptUserParam    = "user_id"
)

// PromptSplitVariant is one version of a split and its share of the tag's traffic.
type PromptSplitVariant struct {
	Version   WholeNumber `json:"version"`
	VersionID string      `json:"version_id,omitempty"`
	Weight    float64     `json:"weight"`
	// Key is the A/B test's variant key ("v" and the version number).
	Key string `json:"key,omitempty"`
}

// PromptSplitRequest is the body of POST /projects/{project_id}/prompts/{slug}/tags/{tag}:split:
// the versions that share the tag's traffic (at least two, the first is the control) with
// their weights, and the split's duration in whole days (1 to 3650). Name is the A/B test's
// name, unique in the project: by default "<slug>.<tag>.<start, yyyymmddThhmmssZ>".
type PromptSplitRequest struct {
	Name         string               `json:"name,omitempty"`
	Variants     []PromptSplitVariant `json:"variants"`
	DurationDays float64              `json:"duration_days"`
}

// PromptSplit is a split of a tag: the A/B test (Test, reported by GET
// /projects/{project_id}/ab-tests/{test}) whose variants are versions of the prompt. From
// EndsAt on (or once ended), the tag serves its own version again.
type PromptSplit struct {
	Test         string               `json:"test"`
	Prompt       string               `json:"prompt"`
	Tag          string               `json:"tag"`
	Status       string               `json:"status"`
	Variants     []PromptSplitVariant `json:"variants"`
	DurationDays int                  `json:"duration_days"`
	StartedAt    time.Time            `json:"started_at"`
	EndsAt       time.Time            `json:"ends_at"`
	StartedBy    string               `json:"started_by,omitempty"`
}
