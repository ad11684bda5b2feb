#!/usr/bin/env python3
"""Tests of the reference implementations in test/reference/bert_reference.py:
A and B agree, B matches a plain-Python evaluation done one scalar at a time,
and the fixtures' reference files are what B computes from the converted models."""
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from mini_runner import SOURCE_DIR, run_tests
import bert_reference
from mtbert_py.safetensors_io import read_safetensors
from mtbert_py.tiny_models import bert_config, random_bert_weights

# A and B run the same float64 arithmetic in a different order.
A_B_TOLERANCE = 1e-10


def random_inputs(config, batch, length, seed):
    """Token ids, a right-padded attention mask with at least one full row, and
    a second segment (token type 1) in every other row."""
    g = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(5, config["vocab_size"], (batch, length), generator=g)
    lengths = torch.randint(2, length + 1, (batch,), generator=g)
    lengths[0] = length
    positions = torch.arange(length)[None]
    attention_mask = (positions < lengths[:, None]).long()
    token_type_ids = torch.zeros(batch, length, dtype=torch.long)
    for row in range(1, batch, 2):
        split = int(lengths[row]) // 2
        token_type_ids[row, split:int(lengths[row])] = 1
    input_ids = input_ids * attention_mask  # [PAD] = 0 on padding
    return input_ids, attention_mask, token_type_ids


def test_a_and_b_agree_on_random_models():
    configs = (
        bert_config(120, 32, 2, 4, 37, 1e-12, 2),
        bert_config(120, 48, 3, 6, 83, 1e-7, 3),
        bert_config(120, 24, 2, 3, 50, 1e-12, 2),
        bert_config(120, 16, 1, 1, 20, 1e-3, 2),
    )
    for seed, config in enumerate(configs):
        weights = random_bert_weights(config, seed)
        inputs = random_inputs(config, batch=5, length=10, seed=seed)
        a = bert_reference.forward_a(weights, config, *inputs)
        b = bert_reference.forward_b(weights, config, *inputs)
        hidden = bert_reference.max_abs_diff_unpadded(a["last_hidden_state"], b["last_hidden_state"], inputs[1])
        pooled = (a["pooler_output"] - b["pooler_output"]).abs().max().item()
        print(f"     hidden {config['hidden_size']}: max |A - B| {hidden:.3g} (hidden), {pooled:.3g} (pooler)")
        assert hidden < A_B_TOLERANCE and pooled < A_B_TOLERANCE, config


def test_padding_is_invisible_to_real_positions():
    config = bert_config(120, 32, 2, 4, 37, 1e-12, 2)
    weights = random_bert_weights(config, 5)
    input_ids, mask, types = random_inputs(config, batch=4, length=9, seed=5)
    changed = input_ids.clone()
    changed[mask == 0] = 7
    for forward in (bert_reference.forward_a, bert_reference.forward_b):
        before = forward(weights, config, input_ids, mask, types)["last_hidden_state"]
        after = forward(weights, config, changed, mask, types)["last_hidden_state"]
        assert bert_reference.max_abs_diff_unpadded(before, after, mask) < 1e-12, forward.__name__


def test_b_building_blocks_match_hand_values():
    gelu = bert_reference._gelu_b(torch.tensor([1.0, -1.0, 0.0], dtype=torch.float64))
    # 0.5 * x * (1 + erf(x / sqrt(2))) = x * Phi(x): Phi(1) = 0.8413447460685429.
    assert torch.allclose(gelu, torch.tensor([0.8413447460685429, -0.15865525393145707, 0.0],
                                             dtype=torch.float64), rtol=0, atol=1e-15)
    weights = {"n.weight": torch.ones(4, dtype=torch.float64), "n.bias": torch.zeros(4, dtype=torch.float64)}
    normed = bert_reference._layer_norm_b(torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64),
                                          weights, "n", 0.0)
    # mean 2.5, biased variance 1.25: (x - 2.5) / sqrt(1.25).
    third = 0.5 / math.sqrt(1.25)
    assert torch.allclose(normed, torch.tensor([-3 * third, -third, third, 3 * third], dtype=torch.float64),
                          rtol=0, atol=1e-15)


def test_b_matches_scalar_evaluation_of_a_one_layer_model():
    config = bert_config(6, hidden_size=4, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=3, layer_norm_eps=1e-12, type_vocab_size=2,
                         max_position_embeddings=5)
    weights = random_bert_weights(config, 11)
    input_ids = torch.tensor([[2, 5, 3, 0], [2, 4, 1, 3]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]])
    types = torch.tensor([[0, 0, 0, 0], [0, 0, 1, 1]])
    b = bert_reference.forward_b(weights, config, input_ids, mask, types)
    w = {name: t.double().numpy() for name, t in weights.items()}
    for row in range(2):
        hidden, pooled = scalar_bert(w, config, input_ids[row].tolist(), mask[row].tolist(), types[row].tolist())
        real = int(mask[row].sum())
        assert np.abs(b["last_hidden_state"][row, :real].numpy() - hidden[:real]).max() < 1e-12, row
        assert np.abs(b["pooler_output"][row].numpy() - pooled).max() < 1e-12, row


def scalar_bert(w, config, ids, mask, types):
    """BERT of one row, one number at a time with the math module: masked keys
    are left out of the softmax rather than given a large negative score."""
    size, heads, eps = config["hidden_size"], config["num_attention_heads"], config["layer_norm_eps"]
    head_size = size // heads

    def linear(x, name):
        weight, bias = w[f"{name}.weight"], w[f"{name}.bias"]
        return [sum(weight[o][i] * x[i] for i in range(len(x))) + bias[o] for o in range(len(bias))]

    def layer_norm(x, name):
        mean = sum(x) / len(x)
        variance = sum((v - mean) ** 2 for v in x) / len(x)
        return [(v - mean) / math.sqrt(variance + eps) * w[f"{name}.weight"][k] + w[f"{name}.bias"][k]
                for k, v in enumerate(x)]

    x = [layer_norm([w["embeddings.word_embeddings.weight"][token][k]
                     + w["embeddings.position_embeddings.weight"][pos][k]
                     + w["embeddings.token_type_embeddings.weight"][kind][k] for k in range(size)],
                    "embeddings.LayerNorm")
         for pos, (token, kind) in enumerate(zip(ids, types))]
    keys = [j for j, m in enumerate(mask) if m]
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        q = [linear(v, f"{p}attention.self.query") for v in x]
        k = [linear(v, f"{p}attention.self.key") for v in x]
        v_ = [linear(v, f"{p}attention.self.value") for v in x]
        out = []
        for i in range(len(x)):
            context = [0.0] * size
            for h in range(heads):
                dims = range(h * head_size, (h + 1) * head_size)
                scores = {j: sum(q[i][d] * k[j][d] for d in dims) / math.sqrt(head_size) for j in keys}
                top = max(scores.values())
                exps = {j: math.exp(s - top) for j, s in scores.items()}
                total = sum(exps.values())
                for d in dims:
                    context[d] = sum(exps[j] / total * v_[j][d] for j in keys)
            attended = linear(context, f"{p}attention.output.dense")
            h1 = layer_norm([a + b for a, b in zip(x[i], attended)], f"{p}attention.output.LayerNorm")
            inner = [0.5 * u * (1 + math.erf(u / math.sqrt(2))) for u in linear(h1, f"{p}intermediate.dense")]
            ffn = linear(inner, f"{p}output.dense")
            out.append(layer_norm([a + b for a, b in zip(h1, ffn)], f"{p}output.LayerNorm"))
        x = out
    pooled = [math.tanh(v) for v in linear(x[0], "pooler.dense")]
    return np.array(x), np.array(pooled)


def test_fixture_references_match_b_on_converted_models():
    """The references C++ tests compare against, recomputed with B from the
    converted model folders: checks converter and fixture script end to end."""
    fixtures = os.environ.get("MTBERT_FIXTURES")
    if fixtures:
        check_fixture_references(Path(fixtures))
        return
    with tempfile.TemporaryDirectory(prefix="fixtures_") as tmp:
        subprocess.run([sys.executable, str(SOURCE_DIR / "scripts" / "make_test_fixtures.py"), "--out", tmp],
                       check=True, stdout=subprocess.DEVNULL)
        check_fixture_references(Path(tmp))


def check_fixture_references(fixtures):
    references = sorted((fixtures / "reference").glob("*.pt"))
    assert references, f"no reference/*.pt in {fixtures}"
    for path in references:
        model = fixtures / "models" / path.stem
        config = json.loads((model / "config.json").read_text())
        weights, _ = read_safetensors(model / "model.safetensors")
        reference = torch.load(path)
        has_pooler = "pooler.dense.weight" in weights
        expected_keys = {"input_ids", "attention_mask", "token_type_ids", "last_hidden_state"}
        assert set(reference) == expected_keys | ({"pooler_output"} if has_pooler else set()), path
        mask = reference["attention_mask"]
        batch, length = reference["input_ids"].shape
        assert batch >= 3 and (mask == 0).any() and (reference["token_type_ids"] == 1).any()
        for name, tensor in reference.items():
            assert type(tensor) is torch.Tensor and tensor.is_contiguous(), (path, name)
            assert tensor.dtype == (torch.int64 if name in expected_keys - {"last_hidden_state"} else torch.float32)
        assert reference["last_hidden_state"].shape == (batch, length, config["hidden_size"])
        b = bert_reference.forward_b(weights, config, reference["input_ids"], mask, reference["token_type_ids"])
        diff = bert_reference.max_abs_diff_unpadded(b["last_hidden_state"].float(),
                                                    reference["last_hidden_state"], mask)
        assert diff < 1e-5, (path, diff)
        if has_pooler:
            assert (b["pooler_output"].float() - reference["pooler_output"]).abs().max() < 1e-5, path


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
