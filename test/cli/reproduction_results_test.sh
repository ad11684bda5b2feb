#!/usr/bin/env bash
# REPRODUCTION.md against the runs it was written from, committed without
# weights under results/small (scripts/keep_results.sh): the tables are
# redrawn from them alone (scripts/small_reproduction.sh --redraw, no
# training, no encoders), and every pair-table row and quoted interval of
# REPRODUCTION.md must be one of theirs (scripts/reproduction_figures.py
# --runs). Needs the dev files of ../shared/data, which the intervals pair.
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
finish "REPRODUCTION.md against results/small"
