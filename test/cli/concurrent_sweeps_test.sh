#!/usr/bin/env bash
# Two `mtbert sweep` processes on one runs root at once (two terminals, or two
# job-array tasks on a shared filesystem): each run is trained once, by one of
# them; the other says it finished or is running elsewhere, which is not a
# failure; both exit 0 with a summary line whose counts agree with the runs.
set -uo pipefail

bin="${MTBERT_BINARY:?MTBERT_BINARY must name the mtbert executable}"
src="${MTBERT_SOURCE_DIR:?MTBERT_SOURCE_DIR must name the source folder}"
source "$(dirname "${BASH_SOURCE[0]}")/lib/checks.sh"
data="$src/experiments/data/quickstart"
cd "$dir"

cat >tiny.yaml <<YAML
threads: 1
device: cpu
tags: [smoke]
model:
  pretrained: ""
  config: {hidden_size: 32, num_hidden_layers: 1, num_attention_heads: 2, intermediate_size: 64,
           max_position_embeddings: 64}
  tokenizer: {kind: sentencepiece, model: $dir/spm.model, train_from: [tasks], vocab_size: 300}
tasks:
  sst: {train: $data/ids-sst-train.csv, dev: $data/ids-sst-dev.csv, max_length: 32,
        limit_train: 48, limit_dev: 24}
train: {epochs: 1, batch_size: 8, lr: 1.0e-4, max_steps: 3}
YAML
cat >sweep.yaml <<'YAML'
name: both
output_root: runs
experiments: [tiny.yaml]
seeds: [1, 2, 3, 4]
YAML

"$bin" sweep sweep.yaml >a.out 2>a.err &
a=$!
"$bin" sweep sweep.yaml >b.out 2>b.err &
b=$!
status_a=0; wait $a || status_a=$?
status_b=0; wait $b || status_b=$?
check "sweep A exits 0 (stderr: $(tail -3 a.err))" test "$status_a" -eq 0
check "sweep B exits 0 (stderr: $(tail -3 b.err))" test "$status_b" -eq 0
for seed in 1 2 3 4; do
  run=runs/tiny-seed$seed
  check "seed $seed: finished" grep -q '"status": "finished"' $run/summary.json
  check "seed $seed: trained once, by one of the sweeps" test "$(grep -c '^=== .* mtbert sweep: ' $run/train.log)" -eq 1
done
trained=$(cat a.out b.out | grep -Ec '^\[[0-9]+/[0-9]+\] tiny-seed[1-4]  finished  overall ')
check "the two sweeps trained 4 runs between them ($trained)" test "$trained" -eq 4
check "no run failed" bash -c "! grep -q FAILED a.out b.out"
for out in a.out b.out; do
  # A run is left alone from the start (running elsewhere when the sweep
  # listed them) or gets its line when its turn comes: trained here,
  # finished elsewhere or running elsewhere.
  first=$(head -1 $out)
  queued=$(sed -En 's/^sweep both: 4 runs: ([0-9]+) to train .*/\1/p' <<<"$first")
  left=$(sed -En 's/.*, ([0-9]+) running elsewhere \(left alone\)$/\1/p' <<<"$first")
  check "$out: every run listed or queued ($first)" test "$((queued + ${left:-0}))" -eq 4
  check "$out: a line per queued run" test "$(grep -Ec "^\[[1-4]/$queued\] tiny-seed[1-4]  (finished|finished elsewhere|running elsewhere \(left alone\))( |$)" $out)" -eq "$queued"
  last=$(tail -1 $out)
  finished=$(sed -En 's/^sweep both: ([0-9]+) of 4 runs finished.*/\1/p' <<<"$last")
  running=$(sed -En 's/.*; running elsewhere: ([^;]*).*/\1/p' <<<"$last" | tr ',' '\n' | grep -c . || true)
  check "$out: the summary line's counts add up ($last)" test "$((finished + running))" -eq 4
  check "$out: nothing left unfinished" bash -c "! grep -q 'not finished' <<<'$last'"
done
check "the sweep that ends last sees every run finished" \
  bash -c "grep -q '^sweep both: 4 of 4 runs finished$' a.out || grep -q '^sweep both: 4 of 4 runs finished$' b.out"

# A sweep started again finds them all finished.
"$bin" sweep sweep.yaml >c.out 2>c.err
check "a third sweep trains nothing" grep -q '0 to train .* 4 finished' c.out

finish "concurrent sweeps"
