#!/usr/bin/env bash
# make test: every check of the project, on a fresh machine or a developer's. It starts DynamoDB
# Local (downloading it once) and moto (SQS and Secrets Manager), runs vet, formatting, the Go
# tests with the race detector (store, handler, template, emulator, headless-Chromium and
# end-to-end tests), cfn-lint, and a build of every Lambda bootstrap; it stops what it started
# by process id, whatever happens.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PLUME_ROOT"

need go
need python3 python3
need cfn-lint
need_moto
# The feedback-link page is tested in headless Chromium (functions/feedback).
need chromium chromium

trap emulator_stop EXIT INT TERM

log "== gofmt and go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*'))
[ -z "$unformatted" ] || die "gofmt would change: $unformatted"
go vet ./...

log "== cfn-lint template.yaml"
cfn-lint template.yaml

log "== Lambda bootstraps (linux/arm64, as deployed)"
make --no-print-directory build

emulator_start
export PLUME_TEST_DYNAMODB_URL=$EMULATOR_URL
aws_emulator_start
export PLUME_TEST_AWS_URL=$AWS_EMULATOR_URL

log "== go test -race"
go test -race -count=1 -timeout 20m ${GOTESTFLAGS:-} ./...

# The fake model server through the official OpenAI and Anthropic Go SDKs: a module of its own,
# so that the SDKs stay out of the project's go.mod (shared/llm/fakemodel/sdkcompat).
log "== go test: fake model server through the provider SDKs"
(cd shared/llm/fakemodel/sdkcompat && go vet ./... && go test -race -count=1 ${GOTESTFLAGS:-} ./...)

# The client's Transport under the official OpenAI Go SDK, against the whole API: a module of
# its own for the same reason (client/sdkcompat).
log "== go test: the client's Transport through openai-go"
(cd client/sdkcompat && go vet ./... && go test -race -count=1 ${GOTESTFLAGS:-} ./...)
