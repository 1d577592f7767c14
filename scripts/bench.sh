#!/usr/bin/env bash
# make bench: the hot-path benchmarks, six runs each against DynamoDB Local, summarised with
# benchstat. Results go to .cache/bench/<timestamp>.txt; pass BASE=<file> to compare with an
# earlier run (benchstat BASE new).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PLUME_ROOT"
need go

trap emulator_stop EXIT INT TERM
emulator_start
export PLUME_TEST_DYNAMODB_URL=$EMULATOR_URL

mkdir -p "$PLUME_CACHE/bench"
out=$PLUME_CACHE/bench/$(date -u +%Y%m%dT%H%M%SZ).txt
go test -run '^$' -bench "${BENCH:-.}" -benchmem -count "${COUNT:-6}" \
  ./functions/... ./shared/... 2>/dev/null | tee "$out" | grep -E '^(Benchmark|ok|FAIL)' >&2
log "raw results: $out"
benchstat() { go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$@"; }
if [ -n "${BASE:-}" ]; then benchstat "$BASE" "$out"; else benchstat "$out"; fi
