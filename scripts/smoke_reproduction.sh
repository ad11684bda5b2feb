#!/usr/bin/env bash
# Smoke reproduction of the three reports' tables: every row's experiment,
# run with the smoke overlay (experiments/smoke.yaml: a tiny random encoder on
# small subsets of ../shared/data), then each table in Markdown, CSV and
# LaTeX, and each run's figures (training curves, confusion matrix,
# histograms, attention heatmaps of its fine-tuned encoder). A few minutes on
# 2 cores. It proves the chain, not the papers' numbers: the tables say so.
#
#   scripts/smoke_reproduction.sh [ROOT]      (default ROOT: runs/smoke)
#   scripts/smoke_reproduction.sh --redraw RUNS ROOT
#
# Finished runs are kept: a second call only redraws tables and figures.
# --redraw RUNS trains nothing: the three tables are drawn into ROOT from the
# finished runs under RUNS (results/smoke, the runs REPRODUCTION.md's smoke
# columns come from, committed without weights by scripts/keep_results.sh);
# no figures (the attention heatmaps need the weights).
# Needs a built mtbert (scripts/build.sh) and the data sets (MTBERT_DATA,
# default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
redraw=""
if [ "${1:-}" = --redraw ]; then
  [ $# -eq 3 ] || { echo "usage: scripts/smoke_reproduction.sh --redraw RUNS ROOT" >&2; exit 2; }
  redraw="$2"
  [ -d "$redraw" ] || { echo "smoke_reproduction: --redraw $redraw: no such folder" >&2; exit 2; }
  shift 2
fi
root="${1:-runs/smoke}"
data="${MTBERT_DATA:-../shared/data}"
mtbert="${MTBERT_BINARY:-build/mtbert}"
python="${MTBERT_PYTHON:-/usr/bin/python3}"
if [ ! -f "$data/ids-sst-train.csv" ]; then
  echo "SKIPPED: the data sets are not at $data (set MTBERT_DATA)"
  exit 0
fi

for table in deberta_table2 final_table1 pal_table1; do
  runs="${redraw:-$root}/$table"
  mkdir -p "$root/$table"
  [ -n "$redraw" ] || "$mtbert" sweep "experiments/sweeps/$table.yaml" --overlay experiments/smoke.yaml --out "$runs"
  "$mtbert" report "experiments/tables/$table.yaml" --runs "$runs" \
    -o "$root/$table/table.md" -o "$root/$table/table.csv" -o "$root/$table/table.tex"
  [ -z "$redraw" ] || continue
  for run in "$runs"/*/; do
    run="${run%/}"
    # Outside the run folder (a command never writes inside a folder it reads).
    attention="$root/attention/$table/$(basename "$run")/attention.pt"
    mkdir -p "$(dirname "$attention")"
    "$mtbert" attention --run "$run" --text "the movie is a charming , funny ride ." --output "$attention"
    "$python" scripts/plot_run.py "$run" --attention "$attention" >/dev/null
  done
  echo
  cat "$runs/table.md"
  echo
done
echo "tables: $root/*/table.{md,csv,tex}; figures: $root/*/*/figures/"
