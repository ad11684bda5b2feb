#!/usr/bin/env bash
# Data-parallel scaling on this machine's CPU (BENCHMARKS.md, "Data-parallel
# training"): the same training run, global batch 32, as 1 rank x 2 threads,
# as 2 ranks x 1 thread (Gloo over loopback) and, for reference, as 1 rank x 1
# thread, back to back, ROUNDS times in alternation; then the all-reduce calls and bytes per step with and without
# PCGrad. The model is the benchmarks' "small" size (4 layers x 256) on the
# quickstart data. Prints one line per measurement.
#
#   bench/data_parallel.sh [ROUNDS]        (from the repository root, after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-2}"
bin=build/mtbert
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

small=(model.config.hidden_size=256 model.config.num_hidden_layers=4 model.config.num_attention_heads=4
       model.config.intermediate_size=1024 tasks.sst.limit_train=2000 tasks.para.limit_train=2000
       tasks.sts.limit_train=2000 tasks.sst.limit_dev=32 tasks.para.limit_dev=32 tasks.sts.limit_dev=32
       train.max_steps=120 train.eval_every_steps=30 train.epochs=1)

# Examples per second of the last two evaluation intervals (the first one
# includes warm-up).
rate() {
  /usr/bin/python3 - "$1/metrics.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print(f"{sum(r['examples_per_second'] for r in rows[1:]) / len(rows[1:]):.1f}")
PY
}

"$bin" train experiments/quickstart.yaml "${small[@]}" train.max_steps=1 --out "$out/tok" --no-progress >/dev/null 2>&1
small+=(model.tokenizer.model="$out/tok/tokenizer/spm.model")

for r in $(seq 1 "$rounds"); do
  "$bin" train experiments/quickstart.yaml "${small[@]}" train.batch_size=32 --threads 2 --out "$out/one$r" \
    --no-progress >/dev/null 2>&1
  echo "round $r: 1 rank x 2 threads, batch 32:        $(rate "$out/one$r") examples/s"
  "$bin" train experiments/quickstart.yaml "${small[@]}" train.batch_size=16 --nproc 2 --threads 1 --out "$out/two$r" \
    --no-progress >/dev/null 2>&1
  echo "round $r: 2 ranks x 1 thread, batch 16 each:  $(rate "$out/two$r") examples/s"
  "$bin" train experiments/quickstart.yaml "${small[@]}" train.batch_size=32 --threads 1 --out "$out/single$r" \
    --no-progress >/dev/null 2>&1
  echo "round $r: 1 rank x 1 thread, batch 32:        $(rate "$out/single$r") examples/s"
done

for pcgrad in false true; do
  "$bin" train experiments/quickstart.yaml "${small[@]}" train.sampler.kind=mixed train.pcgrad.enabled=$pcgrad \
    train.max_steps=2 train.batch_size=16 --nproc 2 --threads 1 --out "$out/pc$pcgrad" --no-progress 2>&1 >/dev/null |
    grep -o "data-parallel over .*" | sed "s/^/pcgrad $pcgrad: /"
done
