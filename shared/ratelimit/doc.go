// Package ratelimit enforces the model gateway's per-project limits that protect the bill:
// requests per minute (RPM), tokens per minute (TPM) and an optional daily spend cap in USD.
// The counts live in DynamoDB (Store), so every Lambda instance of a deployment enforces the
// same limits. Windows are fixed: UTC minutes for RPM and TPM, UTC days for the spend cap; a
// Refusal's RetryAfter is the time left to the window's end.
//
// # Counting without a hot item
//
// One item per project and minute would take every write of a busy project, and one item or
// partition accepts about 1,000 writes a second. Every counter is therefore split over Shards
// items, each in a partition of its own: a project at R requests a second writes R/Shards a
// second to each. The price is on the read side: a sum is one BatchGetItem of every shard,
// billed per item (1 read unit each, strongly consistent, even for items that do not exist)
// where a single counter would be one GetItem. A Query over one partition holding all shards
// would read them for one unit, but would put every shard back in the one hot partition.
//
// # Requests: exact, by shard quotas
//
// The minute's RPM is divided among the shards (shard i may count RPM/Shards, the first
// RPM%Shards one more). Admit picks a shard at random and counts the request there with one
// conditional UpdateItem (ADD 1 if below the shard's quota); a full shard refuses the write and
// Admit tries the next one; a request is refused only when every shard is full. Whatever the
// number of instances and their concurrency, the requests admitted in a minute are exactly
// min(demand, RPM): never more, and none refused before the limit is reached. No read is
// needed. Counts only grow within a minute, so an instance remembers until the minute ends the
// shards it has seen full: learning it costs at most Shards failed conditional writes per
// instance and minute (per call in flight, in a process serving several at once), and every
// later refusal costs no request at all.
//
// # Tokens and spend: after the fact, bounded staleness
//
// Tokens and cost are known only when a call ends: Record adds them to one random shard of the
// minute (tokens) and of the UTC day (spend). Spend is counted in integer picodollars (the grid
// costs are rounded to, bound.CostGrid), so ten calls of $0.10 reach a $1 cap exactly, with no
// float drift. Admit refuses once the tokens counted this minute reach TPM, or the spend counted
// today reaches the cap. These limits are soft by nature: the calls in flight when a limit is
// reached finish and are counted, so usage can pass the limit by the usage of the calls admitted
// before the limit was seen, including those admitted within the staleness bound below.
//
// Reading the sums costs one BatchGetItem of up to 2×Shards items. An instance keeps a
// project's sums for less than Config.MaxStaleness (DefaultMaxStaleness, 1 s, from
// ConfigFromEnv; 0 reads on every admission), counted from when the read was sent, and adds
// its own Records to them at once. So an admission is decided on every Record completed on
// this instance, and on every Record completed on any instance at least MaxStaleness earlier.
// Once a sum reaches its limit the instance keeps refusing without reading until the window
// ends (counts only grow), and concurrent admissions of one project share one read.
//
// # Cost per call in DynamoDB requests
//
//   - Admit: 1 UpdateItem when RPM is set, plus 1 BatchGetItem at most once per MaxStaleness
//     per project and instance when TPM or the spend cap is set; 0 when refused by a limit the
//     instance already knows is reached (at most Shards failed UpdateItems to learn that RPM
//     is reached from other instances' requests).
//   - Record: 1 UpdateItem for the tokens when TPM is set, 1 for the cost when the cap is set.
//   - Nothing at all for a limit that is not set.
//
// Storage errors are returned as they are; the gateway should refuse the call (a deployment
// that cannot count cannot protect the bill).
package ratelimit
