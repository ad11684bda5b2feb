#!/usr/bin/env python3
"""DeBERTa end to end: HuggingFace deberta-v2 checkpoints this test makes up on
the spot (shapes and seeds no fixture uses) convert with
scripts/convert_hf_checkpoint.py, and `mtbert encode` matches the independent
reference (test/reference/deberta_reference.py) within 1e-4; `mtbert
attention` writes every layer's and head's probabilities with the tokens, for
BERT and DeBERTa; the converter refuses what it cannot convert."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from mini_runner import SOURCE_DIR, run_tests
from mtbert_py.hf_checkpoint import write_hf_folder
from mtbert_py.tiny_models import (bert_config, deberta_config, random_bert_weights, random_deberta_weights, tiny_vocab,
                                   to_hf_naming, train_tiny_spm)
import deberta_reference

MTBERT = os.environ.get("MTBERT_BINARY", str(SOURCE_DIR / "build" / "mtbert"))
PYTHON = os.environ.get("MTBERT_PYTHON", "/usr/bin/python3")
WORK = Path(tempfile.mkdtemp(prefix="mtbert-deberta-test-"))
SPM = WORK / "spm.model"
VOCAB_SIZE = 130


def mtbert(*args):
    return subprocess.run([MTBERT, *map(str, args)], capture_output=True, text=True)


def convert(hf_dir, out_dir):
    return subprocess.run([PYTHON, str(SOURCE_DIR / "scripts" / "convert_hf_checkpoint.py"),
                           "--hf", str(hf_dir), "--out", str(out_dir)], capture_output=True, text=True)


def unseen_deberta(name, seed, weights_format="safetensors", prefixed=True, **options):
    config = deberta_config(VOCAB_SIZE, **options)
    weights = random_deberta_weights(config, seed)
    folder = WORK / "hf" / name
    write_hf_folder(folder, config, to_hf_naming(weights, config, seed, prefixed=prefixed), weights_format,
                    tokenizer_config={"do_lower_case": False})
    (folder / "spm.model").write_bytes(SPM.read_bytes())
    result = convert(folder, WORK / "models" / name)
    assert result.returncode == 0, result.stderr
    return WORK / "models" / name, config, weights


def random_inputs(seed, batch=5, length=19, with_types=False):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, 121, (batch, length), generator=g)
    lengths = torch.randint(3, length + 1, (batch,), generator=g)
    lengths[0] = length
    mask = (torch.arange(length)[None] < lengths[:, None]).long()
    types = ((torch.arange(length)[None] >= lengths[:, None] // 2) & mask.bool()).long()
    return ids * mask, mask, types


def encode_and_compare(model, config, weights, seed):
    ids, mask, types = random_inputs(seed)
    inputs = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
    torch.save(inputs, WORK / "in.pt")
    result = mtbert("encode", "--model", model, "--input", WORK / "in.pt", "--output", WORK / "out.pt")
    assert result.returncode == 0, result.stderr
    out = torch.load(WORK / "out.pt")
    assert "pooler_output" not in out
    types_used = types if config.get("type_vocab_size", 0) > 0 else None
    ref = deberta_reference.forward_a(weights, config, ids, mask, types_used)["last_hidden_state"]
    diff = deberta_reference.max_abs_diff_unpadded(out["last_hidden_state"].double(), ref, mask)
    print(f"    {model.name}: max-abs last_hidden_state {diff:.2e}")
    assert diff < 1e-4, diff


def test_unseen_v3_style_checkpoint():
    train_tiny_spm(SPM)
    model, config, weights = unseen_deberta(
        "unseen-v3", 9101, hidden_size=40, num_hidden_layers=3, num_attention_heads=5, intermediate_size=52,
        position_buckets=10, max_relative_positions=30, max_position_embeddings=40)
    encode_and_compare(model, config, weights, 1)


def test_unseen_separate_projections_zip_bin():
    model, config, weights = unseen_deberta(
        "unseen-separate", 9102, weights_format="bin-zip", prefixed=False, hidden_size=24, num_hidden_layers=2,
        num_attention_heads=2, intermediate_size=31, max_relative_positions=5, share_att_key=False,
        norm_rel_ebd="none", position_biased_input=True, type_vocab_size=3, pos_att_type=["p2c", "c2p"])
    encode_and_compare(model, config, weights, 2)


def test_unseen_embed_proj_and_emd():
    model, config, weights = unseen_deberta(
        "unseen-proj", 9103, hidden_size=36, num_hidden_layers=2, num_attention_heads=3, intermediate_size=40,
        embedding_size=28, pos_att_type="c2p", share_att_key=False, max_relative_positions=12)
    encode_and_compare(model, config, weights, 3)
    model, config, weights = unseen_deberta(
        "unseen-emd", 9104, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=40,
        position_buckets=8, max_relative_positions=24, emd_layers=2)
    encode_and_compare(model, config, weights, 4)


def test_encode_text_with_deberta_v3_tokenizer():
    import sentencepiece as spm
    model = WORK / "models" / "unseen-v3"
    result = mtbert("encode", "--model", model, "--text", "The movie was GREAT!", "--output", WORK / "t.pt")
    assert result.returncode == 0, result.stderr
    out = torch.load(WORK / "t.pt")
    processor = spm.SentencePieceProcessor(model_file=str(SPM))
    expected = [1] + processor.encode("The movie was GREAT!") + [2]  # [CLS] ... [SEP]
    assert out["input_ids"][0].tolist() == expected, (out["input_ids"], expected)
    assert "token_type_ids" not in out  # DeBERTa-v3 has none


def check_attention_file(path, layers, heads, tokens):
    out = torch.load(path)
    sidecar = json.loads(Path(str(path)[:-3] + ".tokens.json").read_text())
    att = out["attentions"]
    n = len(tokens)
    assert att.shape == (len(layers), heads, n, n), att.shape
    assert torch.allclose(att.sum(-1), torch.ones(len(layers), heads, n), atol=1e-5)
    assert sidecar["tokens"] == tokens, sidecar["tokens"]
    assert sidecar["layers"] == layers
    assert sidecar["heads"] == heads
    assert out["input_ids"].shape == (n,)
    return out, sidecar


def test_attention_maps_deberta_match_reference():
    import sentencepiece as spm
    model = WORK / "models" / "unseen-emd"
    config = json.loads((model / "config.json").read_text())
    weights = random_deberta_weights(config, 9104)
    result = mtbert("attention", "--model", model, "--text", "a boring plot", "--text2", "fun actors",
                    "--output", WORK / "att.pt")
    assert result.returncode == 0, result.stderr
    processor = spm.SentencePieceProcessor(model_file=str(SPM))
    tokens = ["[CLS]", *processor.encode("a boring plot", out_type=str), "[SEP]",
              *processor.encode("fun actors", out_type=str), "[SEP]"]
    out, _ = check_attention_file(WORK / "att.pt", ["layer.0", "emd.0", "emd.1"], 4, tokens)  # EMD in the last layer's place
    expected = []
    ids = out["input_ids"][None]
    deberta_reference.forward_a(weights, config, ids, torch.ones_like(ids), attentions=expected)
    diff = (out["attentions"].double() - torch.cat(expected)).abs().max().item()
    print(f"    attention probabilities: max-abs {diff:.2e} against the reference")
    assert diff < 1e-5


def test_attention_maps_bert():
    vocab = tiny_vocab()
    config = bert_config(len(vocab), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=20, layer_norm_eps=1e-12, type_vocab_size=2)
    write_hf_folder(WORK / "hf" / "bert", config, random_bert_weights(config, 9105), "safetensors", vocab=vocab,
                    tokenizer_config={"do_lower_case": True})
    assert convert(WORK / "hf" / "bert", WORK / "models" / "bert").returncode == 0
    result = mtbert("attention", "--model", WORK / "models" / "bert", "--text", "The movie was great!",
                    "--output", WORK / "bert-att.pt")
    assert result.returncode == 0, result.stderr
    out, _ = check_attention_file(WORK / "bert-att.pt", ["layer.0", "layer.1"], 2,
                                  ["[CLS]", "the", "movie", "was", "great", "!", "[SEP]"])
    assert out["token_type_ids"].tolist() == [0] * 7
    bad = mtbert("attention", "--model", WORK / "models" / "bert", "--text", "x", "--output", WORK / "a.json")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr


def test_converter_refuses_what_it_cannot_convert():
    config = deberta_config(VOCAB_SIZE, 16, 1, 2, 16)
    weights = random_deberta_weights(config, 1)
    for name, change, message in (
            ("conv", {"conv_kernel_size": 3}, "conv_kernel_size"),
            ("unknown term", {"pos_att_type": "c2p|p2x"}, "'p2x'"),
            ("buckets", {"position_buckets": 64, "max_relative_positions": 20}, "position_buckets")):
        write_hf_folder(WORK / "hf" / name, {**config, **change}, to_hf_naming(weights, config, 1), "safetensors")
        result = convert(WORK / "hf" / name, WORK / "models" / name)
        assert result.returncode == 2, result
        assert message in result.stderr, result.stderr
        assert not (WORK / "models" / name).exists()
    # A tensor the config does not imply (pos_key_proj with share_att_key) is named.
    extra = to_hf_naming(weights, config, 1)
    extra["deberta.encoder.layer.0.attention.self.pos_key_proj.weight"] = torch.zeros(16, 16)
    write_hf_folder(WORK / "hf" / "extra", config, extra, "safetensors")
    result = convert(WORK / "hf" / "extra", WORK / "models" / "extra")
    assert result.returncode == 2 and "pos_key_proj" in result.stderr, result.stderr


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
