// Package auth is Plume's tenancy boundary: projects, API keys and the middleware that turns
// "Authorization: Bearer <key>" into a Principal (project and user) for every request.
//
// Keys are random secrets with the recognisable prefix "plm_"; only their SHA-256 hash is
// stored. A key may expire and may be revoked; a project may have several active keys, so keys
// can be rotated without downtime. Each key names the user who acts with it (id, email, name),
// which later becomes created_by on the records that key writes.
//
// The Authenticator caches resolved keys in memory for at most MaxCacheTTL (60 s): a revoked
// key can keep working for up to that long on a warm Lambda instance. Expiry is checked on
// every request, cached or not, so an expired key fails at once. Unknown keys are not cached.
//
// Each key has a role (role.go): admin (everything), member (everything but key management) or
// ingest (only what applications call: writing spans, feedback, reading prompts, the gateway).
// Keys stored before roles existed act as admin.
//
// The Router is where those rules meet the routes: every route is authenticated, declares the
// roles it admits when it is registered (member and admin unless it says AllowIngest or
// AdminOnly) and answers 403 to any other role, project-scoped routes answer 403 to another
// project's key, and every path wildcard is checked against its rule in one table (params.go),
// all before the handler runs and before any read.
package auth
