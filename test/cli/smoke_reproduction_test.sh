#!/usr/bin/env bash
# The whole chain of issue "reports as YAML": scripts/smoke_reproduction.sh
# trains every row of the three reports' tables in the smoke setting, writes
# each table (md, csv, tex) and each run's figures. Checks that all of them
# exist, that every row has its run, and that the tables say they are smoke
# runs. SKIPPED without ../shared/data. A few minutes.
set -euo pipefail

src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"

out="$("$src/scripts/smoke_reproduction.sh" "$dir/smoke" 2>"$dir/log")" || { cat "$dir/log"; exit 1; }
if grep -q "SKIPPED:" <<<"$out"; then echo "$out"; exit 0; fi

declare -A rows=([deberta_table2]=5 [final_table1]=5 [pal_table1]=5)
for table in "${!rows[@]}"; do
  for ext in md csv tex; do check "$table.$ext written" test -s "$dir/smoke/$table/table.$ext"; done
  check "$table: banner" grep -q "SMOKE RUNS, NOT THE PAPERS' SETTING" "$dir/smoke/$table/table.md"
  check "$table: booktabs" grep -q '\\toprule' "$dir/smoke/$table/table.tex"
  check "$table: the rows against the table's reference row" grep -q '^### Against ' "$dir/smoke/$table/table.md"
  check "$table: no missing runs" bash -c "! grep -qi 'missing' '$dir/smoke/$table/table.md'"
  runs=$(find "$dir/smoke/$table" -mindepth 2 -maxdepth 2 -name summary.json | wc -l)
  check "$table: ${rows[$table]} finished runs ($runs)" test "$runs" -eq "${rows[$table]}"
  for run in "$dir/smoke/$table"/*/; do
    for figure in training-curves para-dev-confusion sst-dev-histogram sts-dev-histogram attention-L0_Hall; do
      check "$(basename "$run") $figure.png" test -s "$run/figures/$figure.png"
    done
    check "$(basename "$run") finished" grep -q '"status": "finished"' "$run/summary.json"
  done
done

# The smoke overlay gives every PAL row rank 16: the report says that the
# rows' ranks (132 for the report's top block, 204 for parallel PALs) did not
# reach the runs.
check "report warns of the overlay's pals.rank" grep -q "set model.pals.rank to 204 / 132, but every run trained" "$dir/log"

finish "smoke reproduction"
