#!/usr/bin/env python3
"""patch_hf_deberta (scripts/mtbert_py/hf_deberta.py) on HuggingFace's own
DebertaV2Model, wherever transformers is installed (Debian sid's
python3-transformers, the GPU image's pip one; Debian 12 and 13 have none and
report SKIPPED): patched against unpatched, forward and every parameter's
gradient, in float32, float64 and CPU bf16 autocast, in eval and training
mode (same seed, same dropout), for DeBERTa-v3-like layers (log buckets,
shared keys, LayerNorm'd relative embeddings) and v2-like ones (clamped
positions, separate projections, one term only); unpatch restores HF's
computation bit for bit; what the patch does not cover is a clear error."""
import sys

import torch

from mini_runner import run_tests

try:
    import transformers
except ImportError:
    print("SKIPPED: transformers is not installed (Debian 12 and 13 have no python3-transformers)")
    sys.exit(0)

from mtbert_py import hf_deberta, ops

ops.load()
print(f"transformers {transformers.__version__}, torch {torch.__version__}")

HIDDEN, HEADS, LAYERS, N, BATCH = 32, 4, 2, 40, 3

VARIANTS = {
    "v3-like: log buckets, shared keys": dict(position_buckets=16, max_relative_positions=64, share_att_key=True,
                                              norm_rel_ebd="layer_norm", pos_att_type=["c2p", "p2c"]),
    "v2-like: clamped, separate projections": dict(max_relative_positions=12, share_att_key=False,
                                                   pos_att_type=["c2p", "p2c"]),
    "c2p only": dict(max_relative_positions=12, share_att_key=False, pos_att_type=["c2p"]),
    "p2c only, span beyond N": dict(max_relative_positions=64, share_att_key=False, pos_att_type=["p2c"]),
}


def model(variant, dropout=0.0, seed=0):
    torch.manual_seed(seed)
    config = transformers.DebertaV2Config(
        vocab_size=100, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
        intermediate_size=64, max_position_embeddings=128, relative_attention=True, position_biased_input=False,
        hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout, initializer_range=0.2,
        **VARIANTS[variant])
    # HF's initialization (0.02) leaves the position terms too small to show:
    # 0.2 makes them move the attention as a trained model's do.
    return transformers.DebertaV2Model(config)


def batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 100, (BATCH, N), generator=g)
    mask = torch.ones(BATCH, N, dtype=torch.long)
    mask[1, N - 7:] = 0
    mask[2, N // 2:] = 0
    return ids, mask


def forward_backward(m, ids, mask, seed=2, autocast=False):
    """The last hidden state and every parameter's gradient of a fixed weighted sum."""
    m.zero_grad(set_to_none=True)
    torch.manual_seed(seed)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        out = m(input_ids=ids, attention_mask=mask).last_hidden_state
    weights = torch.linspace(-1, 1, out.numel(), dtype=out.dtype).view_as(out)
    (out.float() * weights.float()).sum().backward()
    return out.detach().double(), {name: p.grad.double() for name, p in m.named_parameters() if p.grad is not None}


def gradient_error(got, expected):
    """The largest error of a parameter's gradient relative to its own size, or
    to a millionth of the largest gradient where its own is smaller (a gradient
    that is zero in exact arithmetic, such as that of pos_key_proj's bias,
    comes out as rounding noise)."""
    floor = 1e-6 * max(float(g.abs().max()) for g in expected.values())
    return max(float((got[k] - g).abs().max()) / max(float(g.abs().max()), floor) for k, g in expected.items())


def compare(variant, dtype=torch.float32, train=False, autocast=False):
    m = model(variant, dropout=0.1 if train else 0.0).to(dtype)
    m.train(train)
    ids, mask = batch()
    expected, expected_grads = forward_backward(m, ids, mask, autocast=autocast)
    hf_deberta.patch_hf_deberta(m)
    assert hf_deberta.is_patched(m)
    got, got_grads = forward_backward(m, ids, mask, autocast=autocast)
    hf_deberta.unpatch_hf_deberta(m)
    assert not hf_deberta.is_patched(m)
    again, _ = forward_backward(m, ids, mask, autocast=autocast)
    assert torch.equal(again, expected), "unpatch did not restore HF's computation"
    assert got_grads.keys() == expected_grads.keys()
    return float((got - expected).abs().max()), gradient_error(got_grads, expected_grads)


def test_float32_matches_hf_within_1e_5():
    for variant in VARIANTS:
        out_error, grad_error = compare(variant)
        print(f"    {variant}: max |patched - HF| {out_error:.1e}, gradients {grad_error:.1e} (relative)")
        assert out_error < 1e-5 and grad_error < 1e-4, (out_error, grad_error)


def test_float64_matches_hf_to_rounding():
    for variant in VARIANTS:
        out_error, grad_error = compare(variant, dtype=torch.float64)
        print(f"    {variant}: max |patched - HF| {out_error:.1e}, gradients {grad_error:.1e} (relative)")
        assert out_error < 1e-10 and grad_error < 1e-9, (variant, out_error, grad_error)


def test_training_mode_with_dropout_takes_the_same_masks():
    out_error, grad_error = compare("v3-like: log buckets, shared keys", train=True)
    print(f"    training, dropout 0.1: max |patched - HF| {out_error:.1e}, gradients {grad_error:.1e}")
    assert out_error < 1e-5 and grad_error < 1e-4, (out_error, grad_error)


def test_bf16_autocast_is_as_close_to_float64_as_hf():
    """Under bf16 the two round differently (the op sums the terms in float and
    rounds once): each is compared with the float64 model."""
    for variant in ("v3-like: log buckets, shared keys", "v2-like: clamped, separate projections"):
        m = model(variant)
        ids, mask = batch()
        exact, _ = forward_backward(m.double(), ids, mask)
        m.float()
        hf, _ = forward_backward(m, ids, mask, autocast=True)
        hf_deberta.patch_hf_deberta(m)
        patched, _ = forward_backward(m, ids, mask, autocast=True)
        hf_error, patched_error = float((hf - exact).abs().max()), float((patched - exact).abs().max())
        print(f"    {variant}: max error against float64: HF {hf_error:.3f}, patched {patched_error:.3f}")
        assert patched_error <= 1.5 * hf_error + 1e-2, (hf_error, patched_error)


def test_positions_given_by_hand_are_checked():
    m = model("v2-like: clamped, separate projections").eval()
    attention = m.encoder.layer[0].attention.self
    hidden = torch.randn(2, N, HIDDEN)
    mask = torch.ones(2, 1, N, N, dtype=torch.bool)
    rel = m.encoder.get_rel_embedding()
    i = torch.arange(N)
    plain = (i[:, None] - i[None, :]).unsqueeze(0)           # i - j, unclamped: HF clamps the rows itself
    expected = attention(hidden, mask, relative_pos=plain, rel_embeddings=rel)[0]
    hf_deberta.patch_hf_deberta(m)
    got = attention(hidden, mask, relative_pos=plain, rel_embeddings=rel)[0]
    assert (got - expected).abs().max() < 1e-5
    for bad, what in [((i[:, None] + i[None, :]).unsqueeze(0), "not a function of i - j"),
                      ((i[:, None] - i[None, :]).clamp(min=0).unsqueeze(0), "odd"),
                      (plain[:, :5, :5], "shape")]:
        try:
            attention(hidden, mask, relative_pos=bad, rel_embeddings=rel)
        except RuntimeError as e:
            assert "patch_hf_deberta" in str(e) and what in str(e), str(e)
        else:
            raise AssertionError(f"relative_pos that is {what} was taken")


def test_what_is_not_covered_is_a_clear_error():
    m = hf_deberta.patch_hf_deberta(model("v3-like: log buckets, shared keys").eval())
    attention = m.encoder.layer[0].attention.self
    try:
        attention(torch.randn(1, N, HIDDEN), torch.ones(1, 1, 5, N, dtype=torch.bool),
                  query_states=torch.randn(1, 5, HIDDEN), rel_embeddings=m.encoder.get_rel_embedding())
    except RuntimeError as e:
        assert "queries of length 5 against keys of length 40" in str(e), str(e)
    else:
        raise AssertionError("queries of another length were taken")
    absolute = transformers.DebertaV2Model(transformers.DebertaV2Config(
        vocab_size=100, hidden_size=HIDDEN, num_hidden_layers=1, num_attention_heads=HEADS, intermediate_size=64))
    for wrong, message in [(absolute, "nothing to patch"), (torch.nn.Linear(2, 2), "nothing to patch")]:
        try:
            hf_deberta.patch_hf_deberta(wrong)
        except ValueError as e:
            assert message in str(e), str(e)
        else:
            raise AssertionError(f"{type(wrong).__name__} was patched")
    v1 = transformers.DebertaModel(transformers.DebertaConfig(
        vocab_size=100, hidden_size=HIDDEN, num_hidden_layers=1, num_attention_heads=HEADS, intermediate_size=64,
        relative_attention=True, pos_att_type=["c2p", "p2c"]))
    try:
        hf_deberta.patch_hf_deberta(v1)
    except ValueError as e:
        assert "only transformers' DeBERTa-v2" in str(e), str(e)
    else:
        raise AssertionError("a DeBERTa v1 model was patched")


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
