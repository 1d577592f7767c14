#!/usr/bin/env bash
# make scale: what each read costs as a project grows tenfold. It starts a DynamoDB Local of its
# own (not make test's; a large heap, in memory unless SCALE_DB_PATH names a folder), puts
# ddbtap (/work/shared/tools/ddbtap.py, or $PLUME_DDBTAP) in front of it to price every request
# by AWS's billing rules, and runs cmd/plumescale: the whole stack in-process with an embedded
# S3, loaded through POST /spans to SCALE_SPANS spans, measured, loaded to ten times as many,
# measured again. It prints the ingest cost of each step and, per query, read units, requests,
# bytes and time at both sizes with their ratios (docs/scale.md). Everything it started is
# stopped by process id, whatever happens. Not part of make test.
#
# SCALE_SPANS (100000: 100k then 1M spans), SCALE_FACTOR (10), SCALE_BATCH (20 spans per POST,
# as the Python SDK sends), SCALE_CONCURRENCY (8), SCALE_DAYS (10), SCALE_HEAP (8g),
# SCALE_DB_PATH (unset: in memory), SCALE_BIG_TRACE (spans of the big traces; see -big-trace),
# SCALE_TAP_IMAGES=1 (ddbtap reads each written item before and after the write to price an
# update by the item's size, not the request's: exact, and about three times the requests). `make scale SCALE_SPANS=2000` runs in a few minutes.
# Results go to .cache/scale/<timestamp>/ (the tables, the JSON figures, ddbtap's log).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PLUME_ROOT"

need go
need python3 python3
ddbtap=${PLUME_DDBTAP:-/work/shared/tools/ddbtap.py}
[ -f "$ddbtap" ] || die "ddbtap is not at $ddbtap: set PLUME_DDBTAP to the path of ddbtap.py"

spans=${SCALE_SPANS:-100000}
factor=${SCALE_FACTOR:-10}
batch=${SCALE_BATCH:-20}
concurrency=${SCALE_CONCURRENCY:-8}
days=${SCALE_DAYS:-10}

TAP_PID=
cleanup() {
  stop_pid "$TAP_PID"
  emulator_stop
}
trap cleanup EXIT INT TERM

out=$PLUME_CACHE/scale/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out" "$PLUME_CACHE/bin"
bin=$PLUME_CACHE/bin/plumescale
go build -o "$bin" ./cmd/plumescale || die "go build ./cmd/plumescale failed"

# A DynamoDB Local of its own, on a free port: make test's keeps serving the other tests.
unset PLUME_DYNAMODB_PORT
EMULATOR=dynamodb-local DDB_LOCAL_HEAP=${SCALE_HEAP:-8g} DDB_LOCAL_DB_PATH=${SCALE_DB_PATH:-} \
  DDB_LOCAL_LOG_NAME=dynamodb-local-scale emulator_start

tap_port=$(free_port)
images=()
[ "${SCALE_TAP_IMAGES:-0}" = 1 ] && images=(--images)
python3 "$ddbtap" "$tap_port" "$EMULATOR_URL" "$out/ddbtap.jsonl" "${images[@]}" >"$out/ddbtap.log" 2>&1 &
TAP_PID=$!
wait_port "$tap_port" "$TAP_PID" ddbtap "$out/ddbtap.log" || exit 1
log "ddbtap is pricing requests on http://127.0.0.1:$tap_port (pid $TAP_PID, log $out/ddbtap.jsonl)"

env -u AWS_ENDPOINT_URL -u AWS_ENDPOINT_URL_S3 -u AWS_PROFILE \
  AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$tap_port" AWS_REGION=us-east-1 \
  AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local \
  "$bin" -tap "http://127.0.0.1:$tap_port" -tap-log "$out/ddbtap.jsonl" -streams "$EMULATOR_URL" \
  -spans "$spans" -factor "$factor" ${SCALE_BIG_TRACE:+-big-trace "$SCALE_BIG_TRACE"} -batch "$batch" -concurrency "$concurrency" -days "$days" \
  -json "$out/scale.json" 2>"$out/plumescale.log" | tee "$out/scale.txt"
status=${PIPESTATUS[0]}
[ "$status" = 0 ] || { tail -n 20 "$out/plumescale.log" >&2; die "plumescale failed (log: $out/plumescale.log)"; }
log "tables: $out/scale.txt, figures: $out/scale.json, every request priced: $out/ddbtap.jsonl"
