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

# --- info --model with a run folder: what it is, and where its model folder is
mkdir -p runs/tuned runs/pretrained/model
printf 'name: "tuned"\ntasks:\n  sst:\n    train: "a.csv"\n' >runs/tuned/config.resolved.yaml
printf 'name: "pretrained"\ncorpus:\n  train: "c.txt"\n' >runs/pretrained/config.resolved.yaml
expect_error "info --model: a fine-tuning run folder is named as one" \
  "runs/tuned is a fine-tuning run folder (mtbert train), not a model folder: its encoder lives in its checkpoints" -- \
  info --model runs/tuned
expect_error "info --model: a pretraining run folder names its model folder" \
  "runs/pretrained is a pretraining run folder, not a model folder: its encoder is runs/pretrained/model (see" -- \
  info --model runs/pretrained
expect_error "  ... also for encode" "runs/tuned is a fine-tuning run folder" -- encode --model runs/tuned --text hi --output out.pt

# --- report --runs naming a folder that is not there: a typo, not a sweep yet to run
mkdir -p runs/pool_sweep
printf 'experiments: [tiny.yaml]\noutput_root: runs/pool_sweep\nseeds: [1, 2]\n' >pool.yaml
printf 'sweep: pool.yaml\ncolumns: {overall: Overall}\nrows:\n  - {label: pool, run: tiny}\n' >pool-table.yaml
expect_error "report: a --runs folder that does not exist is one line, with the closest name" \
  '--runs runs/pool_swep: no such folder (did you mean "runs/pool_sweep"?)' -- \
  report pool-table.yaml --runs runs/pool_swep
expect_error "  ... without a table too" "--runs nowhere: no such folder" -- report --runs nowhere

# --- paths that are not what they seem
ln -s loop-b loop-a
ln -s loop-a loop-b
ln -s nowhere dangling
touch plain-file
expect_error "a symbolic link loop is named as one" "--model: loop-a is a loop of symbolic links" -- info --model loop-a
expect_error "a link to nothing names its target" "--model: dangling is a symbolic link to nowhere, which does not exist" -- \
  info --model dangling
expect_error "a file where a folder is wanted" "plain-file is a file, not a folder" -- predict plain-file --task sst --text x
expect_error "an absent run folder" "runs/absent does not exist" -- eval runs/absent
expect_error "--overlay: a folder where a file is wanted" "--overlay: runs is a folder, not a file" -- \
  train tiny.yaml --overlay runs

# --- a config saved as UTF-16 (with or without its byte order mark)
printf 'tasks:\n  sst: {train: a.csv}\n' >utf8.yaml
/usr/bin/python3 -c "
import sys
text = open('utf8.yaml').read()
open('utf16.yaml', 'wb').write(text.encode('utf-16'))
open('utf16le.yaml', 'wb').write(text.encode('utf-16-le'))"
expect_error_after_logs "a UTF-16 config says so" \
  "utf16.yaml: the config file is UTF-16 text (it starts with a byte order mark); save it as UTF-8" -- \
  train utf16.yaml --out runs/u1
expect_error_after_logs "  ... also without a byte order mark" \
  "utf16le.yaml: the config file is not UTF-8 text: it holds NUL bytes" -- train utf16le.yaml --out runs/u2
check "  ... and no run folder is made" test ! -e runs/u1 -a ! -e runs/u2

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
    'device: cuda, but this mtbert is built against a LibTorch without CUDA (.*): build it against a CUDA LibTorch (docs/building.md, "Building against a CUDA LibTorch")' -- \
    train tiny.yaml device=cuda --out runs/cuda
  check "  ... and no run folder is made" test ! -e runs/cuda
  printf 'experiments: [tiny.yaml]\noutput_root: runs/cudasweep\noverrides: [device=cuda]\n' >cuda-sweep.yaml
  expect_error "sweep: the same, before any run starts" "run tiny: device: cuda, but this mtbert is built against a LibTorch without CUDA" -- \
    sweep cuda-sweep.yaml
  check "  ... and no run folder is made" test ! -e runs/cudasweep
fi

# --- an option's mistake points at its subcommand's help
expect_error "a bad option value points at the subcommand's help" "(see mtbert sweep --help)$" -- sweep x.yaml --jobs 0
expect_error "an unknown option too" "(see mtbert report --help)$" -- report --colour
expect_error "an unknown command points at mtbert --help" "(see mtbert --help)$" -- swep

finish "misleading messages"
