// Package admin is `plume admin`: the operator's commands, which work on the DynamoDB table
// directly rather than through the API. They create the table, create and list projects, issue,
// list and revoke API keys, and check and repair trace and session aggregates (recompute-trace,
// recompute-session). Whoever can run them holds the AWS credentials of the table, so
// they need no API key.
package admin
