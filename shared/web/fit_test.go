package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// listOf is an answer that wraps its list, as JudgeList does.
type listOf struct {
	Items []string `json:"items"`
	Count int      `json:"count"`
}

func wrapList(items []string) any { return listOf{Items: items, Count: len(items)} }

// TestList: a list read whole is answered from ?offset=, as many items as fit in
// api.MaxAnswerBytes with the rest of the answer, and a cut answer says where the rest starts;
// following the offsets reads every item once; a bad offset is 400.
func TestList(t *testing.T) {
	item := strings.Repeat("x", 700_000) // four fit, five do not
	items := make([]string, 10)
	for i := range items {
		items[i] = strconv.Itoa(i) + item
	}
	var read []string
	offset, pages := 0, 0
	for {
		rec := httptest.NewRecorder()
		List(rec, httptest.NewRequest("GET", "/things?offset="+strconv.Itoa(offset)+"&q=1", nil), items, wrapList)
		require.Equal(t, http.StatusOK, rec.Code)
		assert.LessOrEqual(t, rec.Body.Len(), api.MaxAnswerBytes)
		var page listOf
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
		assert.Equal(t, len(page.Items), page.Count)
		read = append(read, page.Items...)
		pages++
		next := rec.Header().Get(api.NextOffsetHeader)
		if next == "" {
			assert.Empty(t, rec.Header().Get("Link"))
			break
		}
		assert.Len(t, page.Items, 4)
		assert.Equal(t, `</things?offset=`+next+`&q=1>; rel="next"`, rec.Header().Get("Link"))
		offset, _ = strconv.Atoi(next)
	}
	assert.Equal(t, items, read)
	assert.Equal(t, 3, pages)

	rec := httptest.NewRecorder()
	List(rec, httptest.NewRequest("GET", "/things?offset=99", nil), items, Array[string])
	assert.Equal(t, "[]\n", rec.Body.String(), "past the end: an empty list")

	rec = httptest.NewRecorder()
	List(rec, httptest.NewRequest("GET", "/things?offset=-1", nil), items, Array[string])
	assert.Equal(t, http.StatusBadRequest, rec.Code)

	huge := []string{strings.Repeat("y", api.MaxAnswerBytes), "z"}
	rec = httptest.NewRecorder()
	List(rec, httptest.NewRequest("GET", "/things", nil), huge, Array[string])
	assert.Equal(t, "1", rec.Header().Get(api.NextOffsetHeader), "an item past the budget is answered alone")
}

// TestWritten: an answer to a write holds the first items that fit and says how many it left
// out; one that fits whole says nothing.
func TestWritten(t *testing.T) {
	items := []string{strings.Repeat("a", 2_000_000), strings.Repeat("b", 2_000_000), "c"}
	rec := httptest.NewRecorder()
	Written(rec, httptest.NewRequest("POST", "/things", nil), items, Array[string])
	var got []string
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
	assert.Equal(t, items[:1], got)
	assert.Equal(t, "2", rec.Header().Get(api.OmittedHeader))

	rec = httptest.NewRecorder()
	Written(rec, httptest.NewRequest("POST", "/things", nil), items[2:], Array[string])
	assert.Empty(t, rec.Header().Get(api.OmittedHeader))
	assert.Equal(t, "[\"c\"]\n", rec.Body.String())
}
