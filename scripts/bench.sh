#!/usr/bin/env bash
# make bench: the hot-path benchmarks, six runs each against DynamoDB Local, summarised with
# benchstat, each .../floor benchmark's siblings shown as a ratio to it (cmd/plume-benchratio),
# then OTLP decode+map beside pdata's unmarshal (x-pdata, CPU time on one core), then every
# function's cold start and bootstrap size beside a hello world (cmd/plume-coldstart, COLD_RUNS
# rounds, 20 by default; COLD_RUNS=0 skips it). Results go to .cache/bench/<timestamp>.txt,
# <timestamp>-otlp.txt and <timestamp>-coldstart.md; pass BASE=<file> to compare with an earlier
# run (benchstat BASE new).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PLUME_ROOT"
need go

trap emulator_stop EXIT INT TERM
DDB_LOCAL_SHARED_DB=0 emulator_start # a database per test process (blobtest.AccessKey)
export PLUME_TEST_DYNAMODB_URL=$EMULATOR_URL

mkdir -p "$PLUME_CACHE/bench"
out=$PLUME_CACHE/bench/$(date -u +%Y%m%dT%H%M%SZ).txt
go test -run '^$' -bench "${BENCH:-.}" -benchmem -count "${COUNT:-6}" \
  ./functions/... ./shared/... 2>/dev/null | tee "$out" | grep -E '^(Benchmark|ok|FAIL)' >&2
log "raw results: $out"
benchstat() { go run golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da "$@"; }
if [ -n "${BASE:-}" ]; then benchstat "$BASE" "$out"; else benchstat "$out"; fi
# Each .../floor benchmark beside its siblings (the gateway beside a bare passthrough).
go run ./cmd/plume-benchratio <"$out"

# OTLP decode+map beside the Collector's pdata unmarshal alone, in CPU time on one core, the two
# run in turn (issue 31: x-pdata at most 1 for both encodings).
otlp=${out%.txt}-otlp.txt
go test -run '^$' -bench DecodeMapRatio -cpu 1 -count "${COUNT:-6}" ./shared/otlp/ 2>/dev/null > "$otlp"
log "OTLP decode+map / pdata unmarshal (CPU time): $otlp"
benchstat "$otlp"

if [ "${COLD_RUNS:-20}" != 0 ]; then
  cold=${out%.txt}-coldstart.md
  go run ./cmd/plume-coldstart -runs "${COLD_RUNS:-20}" -inittrace 5 | tee "$cold"
  log "cold starts: $cold"
fi
