#!/usr/bin/env bash
# Copies what tables and figures are drawn from out of the finished runs
# under RUNS into RESULTS, a folder small enough to commit: each run's
# summary.json, metrics.jsonl, config.resolved.yaml, model_config.json and
# dev predictions (predictions/*-dev-output.csv, which `mtbert report`'s
# paired bootstrap reads), at the same relative path. No checkpoints, no
# weights, no tokenizer. Unfinished runs are left out; a run kept earlier is
# replaced by its current files.
#
#   scripts/keep_results.sh RUNS RESULTS     (e.g. runs/small results/small)
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: scripts/keep_results.sh RUNS RESULTS" >&2
  exit 2
fi
runs="${1%/}" results="${2%/}"
if [ ! -d "$runs" ]; then
  echo "keep_results: $runs is not a folder" >&2
  exit 2
fi
kept=0
while IFS= read -r -d '' summary; do
  run="$(dirname "$summary")"
  grep -Eq '"status": "(finished|early_stopped)"' "$summary" || continue
  target="$results/${run#"$runs"/}"
  [ "$run" = "$runs" ] && target="$results"
  rm -rf "$target.tmp"
  mkdir -p "$target.tmp"
  for file in summary.json metrics.jsonl config.resolved.yaml model_config.json; do
    if [ -f "$run/$file" ]; then cp "$run/$file" "$target.tmp/"; fi
  done
  if compgen -G "$run/predictions/*-dev-output.csv" >/dev/null; then
    mkdir -p "$target.tmp/predictions"
    cp "$run"/predictions/*-dev-output.csv "$target.tmp/predictions/"
  fi
  rm -rf "$target"
  mv "$target.tmp" "$target"
  kept=$((kept + 1))
done < <(find "$runs" -name summary.json -not -path "*/checkpoints/*" -print0 | sort -z)
echo "kept $kept finished run(s) of $runs in $results"
