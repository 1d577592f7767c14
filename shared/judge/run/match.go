package run

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"slices"

	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/trace"
)

// Matches reports whether judge j evaluates span sp: an llm span, an active judge, the
// judge's target prompt and tag filter satisfied, and the span sampled at the judge's rate
// (see the package doc). The cheap checks come first; sampling hashes last.
func Matches(j judge.Judge, sp trace.Span) bool {
	switch {
	case sp.Kind != trace.KindLLM, j.Paused:
		return false
	case j.TargetPrompt != "" && linkedSlug(sp) != j.TargetPrompt:
		return false
	case !tagsPass(j.TagFilter, sp.Tags):
		return false
	}
	return Sampled(j.ID, sp.ID, j.SampleRate)
}

// linkedSlug is the prompt slug sp is linked to, as trace.Summarize derives it: Link.PromptSlug,
// else Link.Task; "" without a link.
func linkedSlug(sp trace.Span) string {
	if sp.Link == nil {
		return ""
	}
	return cmp.Or(sp.Link.PromptSlug, sp.Link.Task)
}

// tagsPass reports whether tags pass filter f (nil passes everything): a filter key is met
// when the span has that tag with one of the key's values; match "any" needs one key met,
// any other match (judge.MatchAll, the default) every key.
func tagsPass(f *judge.TagFilter, tags trace.Tags) bool {
	if f == nil || len(f.Tags) == 0 {
		return true
	}
	anyKey := f.Match == judge.MatchAny
	for key, allowed := range f.Tags {
		v, ok := tags.Get(key)
		met := ok && slices.Contains(allowed, v)
		switch {
		case met && anyKey:
			return true
		case !met && !anyKey:
			return false
		}
	}
	return !anyKey
}

// Sampled reports whether the span spanID is in the sample of judge judgeID at rate: the
// first 8 bytes of SHA-256(judgeID, 0x00, spanID), big-endian, as a fraction of 2^64, below
// rate. The same ids always give the same answer; rate 1 (or more) takes every span, 0 (or
// less, or NaN) none, and over many span ids the share taken approaches rate.
func Sampled(judgeID, spanID string, rate float64) bool {
	switch {
	case rate >= 1:
		return true
	case !(rate > 0):
		return false
	}
	h := sha256.New()
	h.Write([]byte(judgeID))
	h.Write([]byte{0}) // ids cannot contain NUL: ("ab", "c") and ("a", "bc") differ
	h.Write([]byte(spanID))
	u := binary.BigEndian.Uint64(h.Sum(nil))
	// The top 53 bits as a float64 in [0, 1), exact: float64(u)/2^64 would round the largest
	// values up to 1.
	return float64(u>>11)/(1<<53) < rate
}
