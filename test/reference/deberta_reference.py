"""Two independent float64 implementations of DeBERTa's encoder (HuggingFace
DebertaV2Model's forward pass in eval mode, and mtbert's EMD), written from
the published formulas (He et al., "DeBERTa", eq. 4 and Algorithm 1; DeBERTa-v2's
log buckets), the references for mtbert's disentangled attention.

Both take mtbert's canonical state dict (BERT's names for the shared structure:
attention.self.query/key/value; encoder.rel_embeddings, encoder.LayerNorm,
attention.self.pos_key_proj / pos_query_proj, embeddings.embed_proj) and an HF
deberta-v2 config dict, and return {"last_hidden_state": [B, N, H]}.

The score of query i for key j, with d the head size and k the maximum
relative distance (position_buckets when bucketing):

    A[i,j] = (Qc_i.Kc_j + Qc_i.Kr_row(i,j) + Kc_j.Qr_row(i,j) [+ Qr_row(j,i).Kr_row(i,j)]) / sqrt(d * (1 + terms))
    row(i,j) = clamp(bucket(i - j) + k, 0, 2k - 1)

where Kr, Qr are the (optionally LayerNorm-ed) relative embeddings through the
content key/query projections (share_att_key) or pos_key_proj/pos_query_proj,
and `terms` counts the position terms pos_att_type names. Both position terms
use row(i, j): the published code does (the paper's text writes delta(j, i)
for p2c), and checkpoints were trained with the code.

The bracketed term is "p2p", position-to-position: the fourth term of the
paper's eq. 2, P_i|j P_j|i^T, which the paper drops and HF does not have.
With eq. 4's rows (the key position at delta(i, j), the query position at
delta(j, i)) it is Qr_row(j,i).Kr_row(i,j). It uses the query and the key
projections of the relative embeddings (pos_query_proj and pos_key_proj
without share_att_key), as microsoft/DeBERTa does for its p2p.

A: vectorized: the relative embeddings are first looked up per (i, j)
   ([N, N, d] tensors of Kr and Qr rows), then contracted with einsum; the
   bucket function is evaluated with torch ops.
B: literal, as Algorithm 1 of the paper: the [N, 2k] products Qc Kr^T and
   Kc Qr^T (and p2p's [2k, 2k] Qr Kr^T) are formed first, then every score
   is assembled in Python loops
   over (i, j), with row(i, j) from a scalar implementation of the bucket
   formula in Python's math module; softmax, LayerNorm and GELU spelt out.

EMD (mtbert's "emd_layers" key), as DeBERTa's decoder: the layers run up to
the second-to-last, whose output H_{L-1} is the keys/values of that many
passes through the last layer (in place of its own pass); the first pass's
queries are H_{L-1} + absolute position embeddings, each next pass's the
previous output.
"""
import math

import torch
import torch.nn.functional as F

DTYPE = torch.float64


# ----------------------------------------------------------------------------- config

def pos_att_terms(config):
    value = config.get("pos_att_type")
    if value is None:
        return []
    parts = value.split("|") if isinstance(value, str) else value
    terms = []
    for part in parts:
        part = part.strip().lower()
        if part and part != "none" and part not in terms:
            terms.append(part)
    return terms


def max_relative_positions(config):
    value = config.get("max_relative_positions", -1)
    return config["max_position_embeddings"] if value < 1 else value


def relative_span(config):
    buckets = config.get("position_buckets", -1)
    return buckets if buckets > 0 else max_relative_positions(config)


def uses_rel_layer_norm(config):
    return "layer_norm" in [x.strip().lower() for x in str(config.get("norm_rel_ebd", "none")).split("|")]


# ----------------------------------------------------------------------------- log buckets

def log_bucket_scalar(distance, bucket_size, max_position):
    """DeBERTa-v2's log bucket of one integer distance, in Python floats:
    |d| <= mid -> d; else sign(d) * (mid + ceil(log(|d|/mid) / log((max-1)/mid) * (mid-1)))."""
    mid = bucket_size // 2
    if abs(distance) <= mid:
        return distance
    magnitude = abs(distance)
    log_position = math.ceil(math.log(magnitude / mid) / math.log((max_position - 1) / mid) * (mid - 1)) + mid
    return int(log_position) if distance > 0 else -int(log_position)


def log_bucket_tensor(distance, bucket_size, max_position):
    """The same on an integer tensor, with torch ops in float64 (implementation A)."""
    d = distance.to(DTYPE)
    mid = float(bucket_size // 2)
    magnitude = d.abs()
    safe = torch.where(magnitude <= mid, torch.full_like(magnitude, mid), magnitude)
    log_position = torch.ceil(torch.log(safe / mid) / math.log((max_position - 1) / mid) * (mid - 1)) + mid
    return torch.where(magnitude <= mid, d, torch.sign(d) * log_position).to(torch.int64)


def relative_rows_a(n, config):
    """[N, N] int64 row(i, j) of the relative embedding table."""
    positions = torch.arange(n)
    distance = positions[:, None] - positions[None, :]
    buckets = config.get("position_buckets", -1)
    if buckets > 0:
        distance = log_bucket_tensor(distance, buckets, max_relative_positions(config))
    k = relative_span(config)
    return torch.clamp(distance + k, 0, 2 * k - 1)


def relative_row_b(i, j, config):
    distance = i - j
    buckets = config.get("position_buckets", -1)
    if buckets > 0:
        distance = log_bucket_scalar(distance, buckets, max_relative_positions(config))
    k = relative_span(config)
    return min(max(distance + k, 0), 2 * k - 1)


# ----------------------------------------------------------------------------- implementation A

def forward_a(weights, config, input_ids, attention_mask, token_type_ids=None, attentions=None):
    """attentions: a list that receives each layer's (and EMD pass's)
    probabilities [B, heads, N, N], when given."""
    w = _as_float64(weights)
    hidden = config["hidden_size"]
    eps = config["layer_norm_eps"]
    heads = config["num_attention_heads"]
    _require_gelu(config)
    n = input_ids.shape[1]
    x = F.embedding(input_ids, w["embeddings.word_embeddings.weight"])
    if config.get("position_biased_input", True):
        x = x + w["embeddings.position_embeddings.weight"][:n][None]
    if config.get("type_vocab_size", 0) > 0:
        types = token_type_ids if token_type_ids is not None else torch.zeros_like(input_ids)
        x = x + F.embedding(types, w["embeddings.token_type_embeddings.weight"])
    if "embeddings.embed_proj.weight" in w:
        x = F.linear(x, w["embeddings.embed_proj.weight"])
    x = F.layer_norm(x, (hidden,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)

    rel = None
    if config.get("relative_attention", False):
        rel = w["encoder.rel_embeddings.weight"]
        if uses_rel_layer_norm(config):
            rel = F.layer_norm(rel, (hidden,), w["encoder.LayerNorm.weight"], w["encoder.LayerNorm.bias"], eps)
    rows = relative_rows_a(n, config)
    keep = attention_mask.bool()[:, None, None, :]  # keys that may be attended to

    def layer(i, hidden_states, query_states):
        p = f"encoder.layer.{i}."
        attended = _attention_a(w, p, config, heads, hidden_states, query_states, rel, rows, keep, attentions)
        x1 = F.layer_norm(F.linear(attended, w[f"{p}attention.output.dense.weight"],
                                   w[f"{p}attention.output.dense.bias"]) + query_states,
                          (hidden,), w[f"{p}attention.output.LayerNorm.weight"],
                          w[f"{p}attention.output.LayerNorm.bias"], eps)
        inner = F.gelu(F.linear(x1, w[f"{p}intermediate.dense.weight"], w[f"{p}intermediate.dense.bias"]))
        return F.layer_norm(F.linear(inner, w[f"{p}output.dense.weight"], w[f"{p}output.dense.bias"]) + x1,
                            (hidden,), w[f"{p}output.LayerNorm.weight"], w[f"{p}output.LayerNorm.bias"], eps)

    layers = config["num_hidden_layers"]
    emd = config.get("emd_layers", 0)
    for i in range(layers - 1 if emd > 0 else layers):
        x = layer(i, x, x)
    if emd > 0:
        query = x + w["embeddings.position_embeddings.weight"][:n][None]
        for _ in range(emd):
            query = layer(layers - 1, x, query)
        x = query
    return {"last_hidden_state": x}


def _attention_a(w, p, config, heads, hidden_states, query_states, rel, rows, keep, attentions):
    batch, n, hidden = hidden_states.shape
    d = hidden // heads
    terms = pos_att_terms(config)

    def project(name, x):  # [..., H] -> [..., heads, d]
        y = F.linear(x, w[f"{p}attention.self.{name}.weight"], w[f"{p}attention.self.{name}.bias"])
        return y.reshape(*x.shape[:-1], heads, d)

    q, k, v = project("query", query_states), project("key", hidden_states), project("value", hidden_states)
    scores = torch.einsum("bihd,bjhd->bhij", q, k)
    if rel is not None:
        share = config.get("share_att_key", False)
        rel_rows = rel[rows]  # [N, N, H]: the relative embedding of each (i, j)
        if "c2p" in terms:
            kr = project("key" if share else "pos_key_proj", rel_rows)  # [N, N, heads, d]
            scores = scores + torch.einsum("bihd,ijhd->bhij", q, kr)
        if "p2c" in terms:
            qr = project("query" if share else "pos_query_proj", rel_rows)
            scores = scores + torch.einsum("bjhd,ijhd->bhij", k, qr)
        if "p2p" in terms:
            kr = project("key" if share else "pos_key_proj", rel_rows)  # row(i, j)
            qr_transposed = project("query" if share else "pos_query_proj", rel[rows.T])  # row(j, i)
            scores = scores + torch.einsum("ijhd,ijhd->hij", qr_transposed, kr)[None]
    scores = scores / math.sqrt(d * (1 + len(terms)))
    scores = scores.masked_fill(~keep, float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    if attentions is not None:
        attentions.append(probs)
    return torch.einsum("bhij,bjhd->bihd", probs, v).reshape(batch, n, hidden)


# ----------------------------------------------------------------------------- implementation B

def forward_b(weights, config, input_ids, attention_mask, token_type_ids=None):
    w = _as_float64(weights)
    eps = config["layer_norm_eps"]
    _require_gelu(config)
    batch, n = input_ids.shape
    x = w["embeddings.word_embeddings.weight"][input_ids]
    if config.get("position_biased_input", True):
        x = x + w["embeddings.position_embeddings.weight"][torch.arange(n)][None]
    if config.get("type_vocab_size", 0) > 0 and token_type_ids is not None:
        x = x + w["embeddings.token_type_embeddings.weight"][token_type_ids]
    elif config.get("type_vocab_size", 0) > 0:
        x = x + w["embeddings.token_type_embeddings.weight"][0]
    if "embeddings.embed_proj.weight" in w:
        x = x @ w["embeddings.embed_proj.weight"].T
    x = _layer_norm_b(x, w, "embeddings.LayerNorm", eps)
    rel = None
    if config.get("relative_attention", False):
        rel = w["encoder.rel_embeddings.weight"]
        if uses_rel_layer_norm(config):
            rel = _layer_norm_b(rel, w, "encoder.LayerNorm", eps)
    rows = [[relative_row_b(i, j, config) for j in range(n)] for i in range(n)]
    mask = attention_mask.tolist()

    def layer(i, hidden_states, query_states):
        p = f"encoder.layer.{i}."
        attended = _linear_b(_attention_b(w, p, config, hidden_states, query_states, rel, rows, mask),
                             w, f"{p}attention.output.dense")
        x1 = _layer_norm_b(query_states + attended, w, f"{p}attention.output.LayerNorm", eps)
        inner = _gelu_b(_linear_b(x1, w, f"{p}intermediate.dense"))
        return _layer_norm_b(x1 + _linear_b(inner, w, f"{p}output.dense"), w, f"{p}output.LayerNorm", eps)

    layers = config["num_hidden_layers"]
    passes = config.get("emd_layers", 0)
    for i in range(layers - 1 if passes else layers):
        x = layer(i, x, x)
    if passes:
        query = x + w["embeddings.position_embeddings.weight"][torch.arange(n)][None]
        for _ in range(passes):
            query = layer(layers - 1, x, query)
        x = query
    return {"last_hidden_state": x}


def _attention_b(w, p, config, hidden_states, query_states, rel, rows, mask):
    """Algorithm 1, one (batch row, head) at a time."""
    batch, n, hidden = hidden_states.shape
    heads = config["num_attention_heads"]
    d = hidden // heads
    terms = pos_att_terms(config)
    share = config.get("share_att_key", False)
    qc = _linear_b(query_states, w, f"{p}attention.self.query")
    kc = _linear_b(hidden_states, w, f"{p}attention.self.key")
    vc = _linear_b(hidden_states, w, f"{p}attention.self.value")
    if rel is not None:
        kr = _linear_b(rel, w, f"{p}attention.self.{'key' if share else 'pos_key_proj'}") \
            if "c2p" in terms or "p2p" in terms else None
        qr = _linear_b(rel, w, f"{p}attention.self.{'query' if share else 'pos_query_proj'}") \
            if "p2c" in terms or "p2p" in terms else None
    scale = math.sqrt(d * (1 + len(terms)))
    out = torch.zeros(batch, n, hidden, dtype=DTYPE)
    for b in range(batch):
        for h in range(heads):
            cols = slice(h * d, (h + 1) * d)
            q_h, k_h, v_h = qc[b, :, cols], kc[b, :, cols], vc[b, :, cols]
            c2p_all = q_h @ kr[:, cols].T if rel is not None and "c2p" in terms else None  # [N, 2k]
            p2c_all = k_h @ qr[:, cols].T if rel is not None and "p2c" in terms else None  # [N, 2k]
            p2p_all = qr[:, cols] @ kr[:, cols].T if rel is not None and "p2p" in terms else None  # [2k, 2k]
            scores = [[0.0] * n for _ in range(n)]
            for i in range(n):
                for j in range(n):
                    s = float(q_h[i] @ k_h[j])
                    if c2p_all is not None:
                        s += float(c2p_all[i, rows[i][j]])
                    if p2c_all is not None:
                        s += float(p2c_all[j, rows[i][j]])
                    if p2p_all is not None:  # P_i|j . P_j|i
                        s += float(p2p_all[rows[j][i], rows[i][j]])
                    scores[i][j] = s / scale
            for i in range(n):
                kept = [scores[i][j] for j in range(n) if mask[b][j]]
                top = max(kept)
                exps = [math.exp(scores[i][j] - top) if mask[b][j] else 0.0 for j in range(n)]
                total = sum(exps)
                probs = torch.tensor([e / total for e in exps], dtype=DTYPE)
                out[b, i, cols] = probs @ v_h
    return out


def _linear_b(x, w, name):
    y = x @ w[f"{name}.weight"].T
    bias = w.get(f"{name}.bias")
    return y if bias is None else y + bias


def _gelu_b(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _layer_norm_b(x, w, name, eps):
    mean = x.mean(dim=-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(variance + eps) * w[f"{name}.weight"] + w[f"{name}.bias"]


# ----------------------------------------------------------------------------- helpers

def _require_gelu(config):
    if config.get("hidden_act", "gelu") != "gelu":
        raise ValueError("the references implement hidden_act 'gelu' (erf) only")


def _as_float64(weights):
    return {name: tensor.detach().to(DTYPE) for name, tensor in weights.items()}


def max_abs_diff_unpadded(a, b, attention_mask):
    keep = attention_mask.bool()
    return (a[keep] - b[keep]).abs().max().item()
