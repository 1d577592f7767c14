package ddb

import (
	"fmt"
	"hash/fnv"
	"time"
)

// Partition and sort keys of every item type. The layout of a prompt partition, in sort-key
// order, is: HASH#<sha256> (hash guards) < PROMPT (head: counter and latest pointer) <
// TAG#<tag> (tags) < V#<0000000001> (versions); Tags reads the middle range in one Query and
// LatestVersion reads the last V# item in one Query.
const (
	skProject        = "PROJECT"
	skAPIKey         = "APIKEY"
	skPrompt         = "PROMPT"
	skVersionPointer = "PV"
	prefixKey        = "KEY#"
	prefixVersion    = "V#"
	prefixTag        = "TAG#"
	// tagRangeEnd sorts after every "TAG#..." key: '$' follows '#'.
	tagRangeEnd = "TAG$"

	gsiProjects = "PROJECTS"
)

func projectPK(projectID string) string { return "P#" + projectID }

func keySK(keyID string) string { return prefixKey + keyID }

func apiKeyPK(hash string) string { return "APIKEY#" + hash }

func promptPK(projectID, slug string) string { return "P#" + projectID + "#PROMPT#" + slug }

func promptsGSI1PK(projectID string) string { return "P#" + projectID + "#PROMPTS" }

// versionSK zero-pads the number so that sort-key order is version order.
func versionSK(n int) string { return fmt.Sprintf("%s%010d", prefixVersion, n) }

func hashSK(hash string) string { return "HASH#" + hash }

func tagSK(tag string) string { return prefixTag + tag }

func versionPointerPK(projectID, versionID string) string {
	return "P#" + projectID + "#PV#" + versionID
}

// Tracing items. A span's summary is alone in its partition (later: with its feedback and
// evaluations); a trace partition holds the trace item and one member item per batch listing
// the batch's new spans of that trace; a session partition holds the session item and one item
// per trace. GSI2 (keys only) indexes member items, traces and sessions by creation time, in
// day buckets, each split over timeShards partitions by a hash of the trace or session id.
const (
	skSpan          = "SPAN"
	skTrace         = "TRACE"
	skSession       = "SESSION"
	prefixMember    = "M#"
	prefixSessTrace = "T#"
	// timeShards spreads one day of one project's index writes over this many partitions.
	timeShards = 4
)

func spanPK(projectID, spanID string) string { return "P#" + projectID + "#S#" + spanID }

func tracePK(projectID, traceID string) string { return "P#" + projectID + "#T#" + traceID }

func sessionPK(projectID, sessionID string) string { return "P#" + projectID + "#SE#" + sessionID }

// memberSK orders a trace's member items by write time.
func memberSK(at time.Time, batchID string) string {
	return fmt.Sprintf("%s%016d#%s", prefixMember, at.UnixMicro(), batchID)
}

// timeIndexPK is the GSI2 partition of one kind ("SPANS", "TRACES", "SESSIONS") of one
// project, day and shard.
func timeIndexPK(projectID, kind string, day time.Time, shard int) string {
	return fmt.Sprintf("P#%s#%s#%s#%d", projectID, kind, day.UTC().Format("20060102"), shard)
}

// timeIndexSK orders entries by time, then id.
func timeIndexSK(at time.Time, id string) string {
	return fmt.Sprintf("%016d#%s", at.UnixMicro(), id)
}

// daysSK is the item of a project partition that lists the days (yyyymmdd) on which a time
// index has entries, so that walks skip empty days.
func daysSK(kind string) string { return "DAYS#" + kind }

// shardOf picks the time-index shard of an id.
func shardOf(id string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % timeShards)
}
