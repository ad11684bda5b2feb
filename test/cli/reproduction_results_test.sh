#!/usr/bin/env bash
# REPRODUCTION.md against the runs it was written from, committed without
# weights under results/small and results/smoke (scripts/keep_results.sh):
# the tables are redrawn from them alone (scripts/small_reproduction.sh and
# scripts/smoke_reproduction.sh --redraw, no training, no encoders); every
# pair-table row and quoted interval of REPRODUCTION.md must be one of theirs
# (scripts/reproduction_figures.py --runs), and every line of each table's
# side-by-side view (paper, smoke, small: scripts/side_by_side.py) must be a
# line of REPRODUCTION.md. Needs the dev files of ../shared/data, which the
# intervals pair.
set -euo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
data="${MTBERT_DATA:-}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"
cd "$src"

if [ -z "$(find results/small -name summary.json 2>/dev/null | head -1)" ]; then
  echo "SKIPPED: no committed runs under results/small"
  exit 0
fi
if [ -z "$data" ] || [ ! -f "$data/ids-sst-dev.csv" ]; then
  echo "SKIPPED: the data sets are not here (MTBERT_DATA), and the intervals pair their dev examples"
  exit 0
fi
# The runs' configs name the data as ../shared/data (relative to the checkout).
if [ "$(cd "$data" && pwd -P)" != "$(cd ../shared/data 2>/dev/null && pwd -P)" ]; then
  echo "SKIPPED: the runs' configs read ../shared/data, which is not $data here"
  exit 0
fi

MTBERT_BINARY="$bin" bash scripts/small_reproduction.sh --redraw results/small "$dir/tables" >"$dir/log" 2>&1 ||
  { cat "$dir/log"; fail "small_reproduction.sh --redraw results/small exits 0"; }
check "every table is drawn from the committed runs" test -s "$dir/tables/deberta_table2/p2p.md"
check "no run of the committed tables is missing" bash -c "! grep -h '^- .* missing' '$dir'/tables/*/*.md"
/usr/bin/python3 scripts/reproduction_figures.py --runs "$dir/tables" >"$dir/stale" 2>&1 ||
  { sed 's/^/  /' "$dir/stale"; fail "REPRODUCTION.md's pair tables and intervals are the committed runs'"; }
[ -s "$dir/stale" ] || ok "REPRODUCTION.md's pair tables and intervals are the committed runs'"
MTBERT_BINARY="$bin" bash scripts/smoke_reproduction.sh --redraw results/smoke "$dir/smoke" >"$dir/smoke.log" 2>&1 ||
  { cat "$dir/smoke.log"; fail "smoke_reproduction.sh --redraw results/smoke exits 0"; }
for table in final_table1 pal_table1 deberta_table2; do
  (cd scripts && /usr/bin/python3 side_by_side.py smoke="$dir/smoke/$table/table.csv" \
    small="$dir/tables/$table/table.csv") >"$dir/$table.md" || fail "side_by_side.py draws $table"
  check "REPRODUCTION.md holds $table's side-by-side table (paper, smoke, small) as the committed runs give it" \
    bash -c "! grep -vxF -f REPRODUCTION.md '$dir/$table.md'"
done
finish "REPRODUCTION.md against results/small"
