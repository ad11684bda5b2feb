"""Two independent float64 implementations of HuggingFace BertModel's forward pass
(eval mode), the references for mtbert's encoder tests.

Both take the canonical (HF BertModel) state dict and the HF config dict, and
return {"last_hidden_state": [B, N, H], "pooler_output": [B, H] or None}.

A: the encoder layers are torch.nn.TransformerEncoderLayer (post-LN, erf GELU,
   key padding mask), loaded from the checkpoint; embeddings and pooler by hand.
B: every step spelt out as HF's modeling_bert computes it: additive mask
   (1 - mask) * finfo.min on the attention scores, explicit softmax, erf GELU,
   LayerNorm from mean and biased variance.

They share no code beyond reading the weights, so an error in one shows up as a
disagreement with the other.
"""
import math

import torch
import torch.nn.functional as F

DTYPE = torch.float64


def forward_a(weights, config, input_ids, attention_mask, token_type_ids):
    w = _as_float64(weights)
    hidden = config["hidden_size"]
    eps = config["layer_norm_eps"]
    if config.get("hidden_act", "gelu") != "gelu":
        raise ValueError("the references implement hidden_act 'gelu' (erf) only")
    positions = torch.arange(input_ids.shape[1])
    x = (F.embedding(input_ids, w["embeddings.word_embeddings.weight"])
         + F.embedding(positions, w["embeddings.position_embeddings.weight"])[None]
         + F.embedding(token_type_ids, w["embeddings.token_type_embeddings.weight"]))
    x = F.layer_norm(x, (hidden,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    padding = attention_mask == 0  # True where a key must be ignored
    with torch.no_grad():
        for i in range(config["num_hidden_layers"]):
            x = _torch_encoder_layer(w, config, i)(x, src_key_padding_mask=padding)
    return {"last_hidden_state": x, "pooler_output": _pooler_a(w, x)}


def _torch_encoder_layer(w, config, i):
    layer = torch.nn.TransformerEncoderLayer(
        d_model=config["hidden_size"], nhead=config["num_attention_heads"],
        dim_feedforward=config["intermediate_size"], dropout=0.0, activation="gelu",
        layer_norm_eps=config["layer_norm_eps"], batch_first=True, norm_first=False, dtype=DTYPE)
    p = f"encoder.layer.{i}."
    attention = layer.self_attn
    with torch.no_grad():
        # nn.MultiheadAttention packs the q, k, v projections into one [3H, H] matrix.
        attention.in_proj_weight.copy_(torch.cat([w[f"{p}attention.self.{n}.weight"]
                                                  for n in ("query", "key", "value")]))
        attention.in_proj_bias.copy_(torch.cat([w[f"{p}attention.self.{n}.bias"]
                                                for n in ("query", "key", "value")]))
        for target, source in (
                (attention.out_proj, "attention.output.dense"),
                (layer.linear1, "intermediate.dense"),
                (layer.linear2, "output.dense"),
                (layer.norm1, "attention.output.LayerNorm"),
                (layer.norm2, "output.LayerNorm")):
            target.weight.copy_(w[f"{p}{source}.weight"])
            target.bias.copy_(w[f"{p}{source}.bias"])
    return layer.eval()


def _pooler_a(w, x):
    if "pooler.dense.weight" not in w:
        return None
    return torch.tanh(F.linear(x[:, 0], w["pooler.dense.weight"], w["pooler.dense.bias"]))


def forward_b(weights, config, input_ids, attention_mask, token_type_ids):
    w = _as_float64(weights)
    eps = config["layer_norm_eps"]
    n = input_ids.shape[1]
    x = (w["embeddings.word_embeddings.weight"][input_ids]
         + w["embeddings.position_embeddings.weight"][:n][None]
         + w["embeddings.token_type_embeddings.weight"][token_type_ids])
    x = _layer_norm_b(x, w, "embeddings.LayerNorm", eps)
    # [B, 1, 1, N], broadcast over heads and query positions.
    additive_mask = (1.0 - attention_mask[:, None, None, :].to(DTYPE)) * torch.finfo(DTYPE).min
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        attended = _linear_b(_self_attention_b(x, w, p, config["num_attention_heads"], additive_mask),
                             w, f"{p}attention.output.dense")
        x = _layer_norm_b(x + attended, w, f"{p}attention.output.LayerNorm", eps)
        inner = _gelu_b(_linear_b(x, w, f"{p}intermediate.dense"))
        x = _layer_norm_b(x + _linear_b(inner, w, f"{p}output.dense"), w, f"{p}output.LayerNorm", eps)
    pooled = None
    if "pooler.dense.weight" in w:
        pooled = torch.tanh(_linear_b(x[:, 0], w, "pooler.dense"))
    return {"last_hidden_state": x, "pooler_output": pooled}


def _self_attention_b(x, w, p, heads, additive_mask):
    batch, n, hidden = x.shape
    head_size = hidden // heads

    def per_head(name):  # [B, heads, N, head_size]
        projected = _linear_b(x, w, f"{p}attention.self.{name}")
        return projected.reshape(batch, n, heads, head_size).permute(0, 2, 1, 3)

    q, k, v = per_head("query"), per_head("key"), per_head("value")
    scores = q @ k.transpose(-1, -2) / math.sqrt(head_size) + additive_mask
    exp = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    probs = exp / exp.sum(dim=-1, keepdim=True)
    return (probs @ v).permute(0, 2, 1, 3).reshape(batch, n, hidden)


def _linear_b(x, w, name):
    return x @ w[f"{name}.weight"].T + w[f"{name}.bias"]


def _gelu_b(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _layer_norm_b(x, w, name, eps):
    mean = x.mean(dim=-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(variance + eps) * w[f"{name}.weight"] + w[f"{name}.bias"]


def _as_float64(weights):
    return {name: tensor.detach().to(DTYPE) for name, tensor in weights.items()}


def max_abs_diff_unpadded(a, b, attention_mask):
    """Largest |a - b| over the positions whose attention_mask is 1 ([B, N, ...] tensors)."""
    keep = attention_mask.bool()
    return (a[keep] - b[keep]).abs().max().item()
