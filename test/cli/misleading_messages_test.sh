#!/usr/bin/env bash
# Mistakes that used to get a message about something else, each now one line
# (exit code 2) saying what the path, file or build really is: a run folder
# given to info as a model folder, a symbolic link loop, a UTF-16 config,
# device=cuda on a LibTorch without CUDA (said before any start-up work), and
# an option's error pointing at its subcommand's help. Nothing is trained.
set -uo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"
data="$src/experiments/data/quickstart"
cd "$dir"

# --- device=cuda on a LibTorch without CUDA: said first, before the
# SentencePiece training and everything else a run starts with
cat >tiny.yaml <<YAML
threads: 1
model:
  pretrained: ""
  config: {hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 64}
  tokenizer: {kind: sentencepiece, model: $dir/spm.model, train_from: [tasks], vocab_size: 300}
tasks:
  sst: {train: $data/ids-sst-train.csv, limit_train: 48}
train: {max_steps: 1}
YAML
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  skip_part "device=cuda on a LibTorch without CUDA (this machine has a GPU)"
else
  expect_error "train device=cuda: this LibTorch has no CUDA, and how to build against one (and no log line before)" \
    'device: cuda, but this mtbert is built against a LibTorch without CUDA (.*): build it against a CUDA LibTorch (README, "Building against a CUDA LibTorch")' -- \
    train tiny.yaml device=cuda --out runs/cuda
  check "  ... and no run folder is made" test ! -e runs/cuda
  printf 'experiments: [tiny.yaml]\noutput_root: runs/cudasweep\noverrides: [device=cuda]\n' >cuda-sweep.yaml
  expect_error "sweep: the same, before any run starts" "run tiny: device: cuda, but this mtbert is built against a LibTorch without CUDA" -- \
    sweep cuda-sweep.yaml
  check "  ... and no run folder is made" test ! -e runs/cudasweep
fi

finish "misleading messages"
