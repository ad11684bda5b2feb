#!/usr/bin/env python3
"""Writes the fixtures of mtbert's C++ tests: tiny random BERT checkpoints in
HuggingFace's formats, their conversions, and reference outputs.

    make_test_fixtures.py --out DIR

DIR/hf/<name>/          HF model folders (see FIXTURES for naming and format)
DIR/models/<name>/      the same converted by convert_hf_checkpoint.py (run as a
                        subprocess, so the CLI itself is exercised)
DIR/reference/<name>.pt torch.save'd dict: input_ids, attention_mask, token_type_ids
                        (int64 [B, N]), last_hidden_state ([B, N, H]) and, when the
                        model has a pooler, pooler_output ([B, H]), float32 computed
                        in float64 by test/reference/bert_reference.py
DIR/README.txt          what was generated

Deterministic (fixed seeds) and quick; CTest runs it before the tests. Only the
entries above are replaced; anything else in DIR is left alone.
"""
import argparse
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import torch

from mtbert_py.hf_folder_writer import write_hf_folder
from mtbert_py.tiny_bert import SPECIAL_TOKENS, bert_config, random_bert_weights, tiny_vocab, to_original_naming

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS.parent / "test" / "reference"))
import bert_reference  # noqa: E402  (lives with the tests, found through the path above)

# A and B compute the same float64 function; disagreement beyond rounding is a bug.
MAX_A_B_DIFF = 1e-6
SEQUENCE_LENGTH = 12
# (first segment, second segment or None), as tokens of the tiny vocabulary.
# Rows 0 and 2 are padded; rows 1 and 2 have a second segment (token type 1).
BATCH = (
    ("the movie was great !", None),
    ("the film is good", "it was not bad ."),
    ("i love this movie", "me too"),
    ("the plot was [UNK] , but i enjoy ##ed it", None),
)


@dataclass(frozen=True)
class Fixture:
    name: str
    description: str
    config: dict
    seed: int
    original_naming: bool       # bert-base-uncased's names, else HF BertModel's
    weights_format: str         # see hf_folder_writer.WEIGHT_FORMATS
    stored_dtype: torch.dtype = torch.float32
    with_pooler: bool = True
    tokenizer_config: dict = None
    convert_args: tuple = ()


def _fixtures(vocab_size):
    small = bert_config(vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=37, layer_norm_eps=1e-12, type_vocab_size=2)
    wider = bert_config(vocab_size, hidden_size=48, num_hidden_layers=3, num_attention_heads=6,
                        intermediate_size=83, layer_norm_eps=1e-7, type_vocab_size=3)
    odd_heads = bert_config(vocab_size, hidden_size=24, num_hidden_layers=2, num_attention_heads=3,
                            intermediate_size=50, layer_norm_eps=1e-12, type_vocab_size=2)
    return (
        Fixture("bert-legacy", "original naming (bert. prefix, gamma/beta, cls.* heads, "
                "position_ids), legacy torch.save pytorch_model.bin of nn.Parameters",
                small, seed=1, original_naming=True, weights_format="bin-legacy",
                tokenizer_config={"do_lower_case": True}),
        Fixture("bert-modern", "modern naming, model.safetensors (F32)",
                wider, seed=2, original_naming=False, weights_format="safetensors"),
        Fixture("bert-modern-bf16", "bert-modern's weights rounded to BF16, model.safetensors "
                "(BF16), converted with --dtype keep",
                wider, seed=2, original_naming=False, weights_format="safetensors",
                stored_dtype=torch.bfloat16, convert_args=("--dtype", "keep")),
        Fixture("bert-nopooler", "modern naming without pooler, zip torch.save pytorch_model.bin",
                odd_heads, seed=3, original_naming=False, weights_format="bin-zip",
                with_pooler=False),
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    out = parser.parse_args().out
    for stale in ("hf", "models", "reference", "README.txt"):
        path = out / stale
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    (out / "models").mkdir(parents=True)
    (out / "reference").mkdir()

    vocab = tiny_vocab()
    fixtures = _fixtures(len(vocab))
    inputs = encode_batch(vocab)
    weights = {}
    for fixture in fixtures:
        weights[fixture.name] = write_source(out / "hf" / fixture.name, fixture, vocab)
    convert_all(out, fixtures)
    diffs = {f.name: write_reference(out / "reference" / f"{f.name}.pt", f, weights[f.name], inputs)
             for f in fixtures}
    write_readme(out / "README.txt", fixtures, vocab, inputs, diffs)
    for name, (hidden_diff, pooler_diff) in diffs.items():
        pooler = f", pooler_output {pooler_diff:.3g}" if pooler_diff is not None else ""
        print(f"{name}: max |A - B| last_hidden_state {hidden_diff:.3g}{pooler}")
    print(f"fixtures written to {out}")


def write_source(folder, fixture, vocab):
    """Writes the HF folder; returns the canonical weights as stored (after any
    rounding to the stored dtype), which the references are computed from."""
    weights = random_bert_weights(fixture.config, fixture.seed, with_pooler=fixture.with_pooler)
    weights = {name: t.to(fixture.stored_dtype) for name, t in weights.items()}
    tensors = to_original_naming(weights, fixture.config, fixture.seed + 100) \
        if fixture.original_naming else weights
    write_hf_folder(folder, fixture.config, tensors, fixture.weights_format,
                    vocab=vocab, tokenizer_config=fixture.tokenizer_config)
    return weights


def convert_all(out, fixtures):
    """Runs the converter on every fixture at once (each run is mostly torch's
    start-up time), then fails loudly with its output if any run failed."""
    runs = [(f, subprocess.Popen(
        [sys.executable, str(SCRIPTS / "convert_hf_checkpoint.py"),
         "--hf", str(out / "hf" / f.name), "--out", str(out / "models" / f.name), *f.convert_args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)) for f in fixtures]
    failed = []
    for fixture, process in runs:
        output, _ = process.communicate()
        print(f"convert {fixture.name}:\n" + "".join(f"  {line}\n" for line in output.splitlines()))
        if process.returncode != 0:
            failed.append(fixture.name)
    if failed:
        sys.exit(f"make_test_fixtures: error: converting {', '.join(failed)} failed (output above)")


def encode_batch(vocab):
    ids = {token: i for i, token in enumerate(vocab)}
    cls, sep, pad = ids["[CLS]"], ids["[SEP]"], ids["[PAD]"]
    rows = []
    for first, second in BATCH:
        tokens = [cls] + [ids[t] for t in first.split()] + [sep]
        types = [0] * len(tokens)
        if second is not None:
            segment = [ids[t] for t in second.split()] + [sep]
            tokens += segment
            types += [1] * len(segment)
        assert len(tokens) <= SEQUENCE_LENGTH, f"row {first!r} is longer than {SEQUENCE_LENGTH}"
        padding = SEQUENCE_LENGTH - len(tokens)
        rows.append((tokens + [pad] * padding, [1] * len(tokens) + [0] * padding, types + [0] * padding))
    return {
        "input_ids": torch.tensor([r[0] for r in rows], dtype=torch.int64),
        "attention_mask": torch.tensor([r[1] for r in rows], dtype=torch.int64),
        "token_type_ids": torch.tensor([r[2] for r in rows], dtype=torch.int64),
    }


def write_reference(path, fixture, weights, inputs):
    """Saves implementation A's outputs after checking them against B.
    Returns the max |A - B| of (last_hidden_state, pooler_output or None)."""
    args = (weights, fixture.config, inputs["input_ids"], inputs["attention_mask"], inputs["token_type_ids"])
    a, b = bert_reference.forward_a(*args), bert_reference.forward_b(*args)
    hidden_diff = bert_reference.max_abs_diff_unpadded(
        a["last_hidden_state"], b["last_hidden_state"], inputs["attention_mask"])
    pooler_diff = None
    if fixture.with_pooler:
        pooler_diff = (a["pooler_output"] - b["pooler_output"]).abs().max().item()
    for what, diff in (("last_hidden_state", hidden_diff), ("pooler_output", pooler_diff)):
        if diff is not None and not diff < MAX_A_B_DIFF:
            sys.exit(f"make_test_fixtures: error: {fixture.name}: reference implementations A and B "
                     f"disagree on {what} by {diff:.3g} (limit {MAX_A_B_DIFF})")
    # Plain, contiguous, unshared tensors: C++ reads this with torch::pickle_load.
    reference = {name: t.clone().contiguous() for name, t in inputs.items()}
    reference["last_hidden_state"] = a["last_hidden_state"].to(torch.float32).contiguous()
    if fixture.with_pooler:
        reference["pooler_output"] = a["pooler_output"].to(torch.float32).contiguous()
    torch.save(reference, path)
    return hidden_diff, pooler_diff


def write_readme(path, fixtures, vocab, inputs, diffs):
    specials = ", ".join(f"{token}={vocab.index(token)}" for token in SPECIAL_TOKENS)
    lines = [
        "mtbert test fixtures, generated by scripts/make_test_fixtures.py "
        f"(torch {torch.__version__}); do not edit, rerun the script.",
        "",
        f"Vocabulary: vocab.txt of {len(vocab)} WordPiece tokens (tiny_bert.py), uncased; {specials}.",
        "",
        "hf/<name>/          HuggingFace model folders (random weights, fixed seeds)",
        "models/<name>/      their conversions by scripts/convert_hf_checkpoint.py",
        "reference/<name>.pt torch.save dict: input_ids, attention_mask, token_type_ids (int64 "
        f"[{len(BATCH)}, {SEQUENCE_LENGTH}]),",
        "                    last_hidden_state [B, N, H] and pooler_output [B, H] (float32; no "
        "pooler_output without a pooler)",
        "                    from test/reference/bert_reference.py implementation A "
        "(torch.nn.TransformerEncoderLayer),",
        f"                    computed in float64, checked against implementation B "
        f"(max |A - B| < {MAX_A_B_DIFF}).",
        "                    Padded positions hold values too; compare only where attention_mask is 1.",
        "",
    ]
    for f in fixtures:
        c = f.config
        hidden_diff, pooler_diff = diffs[f.name]
        lines += [
            f"{f.name}: {f.description}",
            f"    hidden {c['hidden_size']}, layers {c['num_hidden_layers']}, heads "
            f"{c['num_attention_heads']}, intermediate {c['intermediate_size']}, layer_norm_eps "
            f"{c['layer_norm_eps']}, type_vocab_size {c['type_vocab_size']}, max_position_embeddings "
            f"{c['max_position_embeddings']}, seed {f.seed}, pooler {'yes' if f.with_pooler else 'no'}",
            f"    max |A - B|: last_hidden_state {hidden_diff:.3g}"
            + (f", pooler_output {pooler_diff:.3g}" if pooler_diff is not None else ""),
        ]
    lines += ["", "Input rows (tokens; | marks the second segment, token type 1):"]
    for (first, second), mask in zip(BATCH, inputs["attention_mask"]):
        text = f"[CLS] {first} [SEP]" + (f" | {second} [SEP]" if second else "")
        lines.append(f"    {text}   ({int(mask.sum())} tokens, {SEQUENCE_LENGTH - int(mask.sum())} padding)")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
