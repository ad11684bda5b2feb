#!/usr/bin/env bash
# The README's main command: sets up, builds, and runs mtbert on a small
# checkpoint the project generates (a tiny random BERT in HuggingFace's format,
# converted by scripts/convert_hf_checkpoint.py).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
/usr/bin/python3 scripts/make_test_fixtures.py --out build/fixtures >/dev/null
model=build/fixtures/models/bert-modern
build/mtbert info --model "$model"
build/mtbert encode --model "$model" --text "the movie was great" "a sad , slow film" --output build/quickstart-encoding.pt
/usr/bin/python3 - <<'PY'
import torch
out = torch.load("build/quickstart-encoding.pt")
for key in ("input_ids", "last_hidden_state", "pooler_output"):
    print(f"{key:18} {tuple(out[key].shape)}")
print("first token, first 6 features:", [round(v, 4) for v in out["last_hidden_state"][0, 0, :6].tolist()])
PY
