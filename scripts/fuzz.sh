#!/usr/bin/env bash
# make fuzz: every fuzz target of the repository (or those matching FUZZ, a regexp of their
# names) fuzzed for FUZZTIME each (20s by default), one after another, against DynamoDB Local
# for the packages that need it. make test runs only their seed corpora.
#
# New interesting inputs are minimized for at most FUZZMINIMIZE (2s by default): the Go
# fuzzer's default of 60 s per input stalls the OTLP decoders' targets, whose seeds are whole
# exports of hundreds of spans, for the whole run while it reports 0 executions a second.
# A failing input is written under the package's testdata/fuzz/<target>/: commit it as a seed
# with the fix.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PLUME_ROOT"
need go

trap emulator_stop EXIT INT TERM
DDB_LOCAL_SHARED_DB=0 emulator_start # a database per test process (blobtest.AccessKey)
export PLUME_TEST_DYNAMODB_URL=$EMULATOR_URL

failed=()
while IFS=: read -r file name; do
  pkg=./$(dirname "$file")
  [[ $name =~ ${FUZZ:-.} ]] || continue
  log "fuzzing $name in $pkg for ${FUZZTIME:-20s}"
  if ! go test -run '^$' -fuzz "^$name\$" -fuzztime "${FUZZTIME:-20s}" \
    -fuzzminimizetime "${FUZZMINIMIZE:-2s}" "$pkg"; then
    failed+=("$pkg $name")
  fi
done < <(git grep -o -E '^func Fuzz[A-Za-z0-9_]*' -- '*_test.go' | sed 's/:func /:/')
if ((${#failed[@]})); then
  printf 'fuzzing failed: %s\n' "${failed[@]}" >&2
  exit 1
fi
