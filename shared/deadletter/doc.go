// Package deadletter keeps the events an asynchronously invoked function gave up on, and
// replays them. A deployed function's on-failure destination is an SQS queue, to which Lambda
// sends a Record for every event that failed all its attempts (or expired); plume-local and
// tests fill the same queue through shared/asyncinvoke, with the same records. Queue.Send
// writes one; Queue.Replay reads them back and hands each original event to a handler (the
// function's own, run in-process by `plume admin replay-evaluations`), deleting a message only
// once its event was handled.
//
// A queue can also hold what Lambda's older DeadLetterConfig sends: the event itself, without
// a record around it. Replay accepts both, so a queue can be switched from one mechanism to the
// other without losing what it holds.
//
// Replay does not retry a failed event itself: the message stays on the queue and becomes
// visible again after its visibility timeout, for a later replay. Events are replayed at least
// once (a handler that succeeds but whose message cannot be deleted sees the event again), so
// handlers must be idempotent, as an asynchronously invoked function must be anyway.
package deadletter
