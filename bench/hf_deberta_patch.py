#!/usr/bin/env python3
"""HuggingFace's DebertaV2Model with its relative attention through mtbert's op
(scripts/mtbert_py/hf_deberta.py) against the same model unpatched, in one
process on one device: first the match (whole model, fp32 within 1e-5 and
bf16 autocast against float64), then time and peak memory of forward +
backward, of one attention layer and of the whole model, at each length.

  bench/hf_deberta_patch.py [--device cuda] [--lengths 512 1024 2048] [--batch 8]
                            [--size base|tiny] [--reps 10] [--out results.jsonl]

--size base is deberta-v3-base's shape (768 x 12, 12 heads, 256 log buckets
over 512 positions, shared keys, LayerNorm'd relative embeddings); tiny (64 x
2) is for a dry run on a CPU. Weights are random: the cost does not depend on
them. Each measurement alternates patched and unpatched repetitions, so both
see the same state of the machine; times are medians (CUDA events on a GPU),
memory is the peak allocated during one repetition above what was allocated
before it (CUDA only). Needs transformers and a torch matching the op's library.
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from mtbert_py import hf_deberta  # noqa: E402

SIZES = {
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
    "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128),
}


def make_model(size, device):
    import transformers
    config = transformers.DebertaV2Config(
        vocab_size=128100, max_position_embeddings=512, relative_attention=True, position_buckets=256,
        max_relative_positions=-1, share_att_key=True, pos_att_type=["p2c", "c2p"], norm_rel_ebd="layer_norm",
        position_biased_input=False, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **SIZES[size])
    torch.manual_seed(0)
    return transformers.DebertaV2Model(config).to(device).train(), transformers.__version__


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def timed(step, device):
    """(seconds, peak bytes above the start) of one call of step."""
    sync(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
        before = torch.cuda.memory_allocated()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1000, torch.cuda.max_memory_allocated() - before
    t = time.perf_counter()
    step()
    return time.perf_counter() - t, None


def measure(model, make_step, device, reps):
    """Patched and unpatched, alternating, one warm-up each."""
    results = {"hf": [], "mtbert": []}
    for rep in range(reps + 1):
        for name in ("hf", "mtbert") if rep % 2 == 0 else ("mtbert", "hf"):
            (hf_deberta.patch_hf_deberta if name == "mtbert" else hf_deberta.unpatch_hf_deberta)(model)
            seconds, peak = timed(make_step(), device)
            if rep > 0:
                results[name].append((seconds, peak))
    hf_deberta.unpatch_hf_deberta(model)
    out = {}
    for name, runs in results.items():
        out[name + "_ms"] = round(1000 * statistics.median(s for s, _ in runs), 3)
        peaks = [p for _, p in runs if p is not None]
        out[name + "_peak_mib"] = round(max(peaks) / 2**20, 1) if peaks else None
    out["speedup"] = round(out["hf_ms"] / out["mtbert_ms"], 3)
    if out["hf_peak_mib"]:
        out["memory_ratio"] = round(out["mtbert_peak_mib"] / out["hf_peak_mib"], 3)
    return out


def check_match(model, device, length, batch):
    """Patched against unpatched (fp32), and each against float64 under bf16 autocast."""
    ids = torch.randint(1, 1000, (batch, length), device=device)
    mask = torch.ones_like(ids)
    mask[0, length // 2:] = 0
    model.eval()
    with torch.no_grad():
        hf = model(input_ids=ids, attention_mask=mask).last_hidden_state
        hf_deberta.patch_hf_deberta(model)
        ours = model(input_ids=ids, attention_mask=mask).last_hidden_state
        with torch.autocast(device.type, dtype=torch.bfloat16):
            ours_bf16 = model(input_ids=ids, attention_mask=mask).last_hidden_state.double()
        hf_deberta.unpatch_hf_deberta(model)
        with torch.autocast(device.type, dtype=torch.bfloat16):
            hf_bf16 = model(input_ids=ids, attention_mask=mask).last_hidden_state.double()
        exact = model.double()(input_ids=ids, attention_mask=mask).last_hidden_state
        model.float()
    model.train()
    return {"fp32_max_abs_diff": float((ours - hf).abs().max()),
            "bf16_max_abs_error_hf": float((hf_bf16 - exact).abs().max()),
            "bf16_max_abs_error_mtbert": float((ours_bf16 - exact).abs().max())}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--lengths", type=int, nargs="+", default=[512, 1024, 2048])
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", choices=sorted(SIZES), default="base")
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--library", default=None, help="the op's library or build folder (default: build/)")
    parser.add_argument("--out", default=None, help="also append the JSON lines to this file")
    args = parser.parse_args(argv)

    device = torch.device(args.device)
    hf_deberta.ops.load(args.library)
    model, version = make_model(args.size, device)
    lines = []
    emit = lambda line: (lines.append(line), print(json.dumps(line), flush=True))
    match = check_match(model, device, min(args.lengths), 2)
    emit({"case": "match", "length": min(args.lengths), **match, "transformers": version, "torch": torch.__version__,
          "device": torch.cuda.get_device_name() if device.type == "cuda" else "cpu"})
    ok = match["fp32_max_abs_diff"] < 1e-5 and \
        match["bf16_max_abs_error_mtbert"] <= 1.5 * match["bf16_max_abs_error_hf"] + 1e-2
    attention = model.encoder.layer[0].attention.self
    hidden = model.config.hidden_size
    for precision in ("fp32", "bf16"):
        autocast = precision == "bf16"
        for length in args.lengths:
            ids = torch.randint(1, 1000, (args.batch, length), device=device)
            states = torch.randn(args.batch, length, hidden, device=device, requires_grad=True)
            all_pairs = torch.ones(args.batch, 1, length, length, dtype=torch.bool, device=device)

            def layer_step():
                def step():
                    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
                        rel = model.encoder.get_rel_embedding()
                        out = attention(states, all_pairs, rel_embeddings=rel)[0]
                    out.float().sum().backward()
                return step

            def model_step():
                def step():
                    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
                        out = model(input_ids=ids).last_hidden_state
                    out.float().sum().backward()
                    model.zero_grad(set_to_none=True)
                return step

            for case, make_step in (("attention_layer", layer_step), ("model", model_step)):
                try:
                    result = measure(model, make_step, device, args.reps)
                except torch.cuda.OutOfMemoryError as e:
                    result = {"error": f"out of memory: {str(e).splitlines()[0]}"}
                    torch.cuda.empty_cache()
                emit({"case": case, "precision": precision, "length": length, "batch": args.batch,
                      "size": args.size, **result})
    if args.out:
        with open(args.out, "a") as f:
            f.writelines(json.dumps(line) + "\n" for line in lines)
    if not ok:
        print("hf_deberta_patch.py: the patched model does not match HF's (see the match line)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
