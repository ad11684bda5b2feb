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
# Without corpus.cache_dir the cache follows --out (issue 35), run from elsewhere.
(cd "$dir" && "$bin" pretrain "$dir/tiny.yaml" corpus.cache_dir=null corpus.experiment=null "corpus.tasks=[]" \
  train.max_steps=2 train.eval_every_steps=2 --out "$dir/own_cache" --threads 2 --no-progress >/dev/null 2>"$dir/log")
check "without cache_dir, the token cache lives in the run folder" test -d "$(ls -d "$dir"/own_cache/cache/mlm-* | head -1)"
check "  ... and nowhere else" test ! -e "$dir/runs"
check "--threads is what config.resolved.yaml records (the config said 1)" \
  grep -q "^threads: 2" "$dir/own_cache/config.resolved.yaml"
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
head_parameters=$(/usr/bin/python3 - "$src/scripts" "$dir/run/model/model.safetensors" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from mtbert_py.safetensors_io import read_safetensors
print(sum(t.numel() for name, t in read_safetensors(sys.argv[2])[0].items() if name.startswith("cls.")))
PY
)
check "info counts the MLM head apart from the encoder" \
  grep -Eq "^parameters  [0-9]+ \([0-9.]+ M\) in the encoder, $head_parameters more in the MLM head" "$dir/info"
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

# The pretrained encoder has no pooler (MLM only): pooling: pooler needs
# model.add_pooler, which gives it a fresh one that trains even when the
# encoder is frozen.
expect_error_after_logs "pooling: pooler without a pooler is refused" "this model has none" \
  -- train "$dir/finetune.yaml" tasks.sst.pooling=pooler --out "$dir/nopooler"
"$bin" train "$dir/finetune.yaml" tasks.sst.pooling=pooler model.add_pooler=true model.freeze_encoder=true \
  --out "$dir/pooler" --no-progress >"$dir/out" 2>"$dir/log" || cat "$dir/log"
check "add_pooler: a fresh pooler trains under freeze_encoder, the encoder stays as pretrained" \
  /usr/bin/python3 - "$src/scripts" "$dir/run/model/model.safetensors" "$dir/pooler/checkpoints/last/model.safetensors" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from mtbert_py.safetensors_io import read_safetensors
pretrained, _ = read_safetensors(sys.argv[2])
tuned, _ = read_safetensors(sys.argv[3])
assert not any(k.startswith("pooler.") for k in pretrained)
assert (tuned["bert.embeddings.word_embeddings.weight"] == pretrained["embeddings.word_embeddings.weight"]).all()
# HuggingFace's initialization: normal(0, 0.02) weights, zero bias; then trained.
weight, bias = tuned["bert.pooler.dense.weight"], tuned["bert.pooler.dense.bias"]
assert 0.015 < weight.std().item() < 0.025, weight.std()
assert bias.abs().max().item() > 0, "the pooler did not train"
PY
cp -r "$dir/run/model" "$dir/with_pooler"
/usr/bin/python3 - "$src/scripts" "$dir/with_pooler/model.safetensors" "$dir/pooler/checkpoints/last/model.safetensors" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from mtbert_py.safetensors_io import read_safetensors, write_safetensors
model, metadata = read_safetensors(sys.argv[2])
tuned, _ = read_safetensors(sys.argv[3])
model.update({k[len("bert."):]: v for k, v in tuned.items() if k.startswith("bert.pooler.")})
write_safetensors(sys.argv[2], model, metadata)
PY
expect_error_after_logs "add_pooler over a checkpoint with a pooler is refused" "has a pooler already" \
  -- train "$dir/finetune.yaml" "model.pretrained=$dir/with_pooler" model.add_pooler=true --out "$dir/twice"

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
expect_error "train --resume on a pretraining run names pretrain --resume" \
  "is a pretraining run: resume it with mtbert pretrain --resume $dir/stop" -- train --resume "$dir/stop"
(cd / && "$bin" pretrain --resume "$dir/stop" --no-progress >"$dir/out" 2>"$dir/log")
check "--resume finishes the run, from another folder (corpus.experiment and its tasks are the run's)" \
  grep -q '"status": "finished"' "$dir/stop/summary.json"
check "  ... with the same token cache" test "$(ls -d "$dir"/cache/mlm-* | wc -l)" -eq 1
check "  ... and the summary keeps the folder the run started in" \
  grep -q "\"working_directory\": \"$(pwd -P)\"" "$dir/stop/summary.json"
expect_error "  ... also once it is finished" "is a pretraining run: resume it with mtbert pretrain --resume" -- \
  train --resume "$dir/stop"

# Bad configs: one line, exit 2, no run folder.
expect_error_after_logs "an unknown key is named" "masking.mask_probability: unknown key; the keys here are mask_prob" \
  -- pretrain "$dir/tiny.yaml" masking.mask_probability=0.2 --out "$dir/bad"
check "no run folder for a bad config" test ! -e "$dir/bad"
expect_error_after_logs "an empty corpus" "corpus.files: the corpus is empty" \
  -- pretrain "$dir/tiny.yaml" "corpus.files=[]" "corpus.tasks=[]" --out "$dir/bad"
expect_error_after_logs "an experiment without tasks to read from it" \
  "corpus.tasks: experiment is read only for the tasks named here, and none is" \
  -- pretrain "$dir/tiny.yaml" "corpus.tasks=[]" --out "$dir/bad"
printf 'good text here\nbad \xff\xfe text\n' >"$dir/latin1.txt"
expect_error_after_logs "a corpus line that is not UTF-8 is named" "latin1.txt:2: invalid UTF-8 at byte 5 of the line" \
  -- pretrain "$dir/tiny.yaml" "corpus.files=[$dir/latin1.txt]" "corpus.tasks=[]" corpus.experiment=null \
  corpus.cache_dir="$dir/cache3" --out "$dir/bad"
check "  ... leaving no run folder and no token cache" bash -c "[[ ! -e '$dir/bad' ]] && ! ls '$dir/cache3' 2>/dev/null | grep -q ."
expect_error "fill-mask --text that is not UTF-8" "--text: invalid UTF-8 at byte 5 of the text" \
  -- fill-mask --model "$dir/run/model" --text $'the \xff [MASK]'
# Every file pretraining reads is checked before it starts: one line naming
# its key, no logs, no run folder.
expect_error "a missing corpus file" "tiny.yaml: corpus.files: $dir/absent.txt does not exist (relative paths" \
  -- pretrain "$dir/tiny.yaml" "corpus.files=[$dir/absent.txt]" --out "$dir/bad"
check "no run folder for a missing corpus file" test ! -e "$dir/bad"
expect_error "a missing vocabulary" "model.tokenizer.vocab: $dir/no-vocab.txt does not exist" \
  -- pretrain "$dir/tiny.yaml" model.tokenizer.vocab="$dir/no-vocab.txt" --out "$dir/bad"
expect_error "a missing model folder to continue from" "model folder $dir/no-model does not exist" \
  -- pretrain "$dir/tiny.yaml" model.pretrained="$dir/no-model" --out "$dir/bad"
expect_error "a missing experiment for corpus.tasks" "corpus.experiment: $dir/no-experiment.yaml does not exist" \
  -- pretrain "$dir/tiny.yaml" corpus.experiment="$dir/no-experiment.yaml" --out "$dir/bad"
printf 'model: {tokenizer: {kind: wordpiece, vocab: v.txt}}\ntasks:\n  sst: {train: %s}\n  sts: {train: %s}\n' \
  "$dir/no-sst.tsv" experiments/data/quickstart/sts-train.csv >"$dir/moved.yaml"
expect_error "a missing training file of a corpus task" "tasks.sst.train of $dir/moved.yaml: $dir/no-sst.tsv does not exist" \
  -- pretrain "$dir/tiny.yaml" corpus.experiment="$dir/moved.yaml" --out "$dir/bad"
check "no run folder for any of them" test ! -e "$dir/bad"
: >"$dir/blank.txt"
printf '\n  \n\n' >>"$dir/blank.txt"
"$bin" pretrain "$dir/tiny.yaml" "corpus.files=[$dir/blank.txt]" "corpus.tasks=[]" corpus.experiment=null \
  corpus.cache_dir="$dir/cache2" \
  --out "$dir/bad" >/dev/null 2>"$dir/err" && status=0 || status=$?
check "a corpus without text: exit 2 ($status), after the tokenizer's progress, one error line" \
  bash -c "[[ $status -eq 2 && \$(grep -c '^mtbert: error: corpus: the sources hold no text' '$dir/err') -eq 1 && \$(grep -c '^mtbert: error:' '$dir/err') -eq 1 ]]"
check "  ... and leaves no token cache" bash -c "! ls '$dir/cache2' 2>/dev/null | grep -q ."
# A token cache whose ids run past the vocabulary: one line, not a crash.
cache="$(ls -d "$dir"/cache/mlm-* | head -1)"
/usr/bin/python3 -c "import sys; f=open(sys.argv[1], 'r+b'); f.seek(4); f.write((4000000000).to_bytes(4, 'little'))" \
  "$cache/ids.u32"
expect_error_after_logs "a damaged token cache is one line" "ids.u32: token 1 has id 4000000000, not below" \
  -- pretrain "$dir/tiny.yaml" --out "$dir/bad"
expect_error "eval of a pretraining run says what it is, and where its encoder is" \
  "$dir/run is a pretraining run, not a fine-tuning one; its encoder is the model folder $dir/run/model" -- \
  eval "$dir/run"
expect_error "pretrain given an experiment says so" "is an experiment (tasks:, no corpus:): train it with mtbert train" -- \
  pretrain experiments/quickstart.yaml --out "$dir/bad"
expect_error "train given a pretraining config says so" "is a pretraining config (corpus:, no tasks:): run it with mtbert pretrain" -- \
  train "$dir/tiny.yaml" --out "$dir/bad"
cp -r "$dir/run/model" "$dir/model-copy"
expect_error_after_logs "encode --output over a file of its model folder is refused" \
  "would write inside $dir/model-copy, which this command reads" -- \
  encode --model "$dir/model-copy" --text "the film" --output "$dir/model-copy/model.safetensors"
check "  ... leaving the folder as it was" cmp -s "$dir/run/model/model.safetensors" "$dir/model-copy/model.safetensors"
expect_error_after_logs "encode --output of a new name inside its model folder is refused too" \
  "--output $dir/model-copy/embeddings.pt would write inside $dir/model-copy, which this command reads" -- \
  encode --model "$dir/model-copy" --text "the film" --output "$dir/model-copy/embeddings.pt"
check "  ... writing nothing there" test ! -e "$dir/model-copy/embeddings.pt"
expect_error "fill-mask without a mask" "holds no \[MASK\] token" \
  -- fill-mask --model "$dir/run/model" --text "no mask here"
expect_error "fill-mask with the mask cut off with the text's end" "its \[MASK\] lies past the model's 64 positions" \
  -- fill-mask --model "$dir/run/model" --text "$(printf 'good %.0s' $(seq 1 80)) [MASK]"

finish "pretrain"
