#!/usr/bin/env bash
# scripts/pretrain_small.sh end to end in seconds, on a data folder made here
# (the committed quickstart tasks, a few lines as the Brown Corpus, the
# fixtures' vocabulary as bert-base-uncased's) with a tiny model and budget
# given through PRETRAIN_OVERRIDES and FINETUNE_OVERRIDES: both encoders
# pretrained, the three fine-tunes, the table of MLM figures and dev scores,
# the curves figure and the fill-mask examples; a second call skips every
# finished run.
set -euo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
fixtures="${MTBERT_FIXTURES:?MTBERT_FIXTURES must name the test fixtures}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"
cd "$src"

source "$(dirname "${BASH_SOURCE[0]}")/lib/data_folder.sh"

tiny="model.config.hidden_size=32 model.config.num_attention_heads=2 model.config.intermediate_size=64"
export MTBERT_DATA="$data" MTBERT_BINARY="$bin"
export PRETRAIN_OVERRIDES="$tiny train.max_steps=4 train.batch_size=4 train.eval_every_steps=2 train.eval_segments=8
  corpus.cache_dir=$dir/cache threads=1"
limits="tasks.sst.limit_train=48 tasks.para.limit_train=48 tasks.sts.limit_train=48 tasks.sst.limit_dev=24
  tasks.para.limit_dev=24 tasks.sts.limit_dev=24"
export FINETUNE_OVERRIDES="train.epochs=1 threads=1 $limits"

bash scripts/pretrain_small.sh "$dir/out" >"$dir/log" 2>&1 || { cat "$dir/log"; fail "pretrain_small.sh exits 0"; }
for run in bert_small deberta_small deberta_small_noemd finetune-random finetune-bert_small finetune-deberta_small; do
  check "$run finished" grep -q '"status": "finished"' "$dir/out/$run/summary.json"
done
check "the random baseline has the small shape" grep -q '"hidden_size": 256' "$dir/out/finetune-random/model_config.json"
check "fine-tuning starts from the pretrained folder" \
  grep -qF "pretrained: \"$dir/out/deberta_small/model\"" "$dir/out/finetune-deberta_small/config.resolved.yaml"
check "the MLM table" grep -q "^| deberta_small | [0-9.]* | [0-9.]* | [0-9.]* |$" "$dir/log"
check "the MLM table: the encoder without EMD" grep -q "^| deberta_small_noemd | [0-9.]* |" "$dir/log"
check "the fine-tuning table" grep -q "^| random | [0-9.]* | [0-9.]* | -\?[0-9.]* | [0-9.]* |$" "$dir/log"
check "the curves figure" test -s "$dir/out/pretraining-curves.png"
check "fill-mask examples of both encoders" test "$(grep -c "^mask 1 (token" "$dir/log")" -eq 8

bash scripts/pretrain_small.sh "$dir/out" >"$dir/log2" 2>&1 || fail "a second call exits 0"
check "a second call skips the finished runs" test "$(grep -c ": finished, skipped$" "$dir/log2")" -eq 6
finish "pretrain_small.sh"
