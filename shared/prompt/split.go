package prompt

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/plumehq/plume/shared/errs"
)

// Limits of a split.
const (
	MaxSplitVariants = 20
	MaxSplitDays     = 3650
	maxTestName      = 128
)

// Split shares a tag's traffic between versions of the prompt: an A/B test (named Test, in the
// project's A/B tests) whose variants are the versions, the first the control. While it runs,
// a fetch of the tag is served one of the versions by weight, the same one for the same
// sticky key; from EndsAt on the tag serves its own version again.
type Split struct {
	Test         string
	Slug         string
	Tag          string
	Variants     []SplitVariant
	DurationDays int
	StartedAt    time.Time
	EndsAt       time.Time
	StartedBy    string
}

// SplitVariant is one version of a split.
type SplitVariant struct {
	Version   int
	VersionID string
	Weight    float64
}

// Key is the variant's key in the A/B test: "v" and the version number.
func (v SplitVariant) Key() string { return "v" + strconv.Itoa(v.Version) }

// Running reports whether the split serves the tag at now.
func (s Split) Running(now time.Time) bool { return now.Before(s.EndsAt) }

// Pick returns the variant for the point u of [0, 1): the variants take consecutive shares of
// [0, 1) in their order, each as large as its weight over the total.
func (s Split) Pick(u float64) SplitVariant {
	total := 0.0
	for _, v := range s.Variants {
		total += v.Weight
	}
	at := u * total
	for _, v := range s.Variants {
		if at < v.Weight {
			return v
		}
		at -= v.Weight
	}
	// Rounding can leave at just above the last share: the last variant of weight above 0.
	for i := len(s.Variants) - 1; i >= 0; i-- {
		if s.Variants[i].Weight > 0 {
			return s.Variants[i]
		}
	}
	return s.Variants[len(s.Variants)-1]
}

// StickyPoint is the point of [0, 1) that a sticky key has in a test: the first 53 bits of
// SHA-256(test, key). The same key gets the same version for the whole test with no write,
// and keys spread uniformly, independently from one test to the next.
func StickyPoint(test, key string) float64 {
	h := sha256.Sum256([]byte(test + "\x00" + key))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53)
}

// Sticky is whom a fetch is for: a split serves the same version to the same user (UserID)
// or, without one, session. The choice is recorded on the session when there is one (its
// signals then join the variant), else on the user. SessionID is the session's id as stored
// (trace.SessionIDOf, which this package cannot import): the caller derives it, so that an
// SDK's session id and its uuid5 get the same version and the same record.
type Sticky struct {
	SessionID string
	UserID    string
}

// key is the key a version is picked by ("" when none).
func (k Sticky) key() string {
	if k.UserID != "" {
		return "user\x00" + k.UserID
	}
	if k.SessionID != "" {
		return "session\x00" + k.SessionID
	}
	return ""
}

// entity is the entity the choice is recorded on.
func (k Sticky) entity() (typ, id string) {
	if k.SessionID != "" {
		return "session", k.SessionID
	}
	return "user", k.UserID
}

// Check bounds the sticky ids as the caller sent them (they become parts of keys, as entity
// ids do).
func (k Sticky) Check() error {
	for name, v := range map[string]string{"session_id": k.SessionID, "user_id": k.UserID} {
		if len(v) > 128 {
			return errs.Invalid("%s must have at most 128 bytes", name)
		}
		for _, r := range v {
			if r < 0x20 || r == 0x7f {
				return errs.Invalid("%s must not hold control characters", name)
			}
		}
	}
	return nil
}

// Served is the A/B choice a split made for a fetch.
type Served struct {
	Test    string
	Variant SplitVariant
	// ChoiceID is the choice's id once recorded on the caller's session or user; "" for a
	// fetch without a sticky key.
	ChoiceID string
}

// ServedChoice is a choice to record: the entity (a session or a user) got variant of test.
type ServedChoice struct {
	Test, Variant  string
	EntityType, ID string
}

// ChoiceRecorder reads the version a split serves and records the choice on the caller.
type ChoiceRecorder interface {
	// ServeVersion returns version n of slug and records that c's entity got c's variant of
	// c's test, once per entity and test (a fetch again writes nothing), adding the entity's
	// signals to the variant. It returns the choice's id.
	ServeVersion(ctx context.Context, projectID, slug string, n int, c ServedChoice) (Version, string, error)
}

// SplitInput is a split to start on a tag.
type SplitInput struct {
	Name         string
	Variants     []SplitVariant
	DurationDays int
}

// checkSplit checks a split's definition.
func checkSplit(in SplitInput) error {
	if len(in.Variants) < 2 || len(in.Variants) > MaxSplitVariants {
		return errs.Invalid("a split has 2 to %d variants", MaxSplitVariants)
	}
	seen := map[int]bool{}
	total := 0.0
	for _, v := range in.Variants {
		if err := ValidateNumber(v.Version); err != nil {
			return err
		}
		if seen[v.Version] {
			return errs.Invalid("version %d is given twice", v.Version)
		}
		seen[v.Version] = true
		if math.IsNaN(v.Weight) || math.IsInf(v.Weight, 0) || v.Weight < 0 {
			return errs.Invalid("version %d: its weight must be a number of 0 or more", v.Version)
		}
		total += v.Weight
	}
	if total <= 0 {
		return errs.Invalid("the weights must not all be 0")
	}
	if in.DurationDays < 1 || in.DurationDays > MaxSplitDays {
		return errs.Invalid("duration_days must be a whole number from 1 to %d", MaxSplitDays)
	}
	if in.Name != "" {
		if len(in.Name) > maxTestName || !testNamePattern(in.Name) {
			return errs.Invalid("name must be 1 to %d of letters, digits, '.', '_' and '-'", maxTestName)
		}
	}
	return nil
}

// testNamePattern is what a split's test name may hold: it is a path segment of the report.
func testNamePattern(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return s != ""
}

// StartSplit starts a split of tag: the tag must exist (not "latest", which follows the newest
// version) and have no running split, the versions must exist, and the test's name must be
// new in the project (errs.Conflict otherwise). The default name is
// "<slug>.<tag>.<start, yyyymmddThhmmssZ>".
func (s *Service) StartSplit(ctx context.Context, projectID, slug, tag string, in SplitInput, by string) (Split, error) {
	if err := ValidateSlug(slug); err != nil {
		return Split{}, err
	}
	if err := checkPin(tag, nil); err != nil {
		return Split{}, err
	}
	if err := checkSplit(in); err != nil {
		return Split{}, err
	}
	now := s.now().UTC().Truncate(time.Second)
	sp := Split{Test: in.Name, Slug: slug, Tag: tag, Variants: in.Variants, DurationDays: in.DurationDays,
		StartedAt: now, EndsAt: now.Add(time.Duration(in.DurationDays) * 24 * time.Hour), StartedBy: by}
	if sp.Test == "" {
		sp.Test = fmt.Sprintf("%s.%s.%s", slug, tag, now.Format("20060102T150405Z"))
		if len(sp.Test) > maxTestName {
			sp.Test = sp.Test[len(sp.Test)-maxTestName:]
		}
	}
	return s.store.StartSplit(ctx, projectID, sp)
}

// EndSplit ends the running split of tag now: the tag serves its own version again and the A/B
// test completes (its report decides at once). errs.NotFound when the tag has no running
// split.
func (s *Service) EndSplit(ctx context.Context, projectID, slug, tag string) (Split, error) {
	if err := ValidateSlug(slug); err != nil {
		return Split{}, err
	}
	if err := ValidateTag(tag); err != nil {
		return Split{}, err
	}
	return s.store.EndSplit(ctx, projectID, slug, tag, s.now().UTC())
}
