package ddb

import (
	"fmt"
	"hash/fnv"
	"time"

	"github.com/plumehq/plume/shared/listindex"
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

// splitSK is the split of a tag, in the prompt's partition (between PROMPT and TAG#, so the
// tags' Query reads it too).
func splitSK(tag string) string { return "SPLIT#" + tag }

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

// completionsPK is the partition listing the llm spans linked to a prompt, one item per batch
// ordered by timeIndexSK of its write: the completions a feedback link shows.
func completionsPK(projectID, slug string) string { return "P#" + projectID + "#PC#" + slug }

// Feedback and judges. Human feedback and judge evaluations live in the partition of the span
// they are about, beside its summary (SK order: EVAL#<judge> < FB#<user>... < SPAN), so a span's
// feedback is one Query. GSI3 gathers them by trace once the span's trace is known; items about
// spans not ingested yet wait in the project's orphan partition of GSI3 until a read finds the
// span and moves them. Judges have a partition each; their evaluations are listed by judge and
// time through GSI1, and their calibrations (feedback with a judge_id) by judge and submission
// time through GSI2.
const (
	skJudge          = "JUDGE"
	skFeedbackLink   = "FLINK"
	prefixEvaluation = "EVAL#"
	prefixFeedback   = "FB#"
	// prefixJudgeHour keys a judge's evaluation counters of one hour, in the judge's partition.
	prefixJudgeHour = "EH#"
)

// judgeHourLayout is the time layout of judgeHourSK.
const judgeHourLayout = "2006010215"

// judgeHourSK keys the counters of a judge's evaluations created in the hour that holds at:
// EH#<yyyymmddhh>, UTC, so that a window of hours is one Query.
func judgeHourSK(at time.Time) string { return prefixJudgeHour + at.UTC().Format(judgeHourLayout) }

// feedbackSK keys one user's feedback on a span; calibration feedback on a judge's evaluation
// is a separate record per judge.
func feedbackSK(userID, judgeID string) string {
	if judgeID == "" {
		return prefixFeedback + userID
	}
	return prefixFeedback + userID + "#J#" + judgeID
}

func evaluationSK(judgeID string) string { return prefixEvaluation + judgeID }

// traceFeedbackGSI3PK gathers the feedback and evaluations of every span of a trace.
func traceFeedbackGSI3PK(projectID, traceID string) string {
	return "P#" + projectID + "#TF#" + traceID
}

// orphanFeedbackGSI3PK holds feedback on spans that were unknown when it was written.
func orphanFeedbackGSI3PK(projectID string) string { return "P#" + projectID + "#TF#?" }

// spanFeedbackGSI3SK orders a trace's feedback by span.
func spanFeedbackGSI3SK(spanID, sk string) string { return spanID + "#" + sk }

// promptFeedbackGSI1PK lists the feedback given through a prompt's completions, newest first.
func promptFeedbackGSI1PK(projectID, slug string) string { return "P#" + projectID + "#PF#" + slug }

// judgeCalibrationsGSI2PK lists a judge's calibration feedback (feedback with its judge_id) by
// the time it was last submitted (calibrationGSI2SK), so that its calibrations in a window,
// newest first, are one Query.
func judgeCalibrationsGSI2PK(projectID, judgeID string) string {
	return "P#" + projectID + "#JC#" + judgeID
}

// calibrationGSI2SK orders a judge's calibrations by submission time, then span and SK.
func calibrationGSI2SK(at time.Time, spanID, sk string) string {
	return timeIndexSK(at, spanFeedbackGSI3SK(spanID, sk))
}

func judgePK(projectID, judgeID string) string { return "P#" + projectID + "#J#" + judgeID }

// judgesGSI1PK lists a project's judges by creation time.
func judgesGSI1PK(projectID string) string { return "P#" + projectID + "#JUDGES" }

// judgeEvaluationsGSI1PK lists a judge's evaluations by creation time (timeIndexSK).
func judgeEvaluationsGSI1PK(projectID, judgeID string) string {
	return "P#" + projectID + "#J#" + judgeID + "#E"
}

// feedbackLinkPK keys a feedback link by the SHA-256 of its token, the only form it is stored
// in: a public page finds its link with one read and nothing else.
func feedbackLinkPK(tokenHash string) string { return "FLINK#" + tokenHash }

// feedbackLinksGSI1PK lists a project's feedback links (GSI1SK: their id).
func feedbackLinksGSI1PK(projectID string) string { return "P#" + projectID + "#FLINKS" }

// optimizationRunPK is the partition of an optimization run: its record (skRun), its deploy
// receipts (receiptSK) and nothing else.
func optimizationRunPK(projectID, runID string) string { return "P#" + projectID + "#OR#" + runID }

// optimizationRunsGSI1PK lists the runs of one target (a prompt or a judge) by creation time.
func optimizationRunsGSI1PK(projectID, targetKind, targetID string) string {
	return "P#" + projectID + "#ORS#" + targetKind + "#" + targetID
}

// activeRunsGSI2PK lists every project's runs that are not over (queued, running) by their
// last update (GSI2SK: timeIndexSK), so that a schedule finds those whose worker is gone.
const activeRunsGSI2PK = "ORUNS#ACTIVE"

// skRun is the sort key of a run's record.
const skRun = "RUN"

// receiptSK keys a deploy receipt by the SHA-256 of its token, the only form it is stored in.
func receiptSK(tokenHash string) string { return "RECEIPT#" + tokenHash }

// modelCallPK keys a cached model answer of a project by the hash of its request (CallCache).
func modelCallPK(projectID, requestHash string) string {
	return "P#" + projectID + "#MC#" + requestHash
}

// skModelCall is the sort key of a cached model answer.
const skModelCall = "CALL"

// claimSK keys a judge's claim on a span (ClaimStore), in the span's partition: CLAIM#<judge>
// sorts before EVAL#<judge>, FB#... and SPAN, and every reader of the partition ignores it.
func claimSK(judgeID string) string { return "CLAIM#" + judgeID }

// Gateway limits (RateLimitStore): each counter of a project is split over shards, each shard a
// partition of its own, so that no item or partition takes every write of a busy project. A
// shard's partition holds its minute items (requests and tokens of a UTC minute) and its day
// items (spend of a UTC day); TTL deletes them once their window is over.
func rateLimitPK(projectID string, shard int) string {
	return fmt.Sprintf("P#%s#RL#%d", projectID, shard)
}

// rateMinuteSK keys the UTC minute of at; rateDaySK its UTC day.
func rateMinuteSK(at time.Time) string { return "M#" + at.UTC().Format("200601021504") }

func rateDaySK(at time.Time) string { return "D#" + at.UTC().Format("20060102") }

// A project's deletion (projectdelete, through ProjectDeletionStore) records its progress in a marker item of its own
// partition, not under P#<project>, so that the Scan does not delete it while it records the
// Scan's progress.
const skDeletion = "DELETION"

func deletionPK(projectID string) string { return "DELETE#" + projectID }

// Dashboard sessions (WebSessionStore) are keyed by the SHA-256 of the session id, the only
// form the id is stored in, outside any project's partition: the cookie is all a request
// brings, and the project is read from the item.
func webSessionPK(idHash string) string { return "WEBSESSION#" + idHash }

// skWebSession is the sort key of a dashboard session.
const skWebSession = "WEBSESSION"

// The list index (listindex.go). A partition of it is one kind of record of one project created
// on one UTC day. Its manifest is an item of the project's manifest partition of that kind,
// sorted by day, so that the manifests of a window are one Query; its runs small enough to be
// stored in the table are items of a partition of the day, keyed by run id; larger runs are
// objects under listindex.ObjectPrefix. The project's IndexedSince item has a partition of its own.
const (
	prefixListIndex = "LX"
	skIndexedSince  = "SINCE"
	// listIndexDayLayout is the layout of a manifest's sort key.
	listIndexDayLayout = "20060102"
)

func listIndexPK(projectID string, kind listindex.Kind) string {
	return "P#" + projectID + "#" + prefixListIndex + "#" + string(kind)
}

func listIndexSK(day time.Time) string { return day.UTC().Format(listIndexDayLayout) }

// listIndexRunsPK is the partition of a day's runs stored in the table.
func listIndexRunsPK(projectID string, kind listindex.Kind, day time.Time) string {
	return listIndexPK(projectID, kind) + "#" + listIndexSK(day)
}

func indexedSincePK(projectID string) string { return "P#" + projectID + "#" + prefixListIndex }

// listIndexObjectKey is the object of a run stored in the bucket.
func listIndexObjectKey(projectID string, kind listindex.Kind, day time.Time, runID string) string {
	return listindex.ObjectPrefix(projectID) + "kind=" + string(kind) + "/day=" + day.UTC().Format(time.DateOnly) + "/" + runID + ".run"
}

// Signals and A/B tests (SignalStore). An entity's record (its signals and choices) is alone in
// its partition, keyed by the entity's type and id whether or not the entity exists; a test's
// partition holds the test item and its aggregates, which a report reads in one Query; GSI1
// lists the project's tests by name.
const (
	skEntity = "ENTITY"
	skABTest = "TEST"
)

func entityPK(projectID, entityType, entityID string) string {
	return "P#" + projectID + "#EN#" + entityType + "#" + entityID
}

func abTestPK(projectID, name string) string { return "P#" + projectID + "#AB#" + name }

func abTestsGSI1PK(projectID string) string { return "P#" + projectID + "#ABTESTS" }

// abAggregateSK is the sort key of a variant's count (signal "") or of one signal's aggregate
// in a variant. The variant's length comes first so that no variant and signal pair can spell
// another's key.
func abAggregateSK(variant, signal string) string {
	sk := fmt.Sprintf("V#%03d#%s", len(variant), variant)
	if signal != "" {
		sk += "#S#" + signal
	}
	return sk
}

// webhooksPK is the partition of a project's webhooks (one item each, webhookSK): fan-out
// reads them all in one Query.
func webhooksPK(projectID string) string { return "P#" + projectID + "#WH" }

func webhookSK(id string) string { return "WH#" + id }

// deliveriesPK is the partition of one webhook's delivery log, deliverySK(id) each, whose ids
// sort by time (webhook.DeliveryID).
func deliveriesPK(projectID, webhookID string) string { return "P#" + projectID + "#WHD#" + webhookID }

const prefixDelivery = "D#"

func deliverySK(id string) string { return prefixDelivery + id }

// Datasets and experiments (shared/dataset). A dataset partition holds the dataset item
// (DATASET: its latest version number, the counter the next version is conditional on) and its
// versions (V#<0000000001>); a pointer partition per version id holds a copy of the version, so
// an experiment finds it by id. An experiment partition holds, in sort-key order, its column
// evaluations (CE#), column metrics (CM#), evaluators (EV#), the experiment (EXPERIMENT), its run
// metrics (RM#) and runs (RUN#), then its results (X#<run>#<row>) each followed by its
// evaluations (X#<run>#<row>#E#<evaluator>): everything but the results sorts before "X#".
const (
	skDataset        = "DATASET"
	skDatasetVersion = "DSV"
	skExperiment     = "EXPERIMENT"
	prefixResults    = "X#"
)

func datasetPK(projectID, name string) string { return "P#" + projectID + "#DS#" + name }

func datasetsGSI1PK(projectID string) string { return "P#" + projectID + "#DATASETS" }

func datasetVersionPK(projectID, versionID string) string {
	return "P#" + projectID + "#DSV#" + versionID
}

func experimentPK(projectID, id string) string { return "P#" + projectID + "#EX#" + id }

func datasetExperimentsGSI1PK(projectID, datasetID string) string {
	return "P#" + projectID + "#DSEX#" + datasetID
}

func runSK(run int) string { return fmt.Sprintf("RUN#%08d", run) }

func resultRunPrefix(run int) string { return fmt.Sprintf("%s%08d#", prefixResults, run) }

func resultSK(run int, rowID string) string { return resultRunPrefix(run) + rowID }

func experimentEvaluationSK(run int, rowID, evaluatorID string) string {
	return resultSK(run, rowID) + "#E#" + evaluatorID
}

func evaluatorSK(id string) string { return "EV#" + id }

func recordSK(kind, name string, run int) string { return fmt.Sprintf("%s#%s#%08d", kind, name, run) }

// aggregateSK is the tally of an experiment's evaluator in a run: before "X#", so an
// experiment's definition reads it.
func aggregateSK(run int, evaluatorID string) string {
	return fmt.Sprintf("AGG#%08d#%s", run, evaluatorID)
}

// eventsPK is the partition of a project's event log (shared/eventlog), eventSK each: sorted by
// the event's time, then its id.
func eventsPK(projectID string) string { return "P#" + projectID + "#EVT" }

const prefixEvent = "E#"

// eventTimeLayout writes an event's time at a fixed width, so that sort keys sort by time.
const eventTimeLayout = "2006-01-02T15:04:05.000000000Z"

func eventSK(t time.Time, id string) string {
	return prefixEvent + t.UTC().Format(eventTimeLayout) + "#" + id
}

// monitorsPK is the partition of a project's monitors (one item each, monitorSK); the item
// holds the monitor's state and history too, so a state change is one conditional write.
func monitorsPK(projectID string) string { return "P#" + projectID + "#MON" }

// prefixMonitor starts a monitor's sort key; EventsFunction's stream filter passes it.
const prefixMonitor = "MON#"

func monitorSK(id string) string { return prefixMonitor + id }

// allMonitorsGSI1PK lists every project's monitors (GSI1SK <project>#<id>) for the evaluator:
// read once a minute, written only when a monitor is created or deleted.
const allMonitorsGSI1PK = "MONITORS"

// sessionFeedbackGSI3PK gathers the feedback and evaluations of every span of a session's
// traces (sessionFeedbackGSI3SK: by trace, then span), so that a session's unified feedback
// is one Query; a trace in a session is read under it by the trace's prefix.
func sessionFeedbackGSI3PK(projectID, sessionID string) string {
	return "P#" + projectID + "#SF#" + sessionID
}

// sessionFeedbackGSI3SK orders a session's feedback by trace, then span.
func sessionFeedbackGSI3SK(traceID, spanID, sk string) string {
	return traceID + "#" + spanFeedbackGSI3SK(spanID, sk)
}

// orphanFlagPK is the item that says until when a project may have orphan feedback (feedback
// written before its span), so that the stream consumer looks for orphans of new spans only in
// projects that may have some (FeedbackStore.Apply).
func orphanFlagPK(projectID string) string { return "P#" + projectID + "#FBO" }

const skOrphanFlag = "ORPHANS"
