package prompt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// LatestTag is the reserved tag that follows the newest version.
const LatestTag = api.LatestTag

// MaxContentBytes caps the normalised content of a version. DynamoDB items stop at 400 KB; the
// rest is headroom for the other attributes.
const MaxContentBytes = 256 << 10

// MaxMetadataBytes caps a version's metadata, as JSON.
const MaxMetadataBytes = 32 << 10

// MaxModelIDLen caps a bound model identifier.
const MaxModelIDLen = 256

// Version is one immutable text of a prompt; only its model binding can change.
type Version struct {
	ID          string
	PromptID    string
	ProjectID   string
	Slug        string
	Number      int
	Content     string
	ContentHash string
	ModelID     *string
	// Metadata is the JSON object given at creation, or nil.
	Metadata  json.RawMessage
	CreatedAt time.Time
	CreatedBy string
	UpdatedAt time.Time
	UpdatedBy string
}

// Prompt is a slug of a project with its newest version.
type Prompt struct {
	ID        string
	ProjectID string
	Slug      string
	Latest    Version
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Tag is a name pointing at a version number.
type Tag struct {
	Name      string
	Version   int
	VersionID string
	UpdatedAt time.Time
	UpdatedBy string
	// Split is the tag's split, when it has one (running or past its end).
	Split *Split
}

// Resolved is a version fetched through a tag or a number, as get-prompt returns it.
type Resolved struct {
	Version
	Tag      string // the tag it was fetched through; "" when fetched by number and not tagged latest
	IsLatest bool
	// Served is set when the version was served by the tag's split.
	Served *Served
}

// Binding is the model bound to a version.
type Binding struct {
	VersionID string
	ModelID   *string
	Provider  *string
}

// Normalize returns text as Plume and the SDKs hash it: CRLF and CR become LF, trailing
// whitespace is stripped from every line, and the whole text is stripped. {{var}} tokens are
// untouched.
func Normalize(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, isPythonSpace)
	}
	return strings.TrimFunc(strings.Join(lines, "\n"), isPythonSpace)
}

// isPythonSpace reports whether Python's str.isspace holds for r, which is what the SDKs'
// rstrip and strip remove; matching it exactly keeps our hashes equal to theirs. It is Unicode
// White_Space plus the ASCII separators U+001C to U+001F.
func isPythonSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// Hash returns the lowercase hex SHA-256 of the UTF-8 bytes of normalised text.
func Hash(normalised string) string {
	sum := sha256.Sum256([]byte(normalised))
	return hex.EncodeToString(sum[:])
}

// hashPattern is a hash as Hash writes it, of 64 digits (the length is checked apart: a
// bounded repeat would compile to 64 copies of the class at every start).
var hashPattern = regexp.MustCompile(`^[0-9a-f]+$`)

// IsSlug reports whether s is a prompt slug (also a task name): api.IsSlug.
func IsSlug(s string) bool { return api.IsSlug(s) }

// ValidateSlug checks a prompt slug (also a task name): 1 to 128 of [a-z0-9-].
func ValidateSlug(slug string) error {
	if !IsSlug(slug) {
		return errs.Invalid("prompt slug %q is invalid: use 1 to 128 lowercase letters, digits and hyphens", slug)
	}
	return nil
}

// ValidateTag checks a tag name: 1 to 64 of [a-z0-9-].
func ValidateTag(tag string) error {
	if !api.IsTag(tag) {
		return errs.Invalid("tag %q is invalid: use 1 to 64 lowercase letters, digits and hyphens", tag)
	}
	return nil
}

// ValidateHash checks a content hash: 64 lowercase hex characters. Uppercase is accepted and
// lowered, since hex case carries no meaning.
func ValidateHash(hash string) (string, error) {
	h := strings.ToLower(hash)
	if len(h) != 64 || !hashPattern.MatchString(h) {
		return "", errs.Invalid("content hash %q is not a 64-character hex SHA-256", hash)
	}
	return h, nil
}

// ValidateNumber checks a version number.
func ValidateNumber(n int) error {
	if n < 1 {
		return errs.Invalid("version must be a positive integer, not %d", n)
	}
	return nil
}

// ValidateModelID checks a model identifier to bind; nil unbinds and is always valid.
func ValidateModelID(model *string) error {
	if model == nil {
		return nil
	}
	m := *model
	switch {
	case strings.TrimSpace(m) == "":
		return errs.Invalid("model_id must not be empty; send null to unbind")
	case len(m) > MaxModelIDLen:
		return errs.Invalid("model_id is longer than %d characters", MaxModelIDLen)
	case strings.ContainsFunc(m, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return errs.Invalid("model_id contains control characters")
	}
	return nil
}
