"""mtbert's relative-position op inside HuggingFace's DeBERTa-v2.

    from transformers import DebertaV2Model
    from mtbert_py.hf_deberta import patch_hf_deberta, unpatch_hf_deberta
    model = patch_hf_deberta(DebertaV2Model.from_pretrained("microsoft/deberta-v3-base"))
    ...                                   # forward and backward as before
    unpatch_hf_deberta(model)             # HF's own computation again

Every DisentangledSelfAttention layer of transformers' deberta_v2 (4.x and
5.x: both call `self.disentangled_attention_bias(query_layer, key_layer,
relative_pos, rel_embeddings, scale_factor)` with queries and keys as
[batch * heads, N, d] and add its [batch * heads, N, N] result to the scaled
content scores) gets that method replaced by one instance attribute that
computes the same c2p and p2c terms through torch.ops.mtbert.disentangled_scores:
the terms are summed in one pass from the [B, H, N, span] products instead of
gathering two [B, H, N, N] tensors, and only the relative rows that length N
uses are projected. Removing the attribute (unpatch) restores HF's method.

The relative rows come from HF's own make_log_bucket_position, so rounding at
bucket edges is HF's. What is not covered is refused with a clear error
instead of being computed differently: DeBERTa v1 layers (another module with
another attention), queries of another length than the keys (query_states, as
in an enhanced mask decoder), and relative positions that are not an odd function of i - j
alone (the encoder's own, bucketed or not, are).
"p2p" in pos_att_type is ignored, as deberta_v2 itself ignores it.
"""
import sys
import types

import torch

from . import ops

_PATCH = "disentangled_attention_bias"


def _deberta_v2_layers(model):
    """The model's DisentangledSelfAttention modules of transformers' deberta_v2;
    a DeBERTa v1 layer is an error (its attention is another computation)."""
    layers = []
    for name, module in model.named_modules():
        kind = type(module)
        if kind.__name__ != "DisentangledSelfAttention":
            continue
        if not kind.__module__.endswith("deberta_v2.modeling_deberta_v2"):
            raise ValueError(f"patch_hf_deberta: {name} is a {kind.__module__}.{kind.__name__}; only "
                             "transformers' DeBERTa-v2 (deberta_v2, also DeBERTa-v3) layers are covered")
        layers.append((name, module))
    return layers


class _Positions:
    """The op's plans for one model's layers, per device and relative distances,
    and the last relative_pos tensor read (held, so that no other tensor can
    take its identity while it is cached)."""

    def __init__(self, layer):
        self.span = layer.pos_ebd_size
        self.buckets = layer.position_buckets
        self.max_position = layer.max_relative_positions
        self.bucket = getattr(sys.modules[type(layer).__module__], "make_log_bucket_position", None)
        self.plans = {}
        self.last = None

    def own_distances(self, n, device):
        """What HF builds when no relative_pos is given: i - j, bucketed by HF's
        own function; entry k is that of i - j = k - (N - 1)."""
        distance = torch.arange(-(n - 1), n, dtype=torch.long, device=device)
        if self.buckets > 0 and self.max_position > 0:
            bucket = self.bucket or ops.log_bucket_position
            distance = bucket(distance, self.buckets, self.max_position).to(torch.long)
        return distance

    @staticmethod
    def given_distances(relative_pos, n, device):
        """The distances of a relative_pos HF passes ([N, N], [B, N, N] or
        [B, H, N, N]), which must depend on i - j alone, as the layer's own do."""
        if relative_pos.dim() not in (2, 3, 4) or tuple(relative_pos.shape[-2:]) != (n, n):
            raise RuntimeError(f"patch_hf_deberta: relative_pos of shape {tuple(relative_pos.shape)} for "
                               f"length {n}; the patched layers take [N, N], [B, N, N] or [B, H, N, N]")
        given = relative_pos.to(device=device, dtype=torch.long)
        first = given.reshape(-1, n, n)[0]
        distance = torch.cat([first[0, 1:].flip(0), first[:, 0]])
        i = torch.arange(n, device=device)
        # HF reads p2c at -relative_pos[j, i]; the op at the row of (i, j): the same
        # only where the positions are odd in i - j, as the encoder's own are.
        if not torch.equal(given, distance[i[:, None] - i[None, :] + n - 1].expand(given.shape)) or \
                not torch.equal(distance, -distance.flip(0)):
            raise RuntimeError("patch_hf_deberta: the relative_pos given is not a function of i - j alone, odd "
                               "in it (as the encoder's own are), for every sequence and head; the patched layers "
                               "compute only such positions (unpatch_hf_deberta restores HF's computation)")
        return distance

    def get(self, relative_pos, n, device):
        if relative_pos is not None and self.last is not None and self.last[0] is relative_pos and \
                self.last[1] == relative_pos._version and self.last[2] == device:
            return self.last[3]
        if relative_pos is None:
            own = (str(device), n)
            if own not in self.plans:
                self.plans[own] = self.plan(self.own_distances(n, device))
            return self.plans[own]
        distance = self.given_distances(relative_pos, n, device)
        key = (str(device), tuple(distance.tolist()))
        if key not in self.plans:
            self.plans[key] = self.plan(distance)
        self.last = (relative_pos, relative_pos._version, device, self.plans[key])
        return self.plans[key]

    def plan(self, distance):
        rows = torch.clamp(distance + self.span, 0, 2 * self.span - 1)
        first = int(rows.min())
        return ops.RelativePositions(ops.make_plan(rows - first), first, int(rows.max()) - first + 1)


def _patched_bias(self, query_layer, key_layer, relative_pos, rel_embeddings, scale_factor):
    """HF's disentangled_attention_bias through the op (same arguments, same result)."""
    n = query_layer.size(-2)
    if key_layer.size(-2) != n:
        raise RuntimeError(f"patch_hf_deberta: queries of length {n} against keys of length {key_layer.size(-2)} "
                           "(query_states) are not covered; unpatch_hf_deberta restores HF's computation")
    heads = self.num_attention_heads
    d = query_layer.size(-1)
    positions = self._mtbert_positions.get(relative_pos, n, query_layer.device)
    if self.share_att_key:
        key_proj, query_proj = self.key_proj, self.query_proj
    else:
        key_proj = getattr(self, "pos_key_proj", None)
        query_proj = getattr(self, "pos_query_proj", None)
    terms = [t for t in ("c2p", "p2c") if t in self.pos_att_type]
    # HF's divisor is a float32 sqrt in every dtype (a float64 model's too).
    divisor = float(torch.sqrt(torch.tensor(d, dtype=torch.float32) * scale_factor))
    bias = ops.deberta_attention_bias(query_layer.view(-1, heads, n, d), key_layer.view(-1, heads, n, d),
                                      rel_embeddings, positions, key_proj, query_proj, terms=terms,
                                      divisor=divisor)
    return bias.view(-1, n, n)


def patch_hf_deberta(model, library=None):
    """Replaces the relative-attention bias of every DeBERTa-v2 layer of `model`
    (a DebertaV2Model or any model holding one) with mtbert's op; returns the model.

    library: the op's library or build folder (ops.load's path). Raises
    ValueError when the model has no DeBERTa-v2 layer with relative attention
    and position terms, or holds DeBERTa v1 layers; RuntimeError from a
    forward that the patch does not cover (see the module's docstring)."""
    ops.load(library)
    layers = [(name, layer) for name, layer in _deberta_v2_layers(model)
              if getattr(layer, "relative_attention", False) and
              any(t in layer.pos_att_type for t in ("c2p", "p2c"))]
    if not layers:
        raise ValueError("patch_hf_deberta: the model has no DeBERTa-v2 attention layer with relative attention "
                         "and c2p or p2c terms (config.relative_attention, config.pos_att_type): nothing to patch")
    shared = {}
    for _, layer in layers:
        key = (layer.pos_ebd_size, layer.position_buckets, layer.max_relative_positions)
        layer._mtbert_positions = shared.setdefault(key, _Positions(layer))
        setattr(layer, _PATCH, types.MethodType(_patched_bias, layer))
    return model


def unpatch_hf_deberta(model):
    """Undoes patch_hf_deberta (a model never patched is left as it is); returns the model."""
    for _, layer in _deberta_v2_layers(model):
        if _PATCH in vars(layer):
            delattr(layer, _PATCH)
            del layer._mtbert_positions
    return model


def is_patched(model):
    """Whether any DeBERTa-v2 layer of the model computes its bias through the op."""
    return any(_PATCH in vars(layer) for _, layer in _deberta_v2_layers(model))
