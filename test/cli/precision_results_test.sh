#!/usr/bin/env bash
# docs/experiments.md's bf16-against-fp32 table (section "bf16 or fp32") against the runs it
# was written from, committed without weights under results/precision
# (scripts/keep_results.sh): `mtbert report` redraws both tables from them
# alone, and the page's rows must be theirs, number for number.
set -euo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"
cd "$src"

for table in precision:quickstart precision_deberta:DeBERTa-style; do
  name="${table%%:*}" label="${table#*:}"
  "$bin" report "experiments/tables/studies/$name.yaml" --runs results/precision >"$dir/$name.md" 2>"$dir/err" ||
    { cat "$dir/err"; fail "mtbert report experiments/tables/studies/$name.yaml --runs results/precision exits 0"; continue; }
  check "$name: no run is missing" bash -c "! grep -q 'missing or unfinished' '$dir/$name.md'"
  for precision in fp32 bf16; do
    # The report's row "| fp32 | 3 | ..." is the page's "| quickstart, fp32 | 3 | ...".
    row="$(grep -m1 "^| $precision | " "$dir/$name.md" | sed "s/^| $precision |/| $label, $precision |/")"
    check "$name: docs/experiments.md's $precision row is the committed runs' ($row)" grep -qxF -- "$row" docs/experiments.md
  done
done
finish "docs/experiments.md's bf16 table against results/precision"
