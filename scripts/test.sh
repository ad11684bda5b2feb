#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite (CTest). Tests whose inputs are
# absent on this machine (../shared/data, a GPU, the real bert-base-uncased)
# are reported as skipped, not passed. Arguments go to ctest (-R REGEX, ...).
# The time of each phase is printed at the end, whatever the outcome.
set -euo pipefail
cd "$(dirname "$0")/.."
times=()
timed() {  # timed NAME COMMAND...: runs it and records how long it took
  local name="$1" status=0 start=$SECONDS
  shift
  "$@" || status=$?
  times+=("$name $((SECONDS - start)) s")
  return "$status"
}
report_times() { [ ${#times[@]} -eq 0 ] || echo "test.sh: $(IFS=,; echo "${times[*]}" | sed 's/,/, /g')"; }
trap report_times EXIT
timed set-up scripts/setup.sh
timed build scripts/build.sh
timed tests ctest --test-dir build --output-on-failure -j "${MTBERT_TEST_JOBS:-2}" "$@"
