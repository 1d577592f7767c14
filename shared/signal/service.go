package signal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
)

// Service records signals and choices and reports on tests.
type Service struct {
	store Store
	now   func() time.Time
}

// NewService returns the service over store, reading the time from now (time.Now when nil).
func NewService(store Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now}
}

// maxAttempts is how many times a write re-reads a record that moved under it.
const maxAttempts = 8

// Refused is one input Set did not store, by its index in the request.
type Refused struct {
	Index int
	Input Input
	Err   error
}

// Set stores signals, on their entities' canonical refs (EntityRef.Canonical); an input that
// is invalid, or that would give its entity more than MaxSignals signals, is refused alone
// (the others are stored). A signal set again is updated; within one request the last value
// of a name wins. A failure of the store fails the call, and a retry stores nothing twice.
func (s *Service) Set(ctx context.Context, projectID string, inputs []Input) (refused []Refused, err error) {
	type pending struct {
		index int
		sig   Signal
	}
	byEntity := map[EntityRef][]pending{}
	var order []EntityRef
	for i, in := range inputs {
		sig, err := in.parse()
		if err != nil {
			refused = append(refused, Refused{Index: i, Input: in, Err: err})
			continue
		}
		ref := in.Ref.Canonical()
		if _, ok := byEntity[ref]; !ok {
			order = append(order, ref)
		}
		byEntity[ref] = append(byEntity[ref], pending{i, sig})
	}
	if len(order) == 0 {
		return refused, nil
	}
	records, err := s.store.Entities(ctx, projectID, order)
	if err != nil {
		return nil, err
	}
	over := make([][]Refused, len(order))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for n, ref := range order {
		g.Go(func() error {
			sigs := map[string]Signal{}
			var names []string
			for _, p := range byEntity[ref] {
				if _, ok := sigs[p.sig.Name]; !ok {
					names = append(names, p.sig.Name)
				}
				sigs[p.sig.Name] = p.sig
			}
			e := records[ref]
			kept, dropped := capSignals(e, names)
			for _, p := range byEntity[ref] {
				if slices.Contains(dropped, p.sig.Name) {
					over[n] = append(over[n], Refused{Index: p.index, Input: inputs[p.index],
						Err: fmt.Errorf("an entity holds at most %d signals", MaxSignals)})
				}
			}
			return s.setOn(gctx, projectID, e, kept, sigs)
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, o := range over {
		refused = append(refused, o...)
	}
	slices.SortFunc(refused, func(a, b Refused) int { return a.Index - b.Index })
	return refused, nil
}

// capSignals splits names into those the entity can take (it has them, or has room) and the
// rest.
func capSignals(e Entity, names []string) (kept, dropped []string) {
	room := MaxSignals - len(e.Signals)
	for _, n := range names {
		if _, ok := e.Signals[n]; ok {
			kept = append(kept, n)
		} else if room > 0 {
			kept = append(kept, n)
			room--
		} else {
			dropped = append(dropped, n)
		}
	}
	return kept, dropped
}

// setOn writes the named signals of sigs on the entity e, as read, again from a fresh read
// when it moved.
func (s *Service) setOn(ctx context.Context, projectID string, e Entity, names []string, sigs map[string]Signal) error {
	for attempt := 0; ; attempt++ {
		now := s.now()
		var changes []Change
		for _, name := range names {
			if c, ok := signalChange(e, sigs[name], now); ok {
				changes = append(changes, c)
			}
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
		names, _ = capSignals(e, names)
	}
}

// reread reads one record again.
func (s *Service) reread(ctx context.Context, projectID string, ref EntityRef) (Entity, error) {
	m, err := s.store.Entities(ctx, projectID, []EntityRef{ref})
	return m[ref], err
}

// signalChange is the change that sets sig on e, with its deltas to the aggregates of every
// test e is in; false when e already holds that value.
func signalChange(e Entity, sig Signal, now time.Time) (Change, bool) {
	old, had := e.Signals[sig.Name]
	if had && old.Value == sig.Value && old.Type == sig.Type {
		return Change{}, false
	}
	sig.CreatedAt, sig.UpdatedAt = now, now
	if had {
		sig.CreatedAt = old.CreatedAt
	}
	oldValue, n := "", int64(1)
	if had {
		oldValue, n = old.Value, 0
	}
	c := Change{Signal: &sig}
	for _, name := range slices.Sorted(maps.Keys(e.Choices)) {
		c.Deltas = append(c.Deltas, valueDelta(e.Choices[name], sig, n, oldValue))
	}
	return c, true
}

// valueDelta is the delta of sig's value replacing oldValue ("" for none) in a choice's
// variant: n more entities with the signal (1 or 0), the sum and the sum of squares moved by
// the difference. An aggregate is keyed by the signal's name; a signal whose type changes
// keeps its aggregate, which takes the new type.
func valueDelta(ch Choice, sig Signal, n int64, oldValue string) Delta {
	return Delta{Test: ch.Test, Variant: ch.Variant, Signal: sig.Name, SignalType: sig.Type, N: n,
		Sum: sub(sig.Value, oldValue), SumSq: sub(square(sig.Value), square(oldValue))}
}

// AddDeltas is the delta of a then b on the same aggregate.
func AddDeltas(a, b Delta) Delta {
	a.N += b.N
	a.Sum = ratText(new(big.Rat).Add(rat(a.Sum), rat(b.Sum)))
	a.SumSq = ratText(new(big.Rat).Add(rat(a.SumSq), rat(b.SumSq)))
	if b.SignalType != "" {
		a.SignalType = b.SignalType
	}
	return a
}
