package trace

import (
	"encoding/json"
	"iter"
	"maps"
	"slices"
	"strings"
)

// Tag is one key and value of a tag set.
type Tag struct {
	Key, Value string
}

// Tags is a tag set of a span: its keys are unique and in increasing order. It reads and writes
// as a JSON object of strings ({} when empty), as a map[string]string would. A sorted slice,
// not a map, because a span's few tags are made and written on the hottest path of ingestion:
// one slice instead of a map's several allocations, and no sorting when they are written.
type Tags []Tag

// TagsOf returns the tags of m.
func TagsOf(m map[string]string) Tags {
	if len(m) == 0 {
		return nil
	}
	t := make(Tags, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		t = append(t, Tag{k, m[k]})
	}
	return t
}

// search returns the index of key in t, or where it would be inserted, and whether it is there.
func (t Tags) search(key string) (int, bool) {
	if len(t) <= 8 { // a span's tags are few: a scan beats the binary search's calls
		for i := range t {
			if c := strings.Compare(t[i].Key, key); c >= 0 {
				return i, c == 0
			}
		}
		return len(t), false
	}
	return slices.BinarySearchFunc(t, key, func(tg Tag, k string) int { return strings.Compare(tg.Key, k) })
}

// Get returns the value of key.
func (t Tags) Get(key string) (string, bool) {
	if i, ok := t.search(key); ok {
		return t[i].Value, true
	}
	return "", false
}

// Set sets key to value, in place when key is there, else inserting it in order.
func (t *Tags) Set(key, value string) {
	i, ok := t.search(key)
	if ok {
		(*t)[i].Value = value
		return
	}
	*t = slices.Insert(*t, i, Tag{key, value})
}

// All yields the tags in key order.
func (t Tags) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for _, tg := range t {
			if !yield(tg.Key, tg.Value) {
				return
			}
		}
	}
}

// Map returns the tags as a map; nil when there are none.
func (t Tags) Map() map[string]string {
	if len(t) == 0 {
		return nil
	}
	m := make(map[string]string, len(t))
	for _, tg := range t {
		m[tg.Key] = tg.Value
	}
	return m
}

// MergeTags returns a with the tags of b set over it (b wins). Neither a nor b is modified;
// the result is a itself when b is empty and b itself when a is, else a new set.
func MergeTags(a, b Tags) Tags {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := make(Tags, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch c := strings.Compare(a[i].Key, b[j].Key); {
		case c < 0:
			out = append(out, a[i])
			i++
		case c > 0:
			out = append(out, b[j])
			j++
		default:
			out = append(out, b[j])
			i++
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// MarshalJSON writes the tags as a JSON object, as encoding/json writes a map[string]string.
func (t Tags) MarshalJSON() ([]byte, error) {
	return t.appendJSON(make([]byte, 0, 2+len(t)*16)), nil
}

func (t Tags) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, tg := range t {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, tg.Key)
		b = append(b, ':')
		b = appendString(b, tg.Value)
	}
	return append(b, '}')
}

// UnmarshalJSON reads a JSON object of strings (null is no tags).
func (t *Tags) UnmarshalJSON(b []byte) error {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*t = TagsOf(m)
	return nil
}
