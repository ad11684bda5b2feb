"""mtbert's relative-position op from Python: torch.ops.mtbert.disentangled_scores.

The op adds DeBERTa's position terms to the content scores in one pass,
without materialising the gathered [B, H, N, N] terms that the public
implementations build (src/ops/disentangled_scores.h has the whole contract):

    out[b,h,i,j] = content[b,h,i,j]
                 + scale * (c2p[b,h,i,r(i,j)] + p2c[b,h,j,r(i,j)] + p2p[h,i-j+N-1])
                 + bias[b,h,i,j]
    r(i,j)       = the plan's index[i - j + N - 1]

    import torch
    from mtbert_py import ops
    ops.load()                                    # build/libmtbert_ops.so
    positions = ops.relative_positions(128, span=256, buckets=256, max_position=512)
    scores = ops.disentangled_scores(content, c2p, p2c, positions.plan, 1.0, bias=mask_bias)

load() needs the torch this library was built against (Debian's python3-torch
for Debian's LibTorch; pip's torch for a build against its LibTorch).
"""
import math
import os
import re
from collections import namedtuple
from pathlib import Path

import torch

SOURCE_DIR = Path(__file__).resolve().parents[2]
LIBRARY_NAME = "libmtbert_ops.so"
_loaded = None


def _version(text):
    """The first three numbers of a version: "2.11.0+cu130" -> (2, 11, 0)."""
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def load(path=None):
    """Loads the op into torch.ops.mtbert and returns the library's path.

    path: the library, or a build folder holding it; default: $MTBERT_OPS_LIBRARY,
    else build/ of this checkout. Raises RuntimeError when it is missing, or when
    it was built against another LibTorch than this Python's torch (its
    libmtbert_ops.torch_version says which). Loading twice is a no-op."""
    global _loaded
    if path is None:
        path = os.environ.get("MTBERT_OPS_LIBRARY") or SOURCE_DIR / "build"
    library = Path(path)
    if library.is_dir():
        library = library / LIBRARY_NAME
    library = library.resolve()
    if _loaded is not None:
        if library != _loaded:
            raise RuntimeError(f"mtbert ops: {_loaded} is loaded already; a second library ({library}) cannot be")
        return _loaded
    if not library.is_file():
        raise RuntimeError(f"mtbert ops: no {library}; build it with scripts/build.sh (target mtbert_ops_module)")
    stamp = library.with_name("libmtbert_ops.torch_version")
    if stamp.is_file():
        built = stamp.read_text().strip()
        if _version(built) != _version(torch.__version__):
            raise RuntimeError(f"mtbert ops: {library} was built against LibTorch {built}, this Python has torch "
                               f"{torch.__version__}; build it against this torch's LibTorch "
                               "(torch.utils.cmake_prefix_path) or use the Python that matches")
    torch.ops.load_library(str(library))
    _loaded = library
    return library


def make_plan(index, tile_rows=0):
    """The op's plan for one sequence length N (torch.classes.mtbert.RelativePlan):
    index [2N - 1] int64 on the scores' device, entry i - j + N - 1 the relative
    row of score (i, j) (rows >= 0); tile_rows > 0 also makes the band of the
    banded layout (plan.c2p_first(), plan.p2c_first(), plan.width(),
    plan.c2p_rows(), plan.p2c_rows()). Made once per length and kept: it is
    validated when made, and the op then only checks shapes against it."""
    return torch.classes.mtbert.RelativePlan(index, tile_rows)


def disentangled_scores(content, c2p, p2c, plan, scale, bias=None, p2p=None):
    """The scores with the position terms added (see the module's docstring).

    content: [B, H, N, N]; c2p, p2c (optional): [B, H, N, S] with S at least
    plan.span(), or banded [B, H, tiles, T, W] as the plan's band (tile t of
    query rows, or key rows for p2c, holds relative rows first[t] .. first[t] + W);
    p2p (optional): [H, 2N - 1], one value per head and distance; bias
    (optional): broadcastable to [B, H, N, N], the padding mask's additive
    bias. All of content's dtype and device (float, double, half, bfloat16;
    under autocast the terms and bias are cast to content's dtype). Half and
    bfloat16 saturate at the dtype's finite extremes. Differentiable in
    content, c2p, p2c, p2p and bias (first order: double backward is refused);
    gradients of banded terms come back in their layout. Errors (shapes,
    dtypes, a plan for another length or device) are RuntimeErrors."""
    return torch.ops.mtbert.disentangled_scores(content, c2p, p2c, plan, float(scale), bias, p2p)


RelativePositions = namedtuple("RelativePositions", "plan first span")


def log_bucket_position(distance, bucket_size, max_position):
    """DeBERTa-v2's log buckets of integer distances (HF make_log_bucket_position)."""
    d = distance.double()
    mid = bucket_size // 2
    magnitude = d.abs()
    clipped = torch.where(magnitude < mid, torch.full_like(magnitude, mid - 1), magnitude)
    log_position = torch.ceil(torch.log(clipped / mid) / math.log((max_position - 1) / mid) * (mid - 1)) + mid
    return torch.where(magnitude <= mid, d, log_position * d.sign()).long()


def relative_positions(length, span, buckets=-1, max_position=-1, device="cpu", tile_rows=0):
    """DeBERTa's relative rows for sequences of `length`, as a plan over the rows in use.

    row(i, j) = clamp(bucket(i - j) + span, 0, 2 span - 1) indexes the [2 span, hidden]
    relative embedding table (span: HF's att_span, position_buckets when > 0, else
    max_relative_positions); buckets > 0: log buckets up to max_position. The
    rows in use are the block [first, first + span_in_use): the plan's index
    holds row - first, so only those rows of the table need projecting."""
    distance = torch.arange(-(length - 1), length)
    if buckets > 0:
        distance = log_bucket_position(distance, buckets, max_position)
    rows = torch.clamp(distance + span, 0, 2 * span - 1)
    first = int(rows.min())
    return RelativePositions(make_plan((rows - first).to(device), tile_rows), first, int(rows.max()) - first + 1)


def deberta_attention_bias(query_layer, key_layer, rel_embeddings, positions, pos_key_proj, pos_query_proj,
                           terms=("c2p", "p2c"), scale_factor=None, divisor=None):
    """The position part of a DeBERTa-v2 layer's attention scores, through the op:
    what HF's DisentangledSelfAttention.disentangled_att_bias adds to the
    content scores, [B, heads, N, N].

    query_layer, key_layer: the content queries and keys [B, heads, N, d]
    (unscaled); rel_embeddings: the layer's relative embedding table [2 span,
    hidden] after its LayerNorm and dropout; positions: relative_positions()
    for N; pos_key_proj, pos_query_proj: the projections of the relative
    embeddings (HF: key_proj and query_proj with share_att_key, else
    pos_key_proj and pos_query_proj), callables hidden -> heads * d; terms: of
    c2p, p2c, p2p; scale_factor: HF's (1 + the number of terms by default).
    Each term is divided by divisor, by default sqrt(d * scale_factor), as HF does."""
    batch, heads, n, d = query_layer.shape
    terms = tuple(terms)
    if not set(terms) <= {"c2p", "p2c", "p2p"}:
        raise ValueError(f"deberta_attention_bias: position terms are c2p, p2c and p2p, got {terms}")
    scale_factor = 1 + len(terms) if scale_factor is None else scale_factor
    rel = rel_embeddings[positions.first:positions.first + positions.span]
    keys = pos_key_proj(rel).view(-1, heads, d).transpose(0, 1) if {"c2p", "p2p"} & set(terms) else None
    queries = pos_query_proj(rel).view(-1, heads, d).transpose(0, 1) if {"p2c", "p2p"} & set(terms) else None
    c2p = torch.matmul(query_layer, keys.transpose(-1, -2).unsqueeze(0)) if "c2p" in terms else None
    p2c = torch.matmul(key_layer, queries.transpose(-1, -2).unsqueeze(0)) if "p2c" in terms else None
    p2p = None
    if "p2p" in terms:
        index = positions.plan.index()
        # Entry i - j + N - 1: Qr of row(j, i) (the index reversed) . Kr of row(i, j).
        p2p = (queries[:, index.flip(0)] * keys[:, index]).sum(-1)
    # No content here: a single zero read through zero strides.
    zero = torch.zeros((), dtype=query_layer.dtype, device=query_layer.device).expand(batch, heads, n, n)
    divisor = math.sqrt(d * scale_factor) if divisor is None else divisor
    return disentangled_scores(zero, c2p, p2c, positions.plan, 1.0 / divisor, p2p=p2p)
