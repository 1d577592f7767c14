#!/usr/bin/env bash
# make dev: the whole API on one local port, in the foreground until Ctrl-C. It starts the
# DynamoDB emulator (DynamoDB Local by default, EMULATOR=moto for moto) and plume-local, which
# creates the table and bucket, embeds S3 (gofakes3) unless AWS_ENDPOINT_URL_S3 is set, seeds
# the dev project and key and prints how to call it and where the dashboard is (sign in with
# the printed key). Ctrl-C stops everything it started.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PLUME_ROOT"

need go
need python3 python3

trap 'kill "${LOCAL_PID:-}" 2>/dev/null || true; wait "${LOCAL_PID:-}" 2>/dev/null || true; emulator_stop' EXIT
trap 'exit 130' INT TERM

if [ -z "${AWS_ENDPOINT_URL_DYNAMODB:-}" ]; then
  emulator_start
  export AWS_ENDPOINT_URL_DYNAMODB=$EMULATOR_URL
fi
export AWS_REGION=${AWS_REGION:-us-east-1}
export AWS_ACCESS_KEY_ID=${AWS_ACCESS_KEY_ID:-local} AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY:-local}

mkdir -p "$PLUME_CACHE/bin"
go build -o "$PLUME_CACHE/bin/plume-local" ./cmd/plume-local
"$PLUME_CACHE/bin/plume-local" &
LOCAL_PID=$!
wait "$LOCAL_PID"
