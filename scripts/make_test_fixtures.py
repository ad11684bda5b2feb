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
DIR/reference-deberta/<name>.pt
                        the same for the tiny DeBERTa-v2/v3 checkpoints (DEBERTA_FIXTURES),
                        last_hidden_state from test/reference/deberta_reference.py
                        (implementation A, checked against B); their HF folders hold
                        a tiny spm.model with DeBERTa-v3's special pieces
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

from mtbert_py.hf_checkpoint import write_hf_folder
from mtbert_py.tiny_models import (SPECIAL_TOKENS, bert_config, deberta_config, random_bert_weights,
                                   random_deberta_weights, tiny_vocab, to_hf_naming, to_original_naming, train_tiny_spm)

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS.parent / "test" / "reference"))
import bert_reference  # noqa: E402  (lives with the tests, found through the path above)
import deberta_reference  # noqa: E402

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
    weights_format: str         # see hf_checkpoint.WEIGHT_FORMATS
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


@dataclass(frozen=True)
class DebertaFixture:
    name: str
    description: str
    config: dict
    seed: int
    prefixed: bool                  # DebertaV2ForMaskedLM's names (deberta. + lm head), else DebertaV2Model's
    weights_format: str
    unused_position_embeddings: bool = False
    convert_args: tuple = ()


DEBERTA_VOCAB_SIZE = 128  # the tiny spm.model's 120 pieces, [MASK], and spare rows
DEBERTA_LENGTH = 12


def _deberta_fixtures():
    v = DEBERTA_VOCAB_SIZE
    return (
        DebertaFixture("deberta-v3", "DeBERTa-v3's options: log buckets (8, max 20, so N = 12 uses "
                       "them), shared position keys, \"p2c|c2p\", LayerNorm-ed relative embeddings, no "
                       "absolute positions (an unused table in the source is skipped), no token types; "
                       "DebertaV2ForMaskedLM naming, model.safetensors",
                       deberta_config(v, 32, 2, 4, 37, position_buckets=8, max_relative_positions=20),
                       seed=11, prefixed=True, weights_format="safetensors", unused_position_embeddings=True),
        DebertaFixture("deberta-separate", "separate pos_key_proj/pos_query_proj, k = 4 < N (clamped), "
                       "[\"c2p\", \"p2c\"] list, no LayerNorm, absolute positions and 2 token types; "
                       "DebertaV2Model naming, zip pytorch_model.bin",
                       deberta_config(v, 24, 2, 3, 30, max_relative_positions=4, share_att_key=False,
                                      norm_rel_ebd="none", position_biased_input=True, type_vocab_size=2,
                                      pos_att_type=["c2p", "p2c"], layer_norm_eps=1e-12),
                       seed=12, prefixed=False, weights_format="bin-zip"),
        DebertaFixture("deberta-c2p-embed-proj", "c2p only, separate projections, embedding_size 20 != "
                       "hidden 32 (embed_proj), max_relative_positions -1 (k = 64 > N)",
                       deberta_config(v, 32, 2, 2, 40, pos_att_type="c2p", share_att_key=False,
                                      embedding_size=20, position_biased_input=True),
                       seed=13, prefixed=True, weights_format="safetensors"),
        DebertaFixture("deberta-p2c-buckets", "p2c only, log buckets (6, max 16), shared keys, absolute "
                       "positions",
                       deberta_config(v, 16, 3, 2, 24, pos_att_type="p2c", position_buckets=6,
                                      max_relative_positions=16, position_biased_input=True),
                       seed=14, prefixed=False, weights_format="safetensors"),
        DebertaFixture("deberta-p2p", "all four terms (\"c2p|p2c|p2p\", position-to-position included), "
                       "separate projections, k = 4 < N (clamped), log buckets off; mtbert's own extension, "
                       "which HF's DeBERTa does not run: the reference is the only oracle",
                       deberta_config(v, 24, 2, 3, 30, max_relative_positions=4, share_att_key=False,
                                      norm_rel_ebd="layer_norm", pos_att_type="c2p|p2c|p2p"),
                       seed=16, prefixed=False, weights_format="safetensors"),
        DebertaFixture("deberta-p2p-buckets", "p2p with c2p only, shared keys, log buckets (6, max 16)",
                       deberta_config(v, 16, 2, 2, 24, pos_att_type=["c2p", "p2p"], position_buckets=6,
                                      max_relative_positions=16),
                       seed=17, prefixed=True, weights_format="safetensors"),
        DebertaFixture("deberta-emd", "deberta-v3's options plus EMD (emd_layers 2: the absolute position "
                       "table exists for it)",
                       deberta_config(v, 32, 2, 4, 37, position_buckets=8, max_relative_positions=20,
                                      emd_layers=2),
                       seed=15, prefixed=True, weights_format="safetensors"),
    )


def deberta_inputs(seed=5):
    """[4, 12] ids with two padded rows and token types in the second half of each row."""
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, 121, (4, DEBERTA_LENGTH), generator=g)
    lengths = torch.tensor([DEBERTA_LENGTH, 9, DEBERTA_LENGTH, 5])
    mask = (torch.arange(DEBERTA_LENGTH)[None] < lengths[:, None]).long()
    ids[:, 0] = 1  # [CLS]
    types = ((torch.arange(DEBERTA_LENGTH)[None] >= lengths[:, None] // 2) & mask.bool()).long()
    return {"input_ids": ids * mask, "attention_mask": mask, "token_type_ids": types}


def write_deberta_fixtures(out, spm_model):
    fixtures = _deberta_fixtures()
    inputs = deberta_inputs()
    weights = {}
    for f in fixtures:
        folder = out / "hf" / f.name
        weights[f.name] = random_deberta_weights(f.config, f.seed)
        tensors = to_hf_naming(weights[f.name], f.config, f.seed + 100, prefixed=f.prefixed,
                               unused_position_embeddings=f.unused_position_embeddings)
        write_hf_folder(folder, f.config, tensors, f.weights_format,
                        tokenizer_config={"do_lower_case": False})
        shutil.copyfile(spm_model, folder / "spm.model")
    convert_all(out, fixtures)
    (out / "reference-deberta").mkdir()
    diffs = {}
    for f in fixtures:
        args = (weights[f.name], f.config, inputs["input_ids"], inputs["attention_mask"], inputs["token_type_ids"])
        a = deberta_reference.forward_a(*args)["last_hidden_state"]
        b = deberta_reference.forward_b(*args)["last_hidden_state"]
        diff = deberta_reference.max_abs_diff_unpadded(a, b, inputs["attention_mask"])
        if not diff < MAX_A_B_DIFF:
            sys.exit(f"make_test_fixtures: error: {f.name}: DeBERTa references A and B disagree by {diff:.3g}")
        reference = {name: t.clone().contiguous() for name, t in inputs.items()}
        reference["last_hidden_state"] = a.to(torch.float32).contiguous()
        torch.save(reference, out / "reference-deberta" / f"{f.name}.pt")
        diffs[f.name] = diff
    return fixtures, diffs


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    out = parser.parse_args().out
    for stale in ("hf", "models", "reference", "reference-deberta", "spm", "README.txt"):
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
    (out / "spm").mkdir()
    train_tiny_spm(out / "spm" / "tiny-deberta-v3.model")
    deberta_fixtures, deberta_diffs = write_deberta_fixtures(out, out / "spm" / "tiny-deberta-v3.model")
    write_readme(out / "README.txt", fixtures, vocab, inputs, diffs)
    write_deberta_readme(out / "README.txt", deberta_fixtures, deberta_diffs)
    for name, diff in deberta_diffs.items():
        print(f"{name}: max |A - B| last_hidden_state {diff:.3g}")
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
        f"Vocabulary: vocab.txt of {len(vocab)} WordPiece tokens (tiny_models.py), uncased; {specials}.",
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


def write_deberta_readme(path, fixtures, diffs):
    lines = [
        "",
        "DeBERTa fixtures (hf/<name>, models/<name>, reference-deberta/<name>.pt; inputs are ids of the tiny",
        f"spm.model in spm/, vocab_size {DEBERTA_VOCAB_SIZE}, [4, {DEBERTA_LENGTH}] with two padded rows;",
        "last_hidden_state from test/reference/deberta_reference.py A, checked against B):",
    ]
    for f in fixtures:
        lines.append(f"{f.name}: {f.description}; max |A - B| {diffs[f.name]:.3g}")
    with open(path, "a", encoding="utf-8") as out:
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
