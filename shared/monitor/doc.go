// Package monitor watches a project's metrics and says when one goes wrong: a monitor names a
// metric of the rollups (error rate, cost, p95 latency, llm calls, judge pass rate, negative
// feedback rate) over a window, a comparison and a threshold; an Evaluator, run every minute
// (MonitorFunction's schedule, plume-local's PLUME_MONITOR_INTERVAL), reads each monitor's
// window from the rollups (one Query of its buckets, never the spans) and moves it between the
// states ok, alerting and no_data. gateway_spend, the gateway's spend of the UTC day, is read
// instead from the counters of the gateway's daily cap (Spend: one BatchGetItem).
//
// A state change is one conditional write of the monitor item (on its change counter), so two
// runs that overlap cannot both record it; the change's record on the table's stream is what
// raises monitor.alerted and monitor.resolved (ddb.EventsOf): the stream is the outbox, and a
// change raises exactly one event. While a monitor alerts, a reminder is written at most every
// Reminder, by the same kind of conditional write. A run that finds nothing changed writes
// nothing. See docs/monitors.md.
package monitor
