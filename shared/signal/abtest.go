package signal

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// Limits of a test's definition and of the tests one entity is in.
const (
	MaxVariants     = 20
	MaxDurationDays = 3650
	// MaxChoices is how many tests one entity is in: setting a signal adds to the aggregates
	// of each in one transaction.
	MaxChoices = 32
)

// Test is an A/B test: its variants (the first is the control), their weights, and its fixed
// horizon, from its first choice to DurationDays later.
type Test struct {
	Name         string
	Variants     []Variant
	DurationDays int
	StartedAt    time.Time
	EndsAt       time.Time
	// Prompt and Tag name the prompt tag whose split the test is ("" for a test of ze.choose).
	Prompt, Tag string
}

// Variant is one variant of a test.
type Variant struct {
	Key    string
	Value  string
	Weight float64
}

// Status is "running" or "completed" at now.
func (t Test) Status(now time.Time) string {
	if now.Before(t.EndsAt) {
		return api.ABRunning
	}
	return api.ABCompleted
}

// has reports whether key is one of the test's variants.
func (t Test) has(key string) bool {
	return slices.ContainsFunc(t.Variants, func(v Variant) bool { return v.Key == key })
}

// sameDefinition reports whether u defines the same variants, weights and duration as t.
func (t Test) sameDefinition(u Test) bool {
	return t.DurationDays == u.DurationDays && slices.Equal(t.Variants, u.Variants)
}

// Wire is the test as listed.
func (t Test) Wire(now time.Time) api.ABTest {
	vs := make([]api.ABVariant, len(t.Variants))
	for i, v := range t.Variants {
		vs[i] = api.ABVariant{Key: v.Key, Value: v.Value, Weight: v.Weight}
	}
	return api.ABTest{Name: t.Name, Status: t.Status(now), Variants: vs, DurationDays: t.DurationDays, StartedAt: t.StartedAt, EndsAt: t.EndsAt,
		Prompt: t.Prompt, Tag: t.Tag}
}

// ChoiceInput is one ze.choose call.
type ChoiceInput struct {
	Ref     EntityRef
	Test    string
	Variant string
	// Definition is the test as the caller defines it (no times).
	Definition Test
}

// ChoiceResult is what Choose did.
type ChoiceResult struct {
	Test Test
	// Status is the test's status: no choice is recorded once it has completed.
	Status string
	// ID is the choice's id (ChoiceID), empty when the test has completed.
	ID string
	// Recorded is false when the test had completed, or when the entity already had a
	// variant of the test (kept: an entity is counted once, in its first variant).
	Recorded bool
	// DefinitionKept: the test existed with another definition, which stays.
	DefinitionKept bool
}

// CheckChoice checks a choice and its definition.
func CheckChoice(in ChoiceInput) error {
	if err := CheckRef(in.Ref); err != nil {
		return errs.Invalid("%s", err)
	}
	if err := checkName("choice_name", in.Test, MaxKeyLen); err != nil {
		return errs.Invalid("%s", err)
	}
	d := in.Definition
	if len(d.Variants) == 0 || len(d.Variants) > MaxVariants {
		return errs.Invalid("variants must have 1 to %d members", MaxVariants)
	}
	total := 0.0
	for _, v := range d.Variants {
		if err := checkName("a variant key", v.Key, MaxKeyLen); err != nil {
			return errs.Invalid("%s", err)
		}
		if len(v.Value) > 4096 {
			return errs.Invalid("variant %q: its value must have at most 4096 bytes", v.Key)
		}
		if math.IsNaN(v.Weight) || v.Weight < 0 || math.IsInf(v.Weight, 0) {
			return errs.Invalid("variant %q: its weight must be a number of 0 or more", v.Key)
		}
		total += v.Weight
	}
	if total <= 0 {
		return errs.Invalid("the weights must not all be 0")
	}
	if d.DurationDays < 1 || d.DurationDays > MaxDurationDays {
		return errs.Invalid("duration_days must be a whole number from 1 to %d", MaxDurationDays)
	}
	if !d.has(in.Variant) {
		return errs.Invalid("variant_key %q is not one of the variants", clip(in.Variant))
	}
	return nil
}

// ChoiceID is the id of the choice of test on an entity: the same for every request that
// records it, so a retried choice answers the same id and the id tells nothing stored.
func ChoiceID(projectID string, ref EntityRef, test string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%s", projectID, ref.Type, ref.ID, test)))
	return uuid.NewSHA1(uuid.NameSpaceOID, h[:]).String()
}

// Choose records a choice on the entity's canonical ref (EntityRef.Canonical): the test is
// created with the caller's definition if it does not exist (the first definition wins), the
// choice is refused with errs.Conflict when its variant is not one of the stored test's, and
// nothing is recorded once the test has completed. The entity counts once per test, in its
// first variant; a choice sent again counts nothing.
func (s *Service) Choose(ctx context.Context, projectID string, in ChoiceInput) (ChoiceResult, error) {
	if err := CheckChoice(in); err != nil {
		return ChoiceResult{}, err
	}
	now := s.now().UTC()
	def := in.Definition
	def.Name, def.StartedAt = in.Test, now
	def.EndsAt = now.Add(time.Duration(def.DurationDays) * 24 * time.Hour)
	t, err := s.store.CreateTest(ctx, projectID, def)
	if err != nil {
		return ChoiceResult{}, err
	}
	res := ChoiceResult{Test: t, Status: t.Status(now), DefinitionKept: !t.sameDefinition(def)}
	if res.Status == api.ABCompleted {
		return res, nil
	}
	if !t.has(in.Variant) {
		return ChoiceResult{}, errs.Conflict("A/B test %q has no variant %q; its variants are kept from its first choice", in.Test, clip(in.Variant))
	}
	ref := in.Ref.Canonical()
	res.ID = ChoiceID(projectID, ref, in.Test)
	e, err := s.reread(ctx, projectID, ref)
	if err != nil {
		return ChoiceResult{}, err
	}
	res.Recorded, err = s.record(ctx, projectID, e, Choice{Test: in.Test, Variant: in.Variant, ID: res.ID, At: now})
	if err != nil {
		return ChoiceResult{}, err
	}
	return res, nil
}

// RecordOn records on e, a record as read, that it got variant of test (a test known to be
// running and to have that variant: a prompt split's), unless it has a variant of test
// already; the entity's signals join the variant. It returns the choice's id. The entity
// type may also be "user" (a split sticky by user); users carry no signals. e must have been
// read by its canonical ref (EntityRef.Canonical).
func (s *Service) RecordOn(ctx context.Context, projectID string, e Entity, test, variant string) (string, error) {
	id := ChoiceID(projectID, e.Ref, test)
	_, err := s.record(ctx, projectID, e, Choice{Test: test, Variant: variant, ID: id, At: s.now().UTC()})
	return id, err
}

// record saves the choice ch on e, as read, with its deltas: the variant's count and each of
// the entity's signals. Nothing when e has a choice of the test already (false), unless that
// choice is one a span carries (Carry): then the choice is counted, in the carried variant
// (an entity counts in its first variant), and the signals, joined already, are not added
// again. A record that moved is read again.
func (s *Service) record(ctx context.Context, projectID string, e Entity, ch Choice) (bool, error) {
	for attempt := 0; ; attempt++ {
		var c Change
		if old, ok := e.Choices[ch.Test]; ok {
			if !old.Carried {
				return false, nil
			}
			old.Carried, old.ID, old.At = false, ch.ID, ch.At
			c = Change{Choice: &old, Deltas: []Delta{{Test: ch.Test, Variant: old.Variant, N: 1}}}
		} else {
			if len(e.Choices) >= MaxChoices {
				return false, errs.Invalid("an entity is in at most %d A/B tests", MaxChoices)
			}
			c = Change{Choice: &ch, Deltas: []Delta{{Test: ch.Test, Variant: ch.Variant, N: 1}}}
			for _, sig := range e.Signals {
				c.Deltas = append(c.Deltas, valueDelta(ch, sig, 1, ""))
			}
		}
		err := s.store.Save(ctx, projectID, e, []Change{c})
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, ErrStale) || attempt == maxAttempts {
			return false, err
		}
		if e, err = s.reread(ctx, projectID, e.Ref); err != nil {
			return false, err
		}
	}
}

// Entity reads one entity's record (empty when nothing was recorded on it), by its canonical
// ref (EntityRef.Canonical): a session's by the SDK's id or its uuid5 alike.
func (s *Service) Entity(ctx context.Context, projectID string, ref EntityRef) (Entity, error) {
	if err := CheckRef(ref); err != nil {
		return Entity{}, errs.Invalid("%s", err)
	}
	return s.reread(ctx, projectID, ref.Canonical())
}

// Tests lists the project's tests.
func (s *Service) Tests(ctx context.Context, projectID string) ([]Test, error) {
	return s.store.Tests(ctx, projectID)
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }
