package signal

import (
	"context"
	"errors"
	"maps"
	"slices"

	"golang.org/x/sync/errgroup"
)

// Carried is an A/B choice a span carries in its ab_choices (COMPAT.md: the SDK appends the
// ab_choice_id of a ze.choose made in the span, its trace or its session; an application
// appends a split prompt tag's ab_choice).
type Carried struct {
	SpanID  string
	Test    string
	Variant string
}

// Carry records on the spans' signal records the choices they carry, so that each span's
// signals (its judges' verdicts and feedback, kept by the change stream, and any signal sent
// on the span) count for the carried variant, exactly like a choice recorded on the span: the
// span's signals join the variant in the transaction that records the choice, and the signals
// set later join it as they are set. A carried choice is not one of the variant's choices
// (Choice.Carried). A span is in a test once, in its first variant: a choice of a test the
// span is in already (carried, or recorded through POST /ab-choices on the span) changes
// nothing, so a replayed or re-sent span counts once.
//
// A choice joins only a test that exists with that variant (the tests are read, one
// BatchGetItem per 100 tests): a span cannot put aggregates under a test or variant its
// project never defined. The others are ignored (the span still shows them).
func (s *Service) Carry(ctx context.Context, projectID string, cs []Carried) error {
	var names []string
	for _, c := range cs {
		if !slices.Contains(names, c.Test) {
			names = append(names, c.Test)
		}
	}
	if len(names) == 0 {
		return nil
	}
	tests, err := s.store.TestsNamed(ctx, projectID, names)
	if err != nil {
		return err
	}
	return s.carryOf(ctx, projectID, cs, tests)
}

// carryOf is Carry with the tests of cs already read (by name; a test not among them is not
// joined).
func (s *Service) carryOf(ctx context.Context, projectID string, cs []Carried, tests map[string]Test) error {
	now := s.now().UTC()
	byRef := map[EntityRef][]Choice{}
	var order []EntityRef
	for _, c := range cs {
		t, ok := tests[c.Test]
		if !ok || !t.has(c.Variant) {
			continue
		}
		ref := EntityRef{Type: "span", ID: c.SpanID}
		if _, ok := byRef[ref]; !ok {
			order = append(order, ref)
		}
		byRef[ref] = append(byRef[ref], Choice{Test: c.Test, Variant: c.Variant, At: now, Carried: true})
	}
	if len(order) == 0 {
		return nil
	}
	records, err := s.store.Entities(ctx, projectID, order)
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, ref := range order {
		g.Go(func() error { return s.carryOn(gctx, projectID, records[ref], byRef[ref]) })
	}
	return g.Wait()
}

// carryOn records the choices on e, as read, but those of tests e is in already, again from a
// fresh read when it moved.
func (s *Service) carryOn(ctx context.Context, projectID string, e Entity, choices []Choice) error {
	for attempt := 0; ; attempt++ {
		var changes []Change
		in := len(e.Choices)
		for _, ch := range choices {
			if _, ok := e.Choices[ch.Test]; ok || in >= MaxChoices || slices.ContainsFunc(changes, func(c Change) bool { return c.Choice.Test == ch.Test }) {
				continue
			}
			in++
			c := Change{Choice: &ch}
			for _, name := range slices.Sorted(maps.Keys(e.Signals)) {
				c.Deltas = append(c.Deltas, valueDelta(ch, e.Signals[name], 1, ""))
			}
			changes = append(changes, c)
		}
		if len(changes) == 0 {
			return nil
		}
		err := s.store.Save(ctx, projectID, e, changes)
		if !errors.Is(err, ErrStale) || attempt == maxAttempts {
			return err
		}
		if e, err = s.reread(ctx, projectID, e.Ref); err != nil {
			return err
		}
	}
}
