#!/usr/bin/env bash
# `mtbert pretrain` end to end on a tiny corpus (a text file and the committed
# quickstart tasks' sentences) in seconds: the run folder and its model
# folder, fill-mask and encode on it, fine-tuning from it with mtbert train,
# SIGINT and --resume, and bad configs as one line with exit code 2.
set -euo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
fixtures="${MTBERT_FIXTURES:?MTBERT_FIXTURES must name the test fixtures}"
unset MTBERT_DATA
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"
cd "$src"

for i in $(seq 1 40); do
  echo "the movie was very good and the music is really fun"
  echo "this film is not funny but the actors are good"
  echo
done >"$dir/corpus.txt"
cat >"$dir/tiny.yaml" <<YAML
extends: $src/experiments/pretrain/base.yaml
threads: 1
model:
  config: {hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 64,
           max_position_embeddings: 64}
  tokenizer: {kind: wordpiece, vocab: $fixtures/models/bert-legacy/vocab.txt}
corpus:
  files: [$dir/corpus.txt]
  experiment: experiments/quickstart.yaml
  tasks: [sst, sts]
  max_length: 32
  holdout_fraction: 0.05
  cache_dir: $dir/cache
train: {max_steps: 20, batch_size: 8, eval_every_steps: 10, eval_segments: 32}
YAML

"$bin" pretrain "$dir/tiny.yaml" --out "$dir/run" --no-progress >"$dir/out" 2>"$dir/log"
check "pretraining prints the held-out MLM figures" grep -q "^held-out MLM: loss [0-9.]*  accuracy" "$dir/out"
check "summary: finished" grep -q '"status": "finished"' "$dir/run/summary.json"
check "metrics: two evaluations" test "$(wc -l <"$dir/run/metrics.jsonl")" -eq 2
check "the token cache was built once" test "$(ls -d "$dir"/cache/mlm-* | wc -l)" -eq 1
for file in config.json model.safetensors vocab.txt; do
  check "model folder: $file" test -s "$dir/run/model/$file"
done

"$bin" fill-mask --model "$dir/run/model" --text "the movie was [MASK] good" --top-k 3 >"$dir/fill" 2>"$dir/log"
check "fill-mask lists 3 candidates for the mask" test "$(grep -c '^  ' "$dir/fill")" -eq 3
"$bin" fill-mask --model "$dir/run/model" --text "[MASK] film [MASK]" --json >"$dir/fill.json" 2>"$dir/log"
check "fill-mask --json: one entry per mask" \
  /usr/bin/python3 -c "import json,sys; d=json.load(open('$dir/fill.json')); sys.exit(len(d) != 2 or len(d[0]['candidates']) != 5)"
"$bin" info --model "$dir/run/model" >"$dir/info" 2>&1
check "info reads the model folder" grep -q "^tokenizer   wordpiece" "$dir/info"
"$bin" encode --model "$dir/run/model" --text "a good film" --output "$dir/enc.pt" 2>"$dir/log"
check "encode writes mlm_logits" /usr/bin/python3 -c "import torch; assert 'mlm_logits' in torch.load('$dir/enc.pt')"

# Fine-tuning from the pretrained folder: its encoder, its tokenizer.
q=experiments/data/quickstart
cat >"$dir/finetune.yaml" <<YAML
threads: 1
model: {pretrained: $dir/run/model}
tasks:
  sst: {train: $q/ids-sst-train.csv, dev: $q/ids-sst-dev.csv, limit_train: 64, limit_dev: 32, max_length: 32}
  sts: {train: $q/sts-train.csv, dev: $q/sts-dev.csv, limit_train: 64, limit_dev: 32, max_length: 32}
train: {epochs: 1, batch_size: 16}
YAML
"$bin" train "$dir/finetune.yaml" --out "$dir/finetune" --no-progress >"$dir/out" 2>"$dir/log" || cat "$dir/log"
check "train fine-tunes the pretrained encoder" grep -q '"status": "finished"' "$dir/finetune/summary.json"

# SIGINT: a checkpoint, exit 130; --resume finishes it.
"$bin" pretrain "$dir/tiny.yaml" train.max_steps=4000 train.eval_every_steps=1000 --out "$dir/stop" \
  --no-progress >"$dir/out" 2>"$dir/log" &
pid=$!
for _ in $(seq 1 100); do grep -q "corpus:" "$dir/log" 2>/dev/null && break; sleep 0.1; done
sleep 0.5
kill -INT "$pid"
status=0
wait "$pid" || status=$?
check "SIGINT stops with exit 130" test "$status" -eq 130
check "SIGINT leaves an interrupted run" grep -q '"status": "interrupted"' "$dir/stop/summary.json"
"$bin" pretrain --resume "$dir/stop" train.max_steps=1 >"$dir/out" 2>"$dir/err" && status=0 || status=$?
check "resume refuses overrides" test "$status" -eq 2
"$bin" pretrain --resume "$dir/stop" --no-progress >"$dir/out" 2>"$dir/log"
check "--resume finishes the run" grep -q '"status": "finished"' "$dir/stop/summary.json"

# Bad configs: one line, exit 2, no run folder.
expect_error_after_logs "an unknown key is named" "masking.mask_probability: unknown key; the keys here are mask_prob" \
  -- pretrain "$dir/tiny.yaml" masking.mask_probability=0.2 --out "$dir/bad"
check "no run folder for a bad config" test ! -e "$dir/bad"
expect_error_after_logs "an empty corpus" "corpus.files: the corpus is empty" \
  -- pretrain "$dir/tiny.yaml" "corpus.files=[]" "corpus.tasks=[]" --out "$dir/bad"
expect_error_after_logs "a missing corpus file" "corpus file .*absent.txt does not exist" \
  -- pretrain "$dir/tiny.yaml" "corpus.files=[$dir/absent.txt]" --out "$dir/bad"
check "no run folder for a missing corpus file" test ! -e "$dir/bad"
expect_error "fill-mask without a mask" "holds no \[MASK\] token" \
  -- fill-mask --model "$dir/run/model" --text "no mask here"

finish "pretrain"
