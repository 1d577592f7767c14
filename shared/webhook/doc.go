// Package webhook delivers a project's events (api.Event, raised from the table's change
// stream by ddb.EventsOf) to the HTTP endpoints its admins register, signed by the Standard
// Webhooks convention (https://www.standardwebhooks.com/): headers webhook-id (the event id,
// the same on every attempt and every redelivery), webhook-timestamp and webhook-signature
// ("v1," + base64 HMAC-SHA256 of "id.timestamp.body" keyed with the secret's decoded bytes).
//
// Delivery is off the request path and at least once: Fanout, run by the stream consumer,
// writes one delivery item per (event, subscribed webhook), whose id is derived from both, and
// queues it; Deliverer, the queue's worker, posts it through the SSRF-guarded fetcher
// (shared/safefetch), records the attempt in the delivery log and, on failure, queues it again
// after an exponentially growing delay, until the retry window (24 hours) has passed: then
// the delivery is marked failed and sent to the dead-letter queue.
package webhook
