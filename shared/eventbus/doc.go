// Package eventbus puts a project's events on an Amazon EventBridge bus, so that AWS users
// route them anywhere with rules (docs/webhooks.md#eventbridge).
//
// Each event is one entry: Source "plume", DetailType the event's type, Detail the event's
// JSON (its id inside, the same on every put: consumers deduplicate by it), Time the event's
// time. PutEvents takes at most 10 entries and 256 KB per request and may accept some entries
// of a request and refuse others (FailedEntryCount, an ErrorCode per entry); Bus.Put sends
// requests of at most those sizes and puts again only the entries refused, with a bounded
// backoff, so an event accepted is never sent twice by one Put. A Put that still fails is an
// error: the caller (EventsFunction) fails its stream batch, Lambda retries it, and the events
// put again keep their ids.
package eventbus
