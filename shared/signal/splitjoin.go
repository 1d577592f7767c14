package signal

import (
	"context"
	"slices"
)

// PromptSpan is a span made with a prompt version in a session: the session, the prompt's slug
// and the version's id, as the span's prompt link names them.
type PromptSpan struct {
	SpanID, SessionID, Slug, VersionID string
}

// CarrySplits puts spans in the prompt splits their sessions were served from: a session that
// fetched a split tag with its session id has the split's choice on its record (the version it
// was served), and a span of that session made with that very version of that prompt carries
// the choice (Carry), so its verdicts and feedback count for the version in the split's report.
// A span made with another version (the application pinned one itself) is not in the split.
// The sessions' records are read together (one BatchGetItem per 100 sessions), and the tests of
// their choices when they have some; a session in no split costs nothing more.
func (s *Service) CarrySplits(ctx context.Context, projectID string, spans []PromptSpan) error {
	var refs []EntityRef
	for _, sp := range spans {
		ref := EntityRef{Type: "session", ID: sp.SessionID}
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	if len(refs) == 0 {
		return nil
	}
	sessions, err := s.store.Entities(ctx, projectID, refs)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range sessions {
		for name := range e.Choices {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	tests, err := s.store.TestsNamed(ctx, projectID, names)
	if err != nil {
		return err
	}
	var carried []Carried
	for _, sp := range spans {
		for name, ch := range sessions[EntityRef{Type: "session", ID: sp.SessionID}].Choices {
			t, ok := tests[name]
			if ok && t.Prompt == sp.Slug && t.servedAs(ch.Variant, sp.VersionID) {
				carried = append(carried, Carried{SpanID: sp.SpanID, Test: name, Variant: ch.Variant})
			}
		}
	}
	return s.carryOf(ctx, projectID, carried, tests)
}

// servedAs reports whether variant key of the split t serves the version versionID.
func (t Test) servedAs(key, versionID string) bool {
	return versionID != "" && slices.ContainsFunc(t.Variants, func(v Variant) bool { return v.Key == key && v.Value == versionID })
}
