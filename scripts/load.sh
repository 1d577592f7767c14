#!/usr/bin/env bash
# make load: load figures of the local stack. It starts DynamoDB Local and plume-local (built
# with a pprof listener, below), runs cmd/plume-load's scenarios one after the other (span
# batches of 20 as the Python SDK sends them and of 100 as the TypeScript SDK does, OTLP
# protobuf exports, the SDKs' prompt fetches), prints each one's throughput, latency
# percentiles, errors and the CPU time of plume-local, DynamoDB Local and the load tool, takes
# a CPU profile of plume-local over each measured phase and prints its top entries, and stops
# what it started by process id, whatever happens. Not part of make test: the figures depend on
# the machine (client, server and emulator share its CPUs).
#
# plume-local serves net/http/pprof on PLUME_PPROF_ADDR (a loopback listener of its own), which
# the load tool reads the profiles from.
#
# LOAD_DURATION (15s), LOAD_WARMUP (2s), LOAD_CONCURRENCY (8) and LOAD_SCENARIOS ("spans:20
# spans:100 otlp:100 prompts") change the runs; results go to .cache/load/<timestamp>/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PLUME_ROOT"

need go
need python3 python3

duration=${LOAD_DURATION:-15s}
warmup=${LOAD_WARMUP:-2s}
concurrency=${LOAD_CONCURRENCY:-8}
scenarios=${LOAD_SCENARIOS:-spans:20 spans:100 otlp:100 prompts}

cleanup() {
  plume_local_stop
  emulator_stop
}
trap cleanup EXIT INT TERM

out=$PLUME_CACHE/load/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out" "$PLUME_CACHE/bin"
load_bin=$PLUME_CACHE/bin/plume-load
go build -o "$load_bin" ./cmd/plume-load || die "go build ./cmd/plume-load failed"

emulator_start
project=3f6b2c1d-8e4a-4b7c-9d2e-5a1f0c7b8e6d
key=plm_LoadGenerator000000000000000000000000
pprof_port=$(free_port)
PLUME_PPROF_ADDR=127.0.0.1:$pprof_port plume_local_start "$key" "$project" || exit 1
wait_port "$pprof_port" "$PLUME_LOCAL_PID" "plume-local's pprof listener" "$PLUME_CACHE/logs/plume-local.log" || exit 1
log "plume-local profiling on http://127.0.0.1:$pprof_port/debug/pprof/"

for sc in $scenarios; do
  name=${sc%%:*}
  batch=
  [ "$sc" = "$name" ] || batch=${sc#*:}
  label=$name${batch:+-$batch}
  log "== $label"
  "$load_bin" -url "$PLUME_LOCAL_URL" -key "$key" -project-id "$project" -scenario "$name" ${batch:+-batch "$batch"} \
    -concurrency "$concurrency" -duration "$duration" -warmup "$warmup" \
    -watch "plume-local=$PLUME_LOCAL_PID" -watch "dynamodb-local=$EMULATOR_PID" \
    -pprof-url "http://127.0.0.1:$pprof_port" -profile-out "$out/cpu-$label.pprof" -json "$out/$label.json" \
    || die "plume-load $label failed"
  if [ -s "$out/cpu-$label.pprof" ]; then
    counts=$(python3 -c 'import json, sys; t = json.load(open(sys.argv[1]))["total"]; print(t["requests"], t.get("spans", 0))' "$out/$label.json")
    echo
    echo "plume-local CPU profile, $label (flat, top 15):"
    go tool pprof -top -nodecount=15 "$PLUME_CACHE/bin/plume-local" "$out/cpu-$label.pprof" 2>/dev/null | sed -n '5,30p'
    echo
    go tool pprof -traces "$PLUME_CACHE/bin/plume-local" "$out/cpu-$label.pprof" 2>/dev/null \
      | "$load_bin" profile-summary -requests "${counts% *}" -spans "${counts#* }"
  fi
done

log "reports and profiles: $out (go tool pprof -http=: $PLUME_CACHE/bin/plume-local $out/cpu-<scenario>.pprof)"
