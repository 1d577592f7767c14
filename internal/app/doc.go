// Package app is Plume's composition root: it turns configuration and AWS clients into the
// stores, services and HTTP handlers of every Lambda function, so that the deployed functions,
// plume-local and the test harness are built by the same code and cannot drift apart.
//
// Three types carry it:
//   - Env holds the configuration and the clients, and builds (once) every store and service an
//     area needs: the authenticator, the prompt registry, the tracing service with its
//     attachment extractor and price overrides, the judge and feedback services.
//   - Function is one HTTP function of template.yaml: its logical id, its API Gateway route keys
//     and how its handler is built from an Env. Each area declares its own Function(s) beside
//     its routes (functions/<area>/function.go), taking what it needs from the Env and nothing
//     else; package stack lists them all.
//   - Worker is a function without routes (a scheduled job): its name and how its Job is built
//     from an Env. Its main is app.MainWorker(area.Function); plume-local runs the same Job.
//
// A Lambda main is one line, app.Main(area.Function) (app.MainWorker for a Worker), and links
// only its own area: app does not import the areas, so a prompts binary carries no OTLP
// decoder (11 MB against 25 MB for all areas together, and a cold start that initialises only
// what it serves). plume-local mounts stack.Functions on one ServeMux with Mount, and
// internal/apitest the REST API's (internal/stack/restapi).
package app
