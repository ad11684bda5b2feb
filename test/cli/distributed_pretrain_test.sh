#!/usr/bin/env bash
# Data-parallel `mtbert pretrain` on CPU, Gloo over loopback, end to end on a
# tiny corpus: 2 ranks x batch B give the weights of 1 rank x batch 2B
# (dropout off; the masks do not depend on the number of ranks); torchrun
# trains the same run as --nproc; an interrupted 2-rank run resumes exactly
# and refuses another number of ranks; a killed rank ends the run, named.
set -euo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
fixtures="${MTBERT_FIXTURES:?MTBERT_FIXTURES must name the test fixtures}"
py="${MTBERT_PYTHON:-/usr/bin/python3}"
unset MTBERT_DATA RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT SLURM_PROCID SLURM_NTASKS
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/run_weights.sh"
source "$(dirname "${BASH_SOURCE[0]}")/lib/torchrun.sh"
cd "$src"

# 41 documents of one segment each: every 20th held out, 39 for training, so
# an epoch's last batch (7 of 8) splits unevenly over 2 ranks.
for i in $(seq 1 41); do
  echo "the movie $i was very good and the music is really fun"
  echo "this film is not funny but the actors are good"
  echo
done >"$dir/corpus.txt"
cat >"$dir/tiny.yaml" <<YAML
extends: $src/experiments/pretrain/base.yaml
threads: 1
model:
  config: {hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 64,
           max_position_embeddings: 64, hidden_dropout_prob: 0, attention_probs_dropout_prob: 0}
  tokenizer: {kind: wordpiece, vocab: $fixtures/models/bert-legacy/vocab.txt}
corpus:
  files: [$dir/corpus.txt]
  max_length: 32
  holdout_fraction: 0.05
  cache_dir: $dir/cache
train: {max_steps: 12, eval_every_steps: 6, eval_segments: 0}
distributed: {timeout_seconds: 60}
YAML

# Every evaluation's train and held-out losses (metrics.jsonl; not its
# timings). To 10 digits: a resumed run adds the ranks' train losses up in
# another order.
losses() {
  "$py" -c 'import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    print(row["step"], "%.10g %.10g" % (row["train_loss"]["mlm"], row["dev"]["mlm"]["loss"]))' "$1/metrics.jsonl"
}

"$bin" pretrain "$dir/tiny.yaml" train.batch_size=8 --out "$dir/one" --no-progress >"$dir/one.out" 2>"$dir/one.log"
"$bin" pretrain "$dir/tiny.yaml" train.batch_size=4 --nproc 2 --out "$dir/two" --no-progress \
  >"$dir/two.out" 2>"$dir/two.log"
check "--nproc 2 finishes the run" grep -q '"status": "finished"' "$dir/two/summary.json"
check "  ... the summary counts 2 ranks" grep -q '"ranks": 2' "$dir/two/summary.json"
check "  ... and the segments of both" grep -q '"segments_seen": 94' "$dir/two/summary.json"
check "  ... rank 0 alone writes the model folder" test -s "$dir/two/model/model.safetensors"
check "2 ranks x batch 4 == 1 rank x batch 8 (<= 1e-5)" within "$dir/one" "$dir/two" 1e-5
check "  ... and their sharded held-out evaluation is the one process's" \
  test "$(grep '^held-out' "$dir/one.out")" == "$(grep '^held-out' "$dir/two.out")"

# torchrun, as a user would start it (see distributed_train_test.sh for why
# --redirects 1 --tee 1, and why the launchers compare exactly).
if command -v torchrun >/dev/null; then
  OMP_NUM_THREADS=1 run_torchrun --nproc_per_node 2 --master_port "$(free_port)" --redirects 1 --tee 1 --no_python \
    "$bin" pretrain "$dir/tiny.yaml" train.batch_size=4 --out "$dir/torchrun" --no-progress \
    >/dev/null 2>"$dir/torchrun.log" || true
  check "torchrun --nproc_per_node 2 pretrains the same run as --nproc 2" within "$dir/two" "$dir/torchrun" 0
else
  skip_part "torchrun (none here)"
fi

# SIGINT to the launcher: every rank saves and stops (exit 130); --resume
# ends where the uninterrupted run does.
long=(train.batch_size=4 train.max_steps=600 train.eval_every_steps=50)
"$bin" pretrain "$dir/tiny.yaml" "${long[@]}" --nproc 2 --out "$dir/full" --no-progress >/dev/null 2>&1
"$bin" pretrain "$dir/tiny.yaml" "${long[@]}" --nproc 2 --out "$dir/int" --no-progress >/dev/null 2>"$dir/int.log" &
pid=$!
for _ in $(seq 1 600); do [[ -d "$dir/int/checkpoints/last" ]] && break; sleep 0.1; done
kill -INT "$pid" || true
status=0; wait "$pid" || status=$?
check "SIGINT to --nproc 2 ends with exit 130 ($status)" test "$status" -eq 130
check "  ... status interrupted" grep -q '"status": "interrupted"' "$dir/int/summary.json"
cp -r "$dir/int" "$dir/int-copy"
expect_error_after_logs "a 2-rank run does not resume as one process" "trained with 2 rank(s)" -- \
  pretrain --resume "$dir/int-copy"
"$bin" pretrain --resume "$dir/int" --nproc 2 --no-progress >/dev/null 2>"$dir/resume.log" ||
  fail "--resume --nproc 2 exits 0: $(tail -3 "$dir/resume.log" | tr '\n' ' ')"
check "--resume --nproc 2 finishes the run" grep -q '"status": "finished"' "$dir/int/summary.json"
check "  ... with exactly the weights of the uninterrupted run" within "$dir/full" "$dir/int" 0
check "  ... and its losses" test "$(losses "$dir/full")" == "$(losses "$dir/int")"

"$bin" pretrain "$dir/tiny.yaml" train.batch_size=4 train.max_steps=100000 --nproc 2 --out "$dir/nkill" \
  --no-progress >/dev/null 2>"$dir/nkill.log" &
pid=$!
for _ in $(seq 1 600); do [[ -d "$dir/nkill/checkpoints/last" ]] && break; sleep 0.1; done
kill -KILL "$(pgrep -P "$pid" | tail -1)" || true  # one of its ranks
status=0; wait "$pid" || status=$?
check "--nproc: a killed rank ends the run with exit != 0 ($status)" test "$status" -ne 0
check "  ... naming it" grep -Eq "^mtbert: error: rank [01] of 2 was killed by signal 9" "$dir/nkill.log"

finish "data-parallel pretraining"
