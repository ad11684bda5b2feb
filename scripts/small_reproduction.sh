#!/usr/bin/env bash
# The small-scale study of REPRODUCTION.md: the three reports' tables run on
# the small pretrained encoders (experiments/small.yaml), every row with 3
# seeds, plus the rows with pretrained DeBERTa-style encoders; then each
# table (Markdown, CSV, LaTeX, with 95% paired-bootstrap intervals against
# its reference row) and the figures.
#
#   scripts/small_reproduction.sh [ROOT [FIGURES]]   (default ROOT: runs/small; FIGURES: ROOT/figures)
#   scripts/small_reproduction.sh --redraw RUNS [ROOT [FIGURES]]
#
# --redraw RUNS trains nothing and needs no encoders: the tables and figures
# are drawn into ROOT from the finished runs under RUNS (e.g. results/small,
# the runs REPRODUCTION.md was written from, committed without weights by
# scripts/keep_results.sh); a missing run shows as such in its table.
#
# Budget, on this project's 2-core VM (2026-11-25): the three small encoders
# if they are missing (scripts/pretrain_small.sh: about 40 + 65 + 55 minutes
# of pretraining and 20 minutes of fine-tuning comparisons), then 54
# fine-tuning runs of about 2 minutes each (SST 800 / Quora 1,500 / STS 600
# training examples, 2 epochs, the whole dev sets evaluated three times per
# run): about 1 hour 45 minutes. So about 5 hours from a fresh clone, 1 hour
# 45 minutes with the encoders in place. The full training sets
# (tasks.<task>.limit_train=0, in SWEEP_OVERRIDES) take about 10 times as long.
#
# Resumable: finished runs are skipped, interrupted ones resumed; a second call
# only redraws the tables and figures. MTBERT_SMALL_ENCODERS names the folder
# of the encoders (default runs/pretrain-small), MTBERT_BINARY another mtbert,
# MTBERT_PYTHON a Python with matplotlib, SWEEP_OVERRIDES key=value overrides
# for every run (e.g. a smaller budget for a test).
set -euo pipefail
cd "$(dirname "$0")/.."
redraw=""
if [ "${1:-}" = --redraw ]; then
  redraw="${2:?--redraw needs the folder of the runs}"
  [ -d "$redraw" ] || { echo "small_reproduction: --redraw $redraw: no such folder" >&2; exit 2; }
  shift 2
fi
root="${1:-runs/small}"
figures="${2:-$root/figures}"
data="${MTBERT_DATA:-../shared/data}"
encoders="${MTBERT_SMALL_ENCODERS:-runs/pretrain-small}"
export MTBERT_SMALL_ENCODERS="$encoders"
mtbert="${MTBERT_BINARY:-build/mtbert}"
python="${MTBERT_PYTHON:-/usr/bin/python3}"
read -r -d "" -a sweep_overrides <<<"${SWEEP_OVERRIDES:-}" || true  # every line: the variables may span several
if [ ! -f "$data/ids-sst-train.csv" ]; then
  echo "SKIPPED: the data sets are not at $data (set MTBERT_DATA)"
  exit 0
fi

# The runs the tables are drawn from.
runs="${redraw:-$root}"
if [ -z "$redraw" ]; then
  for encoder in bert_small deberta_small deberta_small_noemd; do
    if ! grep -q '"status": "finished"' "$encoders/$encoder/summary.json" 2>/dev/null; then
      bash scripts/pretrain_small.sh "$encoders"
      break
    fi
  done
  for table in final_table1 pal_table1 deberta_table2; do
    "$mtbert" sweep "experiments/sweeps/small/$table.yaml" --overlay experiments/small.yaml --out "$root/$table" \
      "${sweep_overrides[@]}"
  done
fi

# report TABLE SWEEP OUT [STEM=LABEL...]: the table in md, csv and tex, again
# against the row LABEL as STEM.{md,csv,tex} beside OUT for each STEM=LABEL,
# and the charts: one mtbert and one Python process per table.
report() {
  local table="$1" sweep="$2" out="$3"; shift 3
  local outs=("$out") also=() pair
  for pair in "$@"; do
    also+=(--also-against "$pair")
    outs+=("$(dirname "$out")/${pair%%=*}")
  done
  "$mtbert" report "$table" --sweep "experiments/sweeps/small/$sweep.yaml" --runs "$runs/$sweep" \
    -o "$out.md" -o "$out.csv" -o "$out.tex" "${also[@]}"
  local csvs=() pngs=() each figure
  for each in "${outs[@]}"; do
    figure="${each#"$root"/}"
    csvs+=("$each.csv")
    pngs+=(--out "$figures/${figure//\//-}.png")
  done
  "$python" scripts/plot_table.py "${csvs[@]}" "${pngs[@]}" \
    --title "$(sed -n 's/^title: "\(.*\)"$/\1/p' "$table") (small scale)"
}
mkdir -p "$figures"
for table in final_table1 pal_table1 deberta_table2; do mkdir -p "$root/$table"; done
# Each row of the final and DeBERTa tables adds one thing to the row above
# it, and the PAL report reads its frozen rows against each other: the claims
# of REPRODUCTION.md compare those pairs too (vs-NAME beside each table).
report experiments/tables/final_table1.yaml final_table1 "$root/final_table1/table" \
  "vs-gradient_surgery=baseline + gradient surgery" "vs-cosine=cosine similarity (GS)" "vs-dropout=+ dropout"
report experiments/tables/pal_table1.yaml pal_table1 "$root/pal_table1/table" "vs-frozen=frozen BERT"
report experiments/tables/deberta_table2.yaml deberta_table2 "$root/deberta_table2/table" \
  "vs-disentangled=disentangled attention" "vs-log_bucket=+ log bucketing" "vs-emd=+ enhanced mask decoder"
report experiments/tables/small/deberta_pretrained.yaml deberta_table2 "$root/deberta_table2/pretrained" \
  "pretrained-vs-not=not pretrained (BERT weights, EMD)" "pretrained-vs-emd=pretrained with EMD" \
  "pretrained-vs-not-noemd=not pretrained (BERT weights, no EMD)"
report experiments/tables/small/deberta_p2p.yaml deberta_table2 "$root/deberta_table2/p2p"

# Training curves of one row per table (its first seed).
for run in final_table1/smart pal_table1/finetuned_pal deberta_table2/pretrained_emd; do
  if [ -f "$runs/$run-seed11711/summary.json" ]; then
    "$python" scripts/plot_run.py "$runs/$run-seed11711" --out "$figures/${run//\//-}" >/dev/null
  fi
done
for table in final_table1 pal_table1 deberta_table2; do
  echo
  cat "$root/$table/table.md"
done
echo
cat "$root/deberta_table2/pretrained.md"
echo "tables: $root/*/*.{md,csv,tex}; figures: $figures"
# REPRODUCTION.md's pair tables are copies of these runs' tables, and its
# prose quotes their cells (scripts/reproduction_figures.py checks both).
stale="$("$python" scripts/reproduction_figures.py --runs "$root" | wc -l)" || true
if [ "$stale" -gt 0 ]; then
  echo "REPRODUCTION.md: $stale pair-table rows or figures differ from these runs; copy the tables from $root" \
    "(scripts/reproduction_figures.py --runs $root lists them)"
fi
