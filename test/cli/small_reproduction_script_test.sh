#!/usr/bin/env bash
# scripts/small_reproduction.sh end to end in about a minute, on a data folder
# made here (the committed quickstart tasks, a few lines as the Brown Corpus,
# the fixtures' vocabulary as bert-base-uncased's): the three tiny encoders
# pretrained through scripts/pretrain_small.sh (tiny model and budget in
# PRETRAIN_OVERRIDES), all 54 runs of the three small sweeps on a few examples
# (SWEEP_OVERRIDES), the tables with their intervals and the figures; a
# second call trains nothing.
set -euo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
fixtures="${MTBERT_FIXTURES:?MTBERT_FIXTURES must name the test fixtures}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"
cd "$src"

source "$(dirname "${BASH_SOURCE[0]}")/lib/data_folder.sh"
# Short dev files, used whole: the overlay draws random training subsets per
# seed, and a row's seeds must predict the same dev examples.
for file in "$data"/*-dev.csv; do head -n 41 "$file" >"$file.head" && mv "$file.head" "$file"; done

export MTBERT_DATA="$data" MTBERT_BINARY="$bin" MTBERT_SMALL_ENCODERS="$dir/encoders"
export PRETRAIN_OVERRIDES="model.config.hidden_size=32 model.config.num_attention_heads=2
  model.config.intermediate_size=64 train.max_steps=2 train.batch_size=4 train.eval_every_steps=2
  train.eval_segments=8 corpus.cache_dir=$dir/cache threads=1"
export FINETUNE_OVERRIDES="train.epochs=1 threads=1 tasks.sst.limit_train=8 tasks.para.limit_train=8
  tasks.sts.limit_train=8 tasks.sst.limit_dev=8 tasks.para.limit_dev=8 tasks.sts.limit_dev=8"
export SWEEP_OVERRIDES="train.epochs=1 threads=1 tasks.sst.limit_train=16 tasks.para.limit_train=16
  tasks.sts.limit_train=16 model.pals.rank=8 model.pals.heads=2"

bash scripts/small_reproduction.sh "$dir/small" >"$dir/log" 2>&1 || { cat "$dir/log"; fail "small_reproduction.sh exits 0"; }
for encoder in bert_small deberta_small deberta_small_noemd; do
  check "encoder $encoder" grep -q '"status": "finished"' "$dir/encoders/$encoder/summary.json"
done
check "54 finished runs" test "$(grep -l '"status": "finished"' "$dir"/small/*/*/summary.json | wc -l)" -eq 54
check "a pretrained DeBERTa-style row loads its encoder" grep -qF "deberta_small_noemd/model" \
  "$dir/small/deberta_table2/pretrained_noemd-seed2/config.resolved.yaml"
check "runs carry the small tag" grep -qF 'tags: ["small"]' "$dir/small/pal_table1/frozen-seed1/config.resolved.yaml"
for table in final_table1/table pal_table1/table deberta_table2/table deberta_table2/pretrained \
             deberta_table2/pretrained-vs-not deberta_table2/pretrained-vs-emd deberta_table2/pretrained-vs-not-noemd \
             deberta_table2/p2p; do
  for extension in md csv tex; do check "$table.$extension" test -s "$dir/small/$table.$extension"; done
  check "figure of $table" test -s "$dir/small/figures/${table//\//-}.png"
done
check "the small banner" grep -q "Small-scale runs, not the papers' setting" "$dir/small/final_table1/table.md"
check "three seeds per row" grep -q "^| baseline | 3 |" "$dir/small/final_table1/table.md"
check "the small sweep named" grep -q "(sweep \`experiments/sweeps/small/final_table1.yaml\`)" \
  "$dir/small/final_table1/table.md"
check "intervals against the reference row" grep -q "gradient_surgery,dev,3,3,.*,baseline," \
  "$dir/small/final_table1/table.csv"
check "the second reference" grep -qF ',"not pretrained (BERT weights, EMD)",' \
  "$dir/small/deberta_table2/pretrained-vs-not.csv"
check "each row against the row it adds to" grep -qF ',cosine similarity (GS),' "$dir/small/final_table1/vs-cosine.csv"
check "training curves of one row per table" test "$(ls "$dir"/small/figures/*/training-curves.png | wc -l)" -eq 3

# What is committed of the runs: no checkpoints or weights.
bash scripts/keep_results.sh "$dir/small" "$dir/results" >"$dir/keep.log" 2>&1 || fail "keep_results.sh exits 0"
check "keep_results: every finished run" grep -q "^kept 54 finished run(s)" "$dir/keep.log"
check "  ... its summary, metrics, config and dev predictions" test -s "$dir/results/final_table1/baseline-seed1/summary.json" \
  -a -s "$dir/results/final_table1/baseline-seed1/metrics.jsonl" -a -s "$dir/results/final_table1/baseline-seed1/config.resolved.yaml" \
  -a -s "$dir/results/final_table1/baseline-seed1/predictions/sst-dev-output.csv"
check "  ... no checkpoints, no tokenizer, no test predictions" \
  test -z "$(find "$dir/results" -name checkpoints -o -name tokenizer -o -name '*-test-output.csv')"
mv "$dir/encoders" "$dir/encoders.away"  # a redraw needs none
bash scripts/small_reproduction.sh --redraw "$dir/results" "$dir/redrawn" >"$dir/redraw.log" 2>&1 ||
  { cat "$dir/redraw.log"; fail "small_reproduction.sh --redraw exits 0"; }
mv "$dir/encoders.away" "$dir/encoders"
check "--redraw trains nothing" test "$(grep -c "^\[.* info\] starting " "$dir/redraw.log")" -eq 0
csvs=$(cd "$dir/small" && ls */*.csv)
check "  ... and draws every table's CSV, intervals included, as the runs' own" \
  bash -c "cd '$dir' && for f in $(echo $csvs); do cmp -s small/\$f redrawn/\$f || exit 1; done"
check "  ... and the figures" test "$(ls "$dir/redrawn/figures"/*.png | wc -l)" -eq "$(ls "$dir/small/figures"/*.png | wc -l)"

bash scripts/small_reproduction.sh "$dir/small" >"$dir/log2" 2>&1 || fail "a second call exits 0"
check "a second call trains nothing" test "$(grep -c "^\[.* info\] starting " "$dir/log2")" -eq 0
finish "small_reproduction.sh"
