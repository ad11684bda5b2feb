#!/usr/bin/env python3
"""The relative-position op from Python (scripts/mtbert_py/ops.py, loading
build/libmtbert_ops.so into torch.ops.mtbert): the op against a float64
gather formulation in float, double and bfloat16, full and banded, with p2p,
forward and backward; gradcheck in double; CPU autocast; errors as
RuntimeError with the op's message; and deberta_attention_bias against the
float64 DeBERTa reference's position terms (test/reference/deberta_reference.py)
for clamped and log-bucketed positions, shared and separate projections."""
import math
import sys

import torch

from mini_runner import run_tests
from mtbert_py import ops
import deberta_reference as ref

ops.load()


def gather_reference(content, c2p, p2c, index, scale, bias=None, p2p=None):
    """The public implementations' formulation, in whatever dtype it is given."""
    b, h, n, _ = content.shape
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    distance = i - j + n - 1  # [N, N]
    rows = index[distance].expand(b, h, n, n)
    out = content
    if c2p is not None:
        out = out + scale * torch.gather(c2p, -1, rows)
    if p2c is not None:
        out = out + scale * torch.gather(p2c, -1, rows.transpose(-1, -2)).transpose(-1, -2)
    if p2p is not None:
        out = out + scale * p2p[:, distance]
    return out if bias is None else out + bias


def inputs(b=2, h=3, n=13, k=4, dtype=torch.float64, seed=0):
    g = torch.Generator().manual_seed(seed)
    index = torch.clamp(torch.arange(-(n - 1), n) + k, 0, 2 * k - 1)
    index = index - index.min()
    span = int(index.max()) + 1
    randn = lambda *shape: torch.randn(*shape, generator=g, dtype=torch.float64).to(dtype)
    mask = torch.ones(b, n, dtype=torch.float64)
    mask[1:, n - 3:] = 0
    bias = ((1 - mask) * torch.finfo(dtype).min).view(b, 1, 1, n).to(dtype)
    return dict(content=randn(b, h, n, n), c2p=randn(b, h, n, span), p2c=randn(b, h, n, span),
                p2p=randn(h, 2 * n - 1), bias=bias, index=index)


def banded(full, plan, by_query):
    """The full term cut into the plan's tiles (padding rows zero)."""
    b, h, n, _ = full.shape
    tile, width = plan.tile_rows(), plan.width()
    first = plan.c2p_first() if by_query else plan.p2c_first()
    out = torch.zeros(b, h, len(first), tile, width, dtype=full.dtype)
    for t, f in enumerate(first):
        rows = min(tile, n - t * tile)
        out[:, :, t, :rows] = full[:, :, t * tile:t * tile + rows, f:f + width]
    return out


def test_the_library_loads_into_torch_ops():
    assert ops.load() == ops.load()  # a second call is a no-op
    assert hasattr(torch.ops.mtbert, "disentangled_scores")
    plan = ops.make_plan(torch.tensor([0, 1, 2]))
    assert plan.length() == 2 and plan.span() == 3


def test_op_equals_the_gather_formulation_in_three_dtypes_with_p2p():
    for dtype, tol in ((torch.float64, 1e-12), (torch.float32, 1e-5), (torch.bfloat16, 3e-2)):
        x = inputs(dtype=dtype, seed=1)
        plan = ops.make_plan(x["index"])
        leaves = {name: x[name].clone().requires_grad_(True) for name in ("content", "c2p", "p2c", "p2p")}
        out = ops.disentangled_scores(leaves["content"], leaves["c2p"], leaves["p2c"], plan, 0.7, x["bias"],
                                      leaves["p2p"])
        ref_leaves = {name: t.detach().double().requires_grad_(True) for name, t in leaves.items()}
        expected = gather_reference(ref_leaves["content"], ref_leaves["c2p"], ref_leaves["p2c"], x["index"], 0.7,
                                    x["bias"].double(), ref_leaves["p2p"])
        finite = expected.clamp(min=torch.finfo(dtype).min)  # the op saturates at the dtype's extremes
        assert out.dtype == dtype
        scale = finite.abs().clamp(min=1)
        assert ((out.double() - finite).abs() / scale).max() < tol, dtype
        grad = torch.randn(out.shape, dtype=torch.float64)
        out.backward(grad.to(dtype))
        expected.backward(grad.to(dtype).double())
        for name in leaves:
            err = (leaves[name].grad.double() - ref_leaves[name].grad).abs().max()
            size = ref_leaves[name].grad.abs().max().clamp(min=1)
            assert err / size < tol * 4, (dtype, name, float(err))


def test_banded_terms_equal_full_ones():
    x = inputs(n=37, k=8, seed=2)
    full_plan, plan = ops.make_plan(x["index"]), ops.make_plan(x["index"], 16)
    full = ops.disentangled_scores(x["content"], x["c2p"], x["p2c"], full_plan, 0.5, x["bias"], x["p2p"])
    c2p = banded(x["c2p"], plan, True).requires_grad_(True)
    p2c = banded(x["p2c"], plan, False).requires_grad_(True)
    out = ops.disentangled_scores(x["content"], c2p, p2c, plan, 0.5, x["bias"], x["p2p"])
    assert torch.allclose(out, full, rtol=0, atol=1e-12)
    out.sum().backward()
    assert c2p.grad.shape == c2p.shape and p2c.grad.shape == p2c.shape
    full_c2p = x["c2p"].clone().requires_grad_(True)
    ops.disentangled_scores(x["content"], full_c2p, None, full_plan, 0.5).sum().backward()
    assert torch.allclose(c2p.grad, banded(full_c2p.grad, plan, True), rtol=0, atol=1e-12)


def test_gradcheck_in_double():
    x = inputs(b=2, h=2, n=5, k=2, seed=3)
    plan = ops.make_plan(x["index"])
    bias = torch.randn(2, 1, 5, 5, dtype=torch.float64, requires_grad=True)
    args = [x[name].requires_grad_(True) for name in ("content", "c2p", "p2c", "p2p")]
    f = lambda content, c2p, p2c, p2p, bias: ops.disentangled_scores(content, c2p, p2c, plan, 0.37, bias, p2p)
    assert torch.autograd.gradcheck(f, (*args, bias))


def test_cpu_autocast_runs_in_the_scores_dtype():
    x = inputs(dtype=torch.float32, seed=4)
    plan = ops.make_plan(x["index"])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = ops.disentangled_scores(x["content"].bfloat16(), x["c2p"], x["p2c"], plan, 1.0, x["bias"], x["p2p"])
    assert out.dtype == torch.bfloat16
    assert torch.isfinite(out.float()).all()  # the float32 mask saturates, it does not overflow
    plain = ops.disentangled_scores(x["content"], x["c2p"], x["p2c"], plan, 1.0, None, x["p2p"])
    keep = x["bias"].expand_as(plain) == 0
    assert ((out.float() - plain)[keep].abs() / plain[keep].abs().clamp(min=1)).max() < 3e-2


def raises(message, f, *args):
    try:
        f(*args)
    except RuntimeError as e:
        assert message in str(e), str(e)
        return
    raise AssertionError(f"no RuntimeError with {message!r}")


def test_errors_arrive_as_runtime_errors_with_the_ops_message():
    x = inputs(seed=5)
    plan = ops.make_plan(x["index"])
    raises("p2p must be [H, 2N - 1]", ops.disentangled_scores, x["content"], x["c2p"], None, plan, 1.0, None,
           x["p2p"][:, :5])
    raises("the plan is for sequences of 3", ops.disentangled_scores, x["content"], x["c2p"], None,
           ops.make_plan(torch.arange(5)), 1.0)
    raises("negative", ops.make_plan, torch.tensor([0, -1, 0]))
    raises("the plan has no band", ops.disentangled_scores, x["content"],
           banded(x["c2p"], ops.make_plan(x["index"], 4), True), None, plan, 1.0)
    c2p = x["c2p"].clone().requires_grad_(True)
    loss = torch.softmax(ops.disentangled_scores(x["content"], c2p, None, plan, 1.0), -1).pow(2).sum()
    raises("double backward is not supported", torch.autograd.grad, loss, c2p, None, True, True)


def test_cuda_equals_cpu():
    if not torch.cuda.is_available():
        print("    SKIPPED here: no CUDA device")
        return
    x = inputs(n=37, k=8, dtype=torch.float32, seed=7)
    for tile in (0, 16):
        results = []
        for device in ("cpu", "cuda"):
            plan = ops.make_plan(x["index"].to(device), tile)
            c2p, p2c = x["c2p"].to(device), x["p2c"].to(device)
            if tile:
                c2p, p2c = banded(x["c2p"], plan, True).to(device), banded(x["p2c"], plan, False).to(device)
            leaves = [t.detach().requires_grad_(True) for t in (c2p, p2c, x["p2p"].to(device))]
            out = ops.disentangled_scores(x["content"].to(device), leaves[0], leaves[1], plan, 0.7,
                                          x["bias"].to(device), leaves[2])
            out.backward(torch.ones_like(out))
            results.append([out.cpu()] + [t.grad.cpu() for t in leaves])
        for cpu, cuda in zip(*results):
            assert ((cuda - cpu).abs() / cpu.abs().clamp(min=1)).max() < 1e-4


def reference_position_bias(q, k, rel, rows, terms, project_key, project_query, scale_factor):
    """The position terms as deberta_reference's implementation A adds them
    (per-(i, j) relative rows, einsum), divided by sqrt(d * scale_factor)."""
    heads, d = q.shape[1], q.shape[3]
    per_pair = lambda project, table: project(table).view(*table.shape[:-1], heads, d)
    out = torch.zeros(q.shape[0], heads, q.shape[2], q.shape[2], dtype=torch.float64)
    if "c2p" in terms:
        out = out + torch.einsum("bhid,ijhd->bhij", q, per_pair(project_key, rel[rows]))
    if "p2c" in terms:
        out = out + torch.einsum("bhjd,ijhd->bhij", k, per_pair(project_query, rel[rows]))
    if "p2p" in terms:
        out = out + torch.einsum("ijhd,ijhd->hij", per_pair(project_query, rel[rows.T]),
                                 per_pair(project_key, rel[rows]))[None]
    return out / math.sqrt(d * scale_factor)


def test_deberta_attention_bias_equals_the_reference():
    hidden, heads, n, batch = 16, 4, 19, 2
    g = torch.Generator().manual_seed(6)
    variants = [
        ({"max_relative_positions": 5, "max_position_embeddings": 64}, True, ("c2p", "p2c")),           # clamped
        ({"position_buckets": 8, "max_relative_positions": 20, "max_position_embeddings": 64}, True,
         ("c2p", "p2c")),                                                                                # log buckets
        ({"position_buckets": 8, "max_relative_positions": 20, "max_position_embeddings": 64}, False,
         ("c2p", "p2c", "p2p")),                                                                         # separate, p2p
        ({"max_relative_positions": 32, "max_position_embeddings": 64}, False, ("p2c",)),                # N < k
    ]
    for config, share, terms in variants:
        span = ref.relative_span(config)
        rel = torch.randn(2 * span, hidden, generator=g, dtype=torch.float64)
        linears = [torch.nn.Linear(hidden, hidden).double() for _ in range(2)]
        key_proj, query_proj = (linears[0], linears[0]) if share else linears
        q = torch.randn(batch, heads, n, hidden // heads, generator=g, dtype=torch.float64)
        k = torch.randn(batch, heads, n, hidden // heads, generator=g, dtype=torch.float64)
        positions = ops.relative_positions(n, span, config.get("position_buckets", -1),
                                           ref.max_relative_positions(config))
        with torch.no_grad():
            got = ops.deberta_attention_bias(q, k, rel, positions, key_proj, query_proj, terms)
            expected = reference_position_bias(q, k, rel, ref.relative_rows_a(n, config), terms, key_proj,
                                               query_proj, 1 + len(terms))
        err = (got - expected).abs().max()
        print(f"    {config} share={share} {terms}: max |op - reference| {float(err):.1e}")
        assert err < 1e-12, err


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
