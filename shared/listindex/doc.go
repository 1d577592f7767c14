// Package listindex is the index that serves GET /spans, /traces and /sessions exactly, in any
// order the spec names and for every single filter, at a cost that follows the page, not the
// project: a log-structured merge index of packed, sorted runs, fed by the table's change
// stream and stored mostly in S3.
//
// # Why not one DynamoDB item per index entry
//
// A span has about ten orders and filters it must be found by (created, started_at, name,
// status, duration, cost, kind, error code, parent, each tag). A GSI entry or an item per
// entry costs one write unit each: ten or more per span, where ingestion's whole budget is
// under two. So entries are packed: the stream consumer turns each batch of changes into one
// sorted run per (project, kind, day), about 50 bytes an entry, written as one S3 object (or a
// DynamoDB item when it is small, where a write unit per KB is cheaper than a PUT); S3 charges
// per request, not per byte, so merging runs (compaction) costs requests, not write units.
//
// # Keys
//
// Every entry is a byte string whose order is the list's ascending order (Key): the dimension,
// then the sort value (nil first), then created_at, then the id, the tie-breaks of the lists'
// order. A descending list reads the same keys backwards. An equality filter (kind, name,
// status, error code, parent, a tag) is served by the dimension of that value, where the keys
// of one value are in created order: the filter with the default order is a contiguous range,
// read from its end. A sort key is served by its dimension over the window's days.
//
// # Counts, not versions
//
// An entry carries a count: +1 where the stream's new image has the key, -1 where its old
// image had it (a change that keeps a key writes nothing). A key is live when the counts of
// all runs that hold it add up to more than zero. Counts commute, so runs of different stream
// shards need no order between them; each stream record is applied once (per-shard marks, as
// the rollups keep them), so the counts are exact. A compaction adds counts up and drops the
// keys whose total is zero.
package listindex

// ObjectPrefix is the prefix of every run object of a project in the bucket.
func ObjectPrefix(projectID string) string { return "index/project=" + projectID + "/" }
