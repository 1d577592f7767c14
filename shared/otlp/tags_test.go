package otlp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceAddString is how tagSet.addString read tags before it read them in place: with
// encoding/json, every key of an object sorted. It is the oracle of FuzzTagString.
func referenceAddString(t *tagSet, s string) {
	switch {
	case s == "":
	case s[0] == '{':
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &obj) != nil {
			t.put(s, listTagValue)
			return
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			raw := obj[k]
			switch raw[0] {
			case 'n':
				continue
			case '"':
				var str string
				_ = json.Unmarshal(raw, &str)
				t.put(k, str)
			default:
				var buf bytes.Buffer
				_ = json.Compact(&buf, raw)
				t.put(k, buf.String())
			}
		}
	case s[0] == '[':
		var names []json.RawMessage
		if json.Unmarshal([]byte(s), &names) != nil {
			t.put(s, listTagValue)
			return
		}
		for _, raw := range names {
			var name string
			if json.Unmarshal(raw, &name) == nil && name != "" {
				t.put(name, listTagValue)
			}
		}
	default:
		t.put(s, listTagValue)
	}
}

// FuzzTagString: tags read from a string (a JSON object, a JSON list of names, anything else
// one name) are those encoding/json reads, with the same tags dropped, whatever tags the set
// already holds (preset of them: p00, p01, ...).
func FuzzTagString(f *testing.F) {
	many := func(n int, reverse bool) string {
		members := make([]string, n)
		for i := range members {
			k := i
			if reverse {
				k = n - i
			}
			members[i] = fmt.Sprintf(`"k%03d":"v"`, k)
		}
		return "{" + strings.Join(members, ",") + "}"
	}
	for _, s := range []string{
		`{"a":"1","b":2,"c":null,"a":"3","d":{"x": [1, 2]},"e":true}`,
		`{"a":"1","a":null}`, `{"p01":"over","p01":"` + strings.Repeat("v", 1100) + `"}`,
		`["x","",1,null,"y",{"z":1},"x"]`, `[]`, `{}`, `{"a":1} x`, `[1,`, `plain name`,
		"{\"\\u00e9\\ud800\":\"\xff\",\"\xfe\":\"v\",\"\xff\":\"w\"}", `["\u00e9\ud83d\ude00"]`,
		`{"":"empty key","` + strings.Repeat("k", 129) + `":"long key","long":"` + strings.Repeat("v", 1025) + `"}`,
		many(70, false), many(70, true), many(200, true),
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(3))
		f.Add(s, uint8(63))
	}
	f.Fuzz(func(t *testing.T, s string, preset uint8) {
		var got, want tagSet
		for i := range int(preset) % 70 {
			got.put(fmt.Sprintf("p%02d", i), "preset")
			want.put(fmt.Sprintf("p%02d", i), "preset")
		}
		s = strings.TrimSpace(s)
		got.addString(s)
		referenceAddString(&want, s)
		assert.Equal(t, want, got)
	})
}

// FuzzZeroevalString: the prompt link's members read from a JSON object in a string are those
// encoding/json reads, and the object is written in the attributes as json.Compact writes it.
// encoding/json refuses an object that holds a number out of a double's range anywhere; it is
// an object all the same (as POST /spans reads it), of which such a number is not read.
func FuzzZeroevalString(f *testing.F) {
	for _, s := range []string{
		`{"task":"t","prompt_slug":"s","prompt_version":3,"prompt_version_id":"id","content_hash":"H"}`,
		`{"task":"a","task":"b","prompt_version":"3","content_hash":null,"other":[1,{"x":2}]}`,
		`{"prompt_version":1e400}`, `{"task":1e400,"prompt_slug":"s"}`, `{"task":true,"prompt_slug":[1],"content_hash":{}}`,
		"{\"prompt_slug\":\"a\xffb\"}", `{"t\u0061sk":"escaped key"}`, ` {"task" : "spaced"} `,
		`{"task":"x"} trailing`, `[1]`, `{`, `{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gotOK := jsonLinkMembers(s)
		want, err := referenceLinkMembers(s)
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return // a number out of range: see above
		}
		require.Equal(t, err == nil, gotOK, "%v", err)
		if gotOK {
			assert.Equal(t, want, got)
		}
		compact, ok := compactJSONObject(s)
		assert.Equal(t, gotOK, ok, "written as an object exactly when the link reads it as one")
		if ok {
			var buf bytes.Buffer
			require.NoError(t, json.Compact(&buf, []byte(validUTF8(strings.TrimSpace(s)))))
			assert.Equal(t, buf.String(), string(compact))
		}
	})
}

// referenceLinkMembers is how the link read a JSON object in a string before it read it in
// place: with encoding/json, into a map. It is the oracle of FuzzZeroevalString.
func referenceLinkMembers(s string) (map[string]value, error) {
	s = strings.TrimSpace(s)
	if len(s) < 2 || s[0] != '{' || jsonDepth(s) > maxValueDepth {
		return nil, errors.New("not an object")
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(s), &obj); err != nil {
		return nil, err
	}
	members := map[string]value{}
	for _, k := range linkKeys {
		if raw, ok := obj[k]; ok && raw != nil {
			members[k] = jsonScalar(raw)
		}
	}
	return members, nil
}

// jsonScalar returns a JSON value decoded by encoding/json as an attribute value of the same
// type (numbers are doubles), as pcommon.Value.FromRaw makes it; of an array or an object only
// the type is kept.
func jsonScalar(raw any) value {
	switch r := raw.(type) {
	case string:
		return value{typ: valueStr, str: r}
	case float64:
		return value{typ: valueDouble, num: math.Float64bits(r)}
	case bool:
		if r {
			return value{typ: valueBool, num: 1}
		}
		return value{typ: valueBool}
	case []any:
		return value{typ: valueSlice}
	case map[string]any:
		return value{typ: valueMap}
	}
	return value{}
}
