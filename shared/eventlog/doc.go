// Package eventlog is a project's event log: every event raised (api.Event) kept once, for
// Retention, and read back newest first or oldest after a time (GET
// /projects/{project_id}/events, `plume events tail`). EventsFunction appends each stream
// batch's events as it fans them out to webhooks and puts them on EventBridge; an event
// appended again (a retried batch) is kept once, by its id.
//
// An event's place in the log is its time then its id. Its time is the change's, not the
// moment it was logged, and the stream hands different items' changes to EventsFunction in
// no global order, so an event may be logged a little after a later one: a follower that
// reads the events after the last time it saw misses it. `plume events tail` therefore reads
// again from Lag before the last time it saw and prints each id once.
package eventlog
