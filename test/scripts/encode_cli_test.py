#!/usr/bin/env python3
"""`mtbert encode` and `mtbert info` end to end, on HuggingFace-format
checkpoints this test makes up on the spot (shapes and seeds no fixture uses),
converted by scripts/convert_hf_checkpoint.py and checked against the
independent reference implementation A (test/reference/bert_reference.py);
and the one-line errors (exit code 2) for bad input."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from mini_runner import SOURCE_DIR, run_tests
from mtbert_py.hf_checkpoint import write_hf_folder
from mtbert_py.tiny_models import bert_config, random_bert_weights, tiny_vocab, to_original_naming
from bert_reference import forward_a, max_abs_diff_unpadded
from bert_tokenizer_reference import ReferenceBertTokenizer

MTBERT = os.environ.get("MTBERT_BINARY", str(SOURCE_DIR / "build" / "mtbert"))
PYTHON = os.environ.get("MTBERT_PYTHON", "/usr/bin/python3")
WORK = Path(tempfile.mkdtemp(prefix="mtbert-encode-test-"))
VOCAB = tiny_vocab()


def mtbert(*args):
    return subprocess.run([MTBERT, *map(str, args)], capture_output=True, text=True)


def convert(hf_dir, out_dir):
    result = subprocess.run([PYTHON, str(SOURCE_DIR / "scripts" / "convert_hf_checkpoint.py"),
                             "--hf", str(hf_dir), "--out", str(out_dir)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def unseen_checkpoint(name, naming, weights_format, seed, **shape):
    """A new HF folder + its conversion; returns (model_dir, config, weights)."""
    config = bert_config(len(VOCAB), **shape)
    weights = random_bert_weights(config, seed)
    tensors = to_original_naming(weights, config, seed) if naming == "original" else weights
    write_hf_folder(WORK / "hf" / name, config, tensors, weights_format, vocab=VOCAB,
                    tokenizer_config={"do_lower_case": True})
    convert(WORK / "hf" / name, WORK / "models" / name)
    return WORK / "models" / name, config, weights


def random_inputs(config, seed, batch=5, length=17):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, config["vocab_size"], (batch, length), generator=g)
    lengths = torch.randint(3, length + 1, (batch,), generator=g)
    lengths[0] = length
    mask = (torch.arange(length)[None] < lengths[:, None]).long()
    ids = ids * mask
    types = ((torch.arange(length)[None] >= (lengths[:, None] // 2)) & mask.bool()).long()
    return ids, mask, types


def encode_and_compare(model_dir, config, weights, seed):
    ids, mask, types = random_inputs(config, seed)
    torch.save({"input_ids": ids, "attention_mask": mask, "token_type_ids": types}, WORK / "in.pt")
    result = mtbert("encode", "--model", model_dir, "--input", WORK / "in.pt", "--output", WORK / "out.pt")
    assert result.returncode == 0, result.stderr
    out = torch.load(WORK / "out.pt")
    ref = forward_a(weights, config, ids, mask, types)
    ref_hidden, ref_pooled = ref["last_hidden_state"], ref["pooler_output"]
    hidden = max_abs_diff_unpadded(out["last_hidden_state"].double(), ref_hidden, mask)
    pooled = (out["pooler_output"].double() - ref_pooled).abs().max().item()
    print(f"    {model_dir.name}: max-abs last_hidden_state {hidden:.2e}, pooler_output {pooled:.2e}")
    assert hidden < 1e-4 and pooled < 1e-4


def test_unseen_checkpoint_original_naming_legacy_bin():
    model, config, weights = unseen_checkpoint(
        "unseen-original", "original", "bin-legacy", seed=9001, hidden_size=40, num_hidden_layers=4,
        num_attention_heads=5, intermediate_size=71, layer_norm_eps=1e-12, type_vocab_size=2)
    encode_and_compare(model, config, weights, seed=1)


def test_unseen_checkpoint_modern_naming_zip_bin():
    model, config, weights = unseen_checkpoint(
        "unseen-modern-bin", "modern", "bin-zip", seed=9002, hidden_size=56, num_hidden_layers=2,
        num_attention_heads=7, intermediate_size=90, layer_norm_eps=1e-6, type_vocab_size=4)
    encode_and_compare(model, config, weights, seed=2)


def test_unseen_checkpoint_modern_naming_safetensors():
    model, config, weights = unseen_checkpoint(
        "unseen-modern-st", "modern", "safetensors", seed=9003, hidden_size=24, num_hidden_layers=5,
        num_attention_heads=2, intermediate_size=33, layer_norm_eps=1e-12, type_vocab_size=2)
    encode_and_compare(model, config, weights, seed=3)


def test_encode_text_uses_the_folder_tokenizer():
    model, config, weights = unseen_checkpoint(
        "unseen-text", "modern", "safetensors", seed=9004, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=48, layer_norm_eps=1e-12, type_vocab_size=2)
    texts = ["The movie was GREAT!", "boring plot, bad acting"]
    result = mtbert("encode", "--model", model, "--text", *texts, "--output", WORK / "text.pt")
    assert result.returncode == 0, result.stderr
    out = torch.load(WORK / "text.pt")
    tokenizer = ReferenceBertTokenizer(model / "vocab.txt", lower_case=True)
    rows = [tokenizer.encode_for_model(t)[0] for t in texts]
    length = max(map(len, rows))
    ids = torch.tensor([r + [0] * (length - len(r)) for r in rows])
    mask = torch.tensor([[1] * len(r) + [0] * (length - len(r)) for r in rows])
    assert torch.equal(out["input_ids"], ids), (out["input_ids"], ids)
    assert torch.equal(out["attention_mask"], mask)
    ref = forward_a(weights, config, ids, mask, torch.zeros_like(ids))
    assert max_abs_diff_unpadded(out["last_hidden_state"].double(), ref["last_hidden_state"], mask) < 1e-4


def mlm_head_reference(hidden, config, source):
    """BertForMaskedLM's head in float64 from the HF tensors: dense, GELU
    (erf), LayerNorm, then the tied decoder and its bias."""
    def get(name):
        for key in (name, name.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")):
            if key in source:
                return source[key].double()
        raise KeyError(name)
    p = "cls.predictions.transform."
    x = torch.nn.functional.linear(hidden, get(p + "dense.weight"), get(p + "dense.bias"))
    x = torch.nn.functional.gelu(x)
    x = torch.nn.functional.layer_norm(x, (x.shape[-1],), get(p + "LayerNorm.weight"), get(p + "LayerNorm.bias"),
                                       config["layer_norm_eps"])
    return x @ source["cls.predictions.decoder.weight"].double().T + get("cls.predictions.bias")


def test_mlm_logits_match_reference():
    """BertForMaskedLM checkpoints (both namings, .bin and safetensors): encode
    writes mlm_logits, against an independent float64 head on the reference
    encoder."""
    for naming, weights_format, seed in (("original", "bin-legacy", 9301), ("original", "safetensors", 9302),
                                         ("modern", "bin-zip", 9303)):
        config = bert_config(len(VOCAB), hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                             intermediate_size=20, layer_norm_eps=1e-12, type_vocab_size=2)
        weights = random_bert_weights(config, seed)
        source = to_original_naming(weights, config, seed)
        if naming == "modern":  # BertForMaskedLM as recent transformers save it: weight/bias names
            source = {k.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias"): v
                      for k, v in source.items()}
        name = f"mlm-{naming}-{weights_format}"
        write_hf_folder(WORK / "hf" / name, config, source, weights_format, vocab=VOCAB,
                        tokenizer_config={"do_lower_case": True})
        convert(WORK / "hf" / name, WORK / "models" / name)
        ids, mask, types = random_inputs(config, seed)
        torch.save({"input_ids": ids, "attention_mask": mask, "token_type_ids": types}, WORK / "in.pt")
        result = mtbert("encode", "--model", WORK / "models" / name, "--input", WORK / "in.pt",
                        "--output", WORK / "out.pt")
        assert result.returncode == 0, result.stderr
        out = torch.load(WORK / "out.pt")
        hidden = forward_a(weights, config, ids, mask, types)["last_hidden_state"]
        expected = mlm_head_reference(hidden, config, source)
        diff = max_abs_diff_unpadded(out["mlm_logits"].double(), expected, mask)
        print(f"    {name}: max-abs mlm_logits {diff:.2e}")
        assert diff <= 1e-5


def test_info_describes_the_folder():
    model, config, _ = unseen_checkpoint(
        "unseen-info", "modern", "safetensors", seed=9005, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=20, layer_norm_eps=1e-12, type_vocab_size=2)
    result = mtbert("info", "--model", model, "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    weights = random_bert_weights(config, 9005)
    assert info["parameters"] == sum(t.numel() for t in weights.values())
    assert info["pooler"] is True
    assert info["mlm_head_parameters"] is None
    assert info["tokenizer"] == {"kind": "wordpiece", "vocab_size": len(VOCAB)}
    assert info["config"]["hidden_size"] == 16

    # A folder without a tokenizer is still a model, as encode --input takes it.
    bare = WORK / "models" / "unseen-info-bare"
    subprocess.run(["cp", "-r", str(model), str(bare)], check=True)
    (bare / "vocab.txt").unlink()
    result = mtbert("info", "--model", bare, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["tokenizer"] is None
    # A vocabulary larger than the embedding table is refused, by info and encode alike.
    big = WORK / "models" / "unseen-info-big-vocab"
    subprocess.run(["cp", "-r", str(model), str(big)], check=True)
    with open(big / "vocab.txt", "a") as vocab:
        vocab.writelines(f"extra{i}\n" for i in range(config["vocab_size"]))
    expect_error(["info", "--model", big], "pieces but the model's vocab_size is")
    expect_error(["encode", "--model", big, "--text", "hi", "--output", WORK / "big.pt"],
                 "pieces but the model's vocab_size is")


def libtorch_major():
    """The major version of the LibTorch mtbert was built against ("mtbert 0.1.0 (LibTorch 1.13.0)")."""
    version = mtbert("--version").stdout
    return int(version.split("LibTorch ")[1].split(".")[0])


def expect_error(args, pattern):
    result = mtbert(*args)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1, result.stderr
    assert pattern in lines[0], (pattern, lines[0])


def test_bad_input_is_one_line_and_exit_code_2():
    model, config, _ = unseen_checkpoint(
        "errors", "modern", "safetensors", seed=9006, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=20, layer_norm_eps=1e-12, type_vocab_size=2)
    out = WORK / "never-written.pt"
    ids, mask, types = random_inputs(config, 4)

    def input_file(name, **tensors):
        torch.save(tensors, WORK / name)
        return WORK / name

    expect_error(["encode", "--model", WORK / "nope", "--text", "hi", "--output", out], "nope")
    expect_error(["encode", "--model", model, "--output", out], "--input")
    expect_error(["encode", "--model", model, "--text", "hi", "--output", out, "--frobnicate"], "frobnicate")
    expect_error(["encode", "--model", model, "--input", input_file("f.pt", input_ids=ids.float(), attention_mask=mask),
                  "--output", out], "input_ids must be int64")
    expect_error(["encode", "--model", model, "--input", input_file("s.pt", input_ids=ids[0], attention_mask=mask[0]),
                  "--output", out], "2-D")
    expect_error(["encode", "--model", model, "--input",
                  input_file("m.pt", input_ids=ids, attention_mask=mask[:, :5]), "--output", out], "attention_mask has shape")
    expect_error(["encode", "--model", model, "--input", input_file("v.pt", input_ids=ids + 1000, attention_mask=mask),
                  "--output", out], "outside the model's vocabulary")
    expect_error(["encode", "--model", model, "--input",
                  input_file("t.pt", input_ids=ids, attention_mask=mask, token_type_ids=types * 5), "--output", out],
                 "type_vocab_size")
    expect_error(["encode", "--model", model, "--input", input_file("n.pt", input_ids=ids, token_type_ids=types), "--output", out],
                 "attention_mask is missing")
    expect_error(["encode", "--model", model, "--input", input_file("x.pt", input_ids=ids, attention_mask=mask, extra=ids),
                  "--output", out], "unexpected entry")
    legacy = WORK / "legacy.pt"
    torch.save({"input_ids": ids, "attention_mask": mask}, legacy, _use_new_zipfile_serialization=False)
    expect_error(["encode", "--model", model, "--input", legacy, "--output", out], "zip format")
    # LibTorch 1.13 cannot unpickle a one-entry dict (Python writes it with an
    # opcode its unpickler lacks): the message says so instead of "opcode 115".
    # LibTorch 2.x reads it, and finds the mask missing.
    one_entry = "single entry" if libtorch_major() < 2 else "attention_mask is missing"
    expect_error(["encode", "--model", model, "--input", input_file("1.pt", input_ids=ids), "--output", out],
                 one_entry)
    (WORK / "garbage.pt").write_bytes(b"not a tensor file")
    expect_error(["encode", "--model", model, "--input", WORK / "garbage.pt", "--output", out], "garbage.pt")
    long_ids = torch.ones(1, 80, dtype=torch.long)
    expect_error(["encode", "--model", model, "--input", input_file("l.pt", input_ids=long_ids, attention_mask=long_ids),
                  "--output", out], "max_position_embeddings")
    expect_error(["encode", "--model", model, "--text", "hi", "--output", WORK / "no-such-dir" / "o.pt"], "no-such-dir")
    assert not out.exists()

    # A checkpoint that does not match its config: the tensor and both shapes.
    bad = WORK / "models" / "mismatch"
    subprocess.run(["cp", "-r", str(model), str(bad)], check=True)
    cfg = json.loads((bad / "config.json").read_text())
    cfg["intermediate_size"] = 24
    (bad / "config.json").write_text(json.dumps(cfg))
    expect_error(["info", "--model", bad], "encoder.layer.0.intermediate.dense.bias has shape [20] but the "
                                           "model's config implies [24]")
    cfg["intermediate_size"], cfg["num_hidden_layers"] = 20, 2
    (bad / "config.json").write_text(json.dumps(cfg))
    expect_error(["info", "--model", bad], "missing 16 tensor(s)")
    cfg["num_hidden_layers"], cfg["hidden_size"] = 1, "sixteen"
    (bad / "config.json").write_text(json.dumps(cfg))
    expect_error(["info", "--model", bad], '"hidden_size" must be an integer')
    (bad / "config.json").write_text("{not json")
    expect_error(["info", "--model", bad], "invalid JSON")


def test_version():
    result = mtbert("--version")
    assert result.returncode == 0 and result.stdout.startswith("mtbert "), result


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
