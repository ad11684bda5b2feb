#!/usr/bin/env bash
# Pretrains the three small encoders of experiments/pretrain/ (BERT-style,
# its DeBERTa-style twin, and the twin without the enhanced mask decoder, the
# same token budget), then fine-tunes the
# quickstart's three tasks on the full ../shared/data sets from a random
# encoder of the same shape and from each pretrained one
# (experiments/pretrain/finetune_small.yaml), and prints the held-out MLM
# figures and the dev scores side by side, draws the pretraining curves
# (OUT/pretraining-curves.png) and prints fill-mask examples of both encoders.
# On this project's 2-core VM: about 40, 65 and 55 minutes of pretraining,
# then three fine-tunes of about 7 minutes each. (The third encoder is for the
# small-scale study's "pretrained without EMD" rows: REPRODUCTION.md.)
#
#   scripts/pretrain_small.sh [OUT]        (default OUT: runs/pretrain-small)
#
# Every run is resumable: run the script again after an interruption and it
# continues the unfinished run and skips the finished ones. Extra key=value
# overrides for the pretraining runs can be given in PRETRAIN_OVERRIDES (e.g.
# "train.max_steps=50" for a smoke test), and for fine-tuning in
# FINETUNE_OVERRIDES; MTBERT_BINARY names another mtbert than build/mtbert.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-runs/pretrain-small}"
mtbert="${MTBERT_BINARY:-build/mtbert}"
read -r -d "" -a pretrain_overrides <<<"${PRETRAIN_OVERRIDES:-}" || true  # every line: the variables may span several
read -r -d "" -a finetune_overrides <<<"${FINETUNE_OVERRIDES:-}" || true  # every line: the variables may span several

status_of() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['status'])" "$1/summary.json" 2>/dev/null || echo missing; }

# run KIND NAME ARGS...: start, resume or skip the run in $out/NAME.
run() {
  local kind="$1" name="$2"; shift 2
  local folder="$out/$name"
  case "$(status_of "$folder")" in
    finished) echo "$name: finished, skipped" ;;
    interrupted) "$mtbert" "$kind" --resume "$folder" ;;
    # Killed, or still training in another process: resume from its last
    # checkpoint (mtbert refuses a folder that another process trains in).
    running) if [ -d "$folder/checkpoints/last" ]; then "$mtbert" "$kind" --resume "$folder"
             else rm -rf "$folder"; "$mtbert" "$kind" "$@" --out "$folder"; fi ;;
    *) rm -rf "$folder"; "$mtbert" "$kind" "$@" --out "$folder" ;;
  esac
}

for encoder in bert_small deberta_small deberta_small_noemd; do
  run pretrain "$encoder" "experiments/pretrain/$encoder.yaml" "${pretrain_overrides[@]}"
done

# Fine-tuning (experiments/pretrain/finetune_small.yaml): the quickstart's
# tasks and schedule on the full data sets, from a random encoder of the small
# shape (with bert-base-uncased's vocabulary) and from each pretrained one.
data="${MTBERT_DATA:-../shared/data}"
run train finetune-random experiments/pretrain/finetune_small.yaml \
  model.config.hidden_size=256 model.config.num_hidden_layers=4 model.config.num_attention_heads=4 \
  model.config.intermediate_size=1024 model.config.max_position_embeddings=128 \
  model.tokenizer.kind=wordpiece "model.tokenizer.vocab=$data/bert-base-uncased/vocab.txt" "${finetune_overrides[@]}"
for encoder in bert_small deberta_small; do
  run train "finetune-$encoder" experiments/pretrain/finetune_small.yaml "model.pretrained=$out/$encoder/model" \
    "${finetune_overrides[@]}"
done

/usr/bin/python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
print("\n| encoder | held-out MLM loss | accuracy | perplexity |\n| --- | ---: | ---: | ---: |")
for name in ("bert_small", "deberta_small", "deberta_small_noemd"):
    mlm = json.load(open(f"{out}/{name}/summary.json"))["last"]["dev"]["mlm"]
    print(f"| {name} | {mlm['loss']:.3f} | {mlm['accuracy']:.3f} | {mlm['perplexity']:.1f} |")
print("\n| fine-tuned from | SST | Quora | STS r | overall |\n| --- | ---: | ---: | ---: | ---: |")
for name in ("random", "bert_small", "deberta_small"):
    best = json.load(open(f"{out}/finetune-{name}/summary.json"))["best"]
    dev = best["dev"]
    print(f"| {name} | {dev['sst']['value']:.3f} | {dev['para']['value']:.3f} | {dev['sts']['value']:.3f} "
          f"| {best['overall']:.3f} |")
PY

"${MTBERT_PYTHON:-/usr/bin/python3}" scripts/plot_pretraining.py "$out/bert_small" "$out/deberta_small" "$out/deberta_small_noemd" \
  --out "$out/pretraining-curves.png"
for encoder in bert_small deberta_small; do
  for text in "the capital of france is [MASK] ." "she [MASK] the door and walked in ." \
              "the film was [MASK] and the audience loved it ." "he went to the [MASK] to buy some bread ."; do
    echo "$encoder: $text"
    "$mtbert" fill-mask --model "$out/$encoder/model" --text "$text" --top-k 5
  done
done
