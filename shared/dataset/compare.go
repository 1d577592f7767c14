package dataset

import (
	"encoding/json"
	"slices"
)

// MergeRows lines up pages of results of several experiments by row id: each page holds an
// experiment's first results after the same cursor, by row id. It returns the first limit row
// ids of their union with each experiment's result of that row (nil when none), and whether a
// row may follow. Every page holds the rows it has among those limit: a row of the union's
// first limit has fewer than limit rows before it in any one page.
func MergeRows(pages [][]Result, more []bool, limit int) (rows []string, results [][]*Result, hasMore bool) {
	byRow := map[string][]*Result{}
	for i, page := range pages {
		for j := range page {
			r := &page[j]
			if byRow[r.RowID] == nil {
				byRow[r.RowID] = make([]*Result, len(pages))
				rows = append(rows, r.RowID)
			}
			byRow[r.RowID][i] = r
		}
	}
	slices.Sort(rows)
	hasMore = len(rows) > limit || slices.Contains(more, true)
	rows = rows[:min(limit, len(rows))]
	for _, id := range rows {
		results = append(results, byRow[id])
	}
	return rows, results, hasMore
}

// MetricValue is the number a metric's results hold: the results when they are a number, or
// the value under the metric's own name when they are an object ({"accuracy": 0.9}).
func MetricValue(name string, results json.RawMessage) *float64 {
	var n float64
	if json.Unmarshal(results, &n) == nil {
		return &n
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(results, &obj) == nil {
		if v, ok := obj[name]; ok && json.Unmarshal(v, &n) == nil {
			return &n
		}
	}
	return nil
}
