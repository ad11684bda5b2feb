"""What a model's config.json implies about its checkpoint, per model_type.

For each supported architecture: which config keys must be present, the HF
defaults of those that may be left out (written out explicitly for the C++
side), and the exact set of canonical tensor names with their shapes. Parts a
checkpoint may lack as a whole (BERT's pooler) are optional groups.

bert:       HF BertModel's own names.
deberta-v2: the same names for the structure DeBERTa shares with BERT (see
            hf_names.py for the renaming), plus encoder.rel_embeddings.weight,
            encoder.LayerNorm.*, attention.self.pos_key_proj/pos_query_proj.*
            and embeddings.embed_proj.weight, as the config implies.
"""
from dataclasses import dataclass
from typing import Callable

from .errors import UserError


@dataclass(frozen=True)
class Architecture:
    model_type: str
    size_keys: tuple          # positive integers every config must state
    config_defaults: dict     # HF defaults of keys a config may leave out
    check_config: Callable    # config -> None, raises UserError
    tensor_shapes: Callable   # config -> {canonical name: shape}, always present
    optional_groups: Callable  # config -> {group: {canonical name: shape}}, all or none
    # config -> {canonical name: why}: tensors a checkpoint may carry that this
    # config does not use (skipped, with the reason, instead of refused).
    unused_tensors: Callable = lambda config: {}


def _bert_check_config(config):
    if config["hidden_size"] % config["num_attention_heads"]:
        raise UserError(f"config.json: hidden_size {config['hidden_size']} is not a multiple "
                        f"of num_attention_heads {config['num_attention_heads']}")
    position_type = config.get("position_embedding_type", "absolute")
    if position_type != "absolute":
        raise UserError(f"config.json: position_embedding_type {position_type!r} is not "
                        "supported (only 'absolute')")


def _bert_tensor_shapes(config):
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    shapes = {
        "embeddings.word_embeddings.weight": (config["vocab_size"], hidden),
        "embeddings.position_embeddings.weight": (config["max_position_embeddings"], hidden),
        "embeddings.token_type_embeddings.weight": (config["type_vocab_size"], hidden),
        "embeddings.LayerNorm.weight": (hidden,),
        "embeddings.LayerNorm.bias": (hidden,),
    }
    for i in range(config["num_hidden_layers"]):
        layer = f"encoder.layer.{i}."
        for projection in ("query", "key", "value"):
            shapes[f"{layer}attention.self.{projection}.weight"] = (hidden, hidden)
            shapes[f"{layer}attention.self.{projection}.bias"] = (hidden,)
        shapes.update(_linear(f"{layer}attention.output.dense", hidden, hidden))
        shapes.update(_layer_norm(f"{layer}attention.output.LayerNorm", hidden))
        shapes.update(_linear(f"{layer}intermediate.dense", hidden, inner))
        shapes.update(_linear(f"{layer}output.dense", inner, hidden))
        shapes.update(_layer_norm(f"{layer}output.LayerNorm", hidden))
    return shapes


def _bert_optional_groups(config):
    hidden = config["hidden_size"]
    return {"pooler": _linear("pooler.dense", hidden, hidden)}


def _linear(name, in_features, out_features):
    # torch.nn.Linear stores its weight as [out, in].
    return {f"{name}.weight": (out_features, in_features), f"{name}.bias": (out_features,)}


def _layer_norm(name, size):
    return {f"{name}.weight": (size,), f"{name}.bias": (size,)}


def deberta_pos_att_type(config):
    """pos_att_type as a list of lower-case names: HF accepts a list or a
    "p2c|c2p" string (DeBERTa-v3's config.json has the string)."""
    value = config.get("pos_att_type")
    if value is None:
        return []
    parts = value.split("|") if isinstance(value, str) else value
    result = []
    for part in parts:
        part = part.strip().lower()
        if part and part != "none" and part not in result:
            result.append(part)
    return result


def deberta_relative_span(config):
    """k: position_buckets when > 0, else max_relative_positions (< 1 means
    max_position_embeddings). The relative embedding table has 2k rows."""
    if config.get("position_buckets", -1) > 0:
        return config["position_buckets"]
    return deberta_max_relative_positions(config)


def deberta_max_relative_positions(config):
    value = config.get("max_relative_positions", -1)
    return config["max_position_embeddings"] if value < 1 else value


def deberta_uses_position_embeddings(config):
    """The absolute position table: at the input (position_biased_input) or
    for mtbert's EMD (emd_layers > 0)."""
    return config.get("position_biased_input", True) or config.get("emd_layers", 0) > 0


def _deberta_check_config(config):
    hidden, heads = config["hidden_size"], config["num_attention_heads"]
    if hidden % heads:
        raise UserError(f"config.json: hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    head_size = config.get("attention_head_size")
    if head_size is not None and head_size * heads != hidden:
        raise UserError(f"config.json: attention_head_size {head_size!r} is not supported "
                        "(only hidden_size / num_attention_heads)")
    if config.get("conv_kernel_size", 0) > 0:
        raise UserError(f"config.json: conv_kernel_size {config['conv_kernel_size']} (DeBERTa-v2's "
                        "convolution layer) is not supported")
    type_vocab = config.get("type_vocab_size", 0)
    if not (isinstance(type_vocab, int) and type_vocab >= 0):
        raise UserError(f"config.json: type_vocab_size must be an integer >= 0, got {type_vocab!r}")
    value = config.get("pos_att_type")
    if value is not None and not isinstance(value, (str, list)):
        raise UserError(f"config.json: pos_att_type must be a list or a \"c2p|p2c\" string, got {value!r}")
    for term in deberta_pos_att_type(config):
        if term not in ("c2p", "p2c"):
            raise UserError(f"config.json: pos_att_type {term!r} is not supported ('c2p' and/or 'p2c')")
    norms = [x.strip().lower() for x in str(config.get("norm_rel_ebd", "none")).split("|")]
    if any(x not in ("none", "layer_norm", "") for x in norms):
        raise UserError(f"config.json: norm_rel_ebd {config['norm_rel_ebd']!r} is not supported "
                        "('none' or 'layer_norm')")
    buckets = config.get("position_buckets", -1)
    if buckets > 0 and not (buckets >= 2 and deberta_max_relative_positions(config) - 1 > buckets // 2):
        raise UserError(f"config.json: position_buckets {buckets} needs max_relative_positions - 1 > "
                        "position_buckets / 2")
    embedding_size = config.get("embedding_size") or hidden
    if config.get("emd_layers", 0) > 0 and embedding_size != hidden:
        raise UserError("config.json: emd_layers needs embedding_size == hidden_size")


def _deberta_tensor_shapes(config):
    hidden, inner = config["hidden_size"], config["intermediate_size"]
    width = config.get("embedding_size") or hidden
    shapes = {"embeddings.word_embeddings.weight": (config["vocab_size"], width)}
    if deberta_uses_position_embeddings(config):
        shapes["embeddings.position_embeddings.weight"] = (config["max_position_embeddings"], width)
    if config.get("type_vocab_size", 0) > 0:
        shapes["embeddings.token_type_embeddings.weight"] = (config["type_vocab_size"], width)
    if width != hidden:
        shapes["embeddings.embed_proj.weight"] = (hidden, width)
    shapes.update(_layer_norm("embeddings.LayerNorm", hidden))
    terms = deberta_pos_att_type(config)
    separate_position_projections = config.get("relative_attention", False) and not config.get("share_att_key", False)
    for i in range(config["num_hidden_layers"]):
        layer = f"encoder.layer.{i}."
        for projection in ("query", "key", "value"):
            shapes.update(_linear(f"{layer}attention.self.{projection}", hidden, hidden))
        if separate_position_projections and "c2p" in terms:
            shapes.update(_linear(f"{layer}attention.self.pos_key_proj", hidden, hidden))
        if separate_position_projections and "p2c" in terms:
            shapes.update(_linear(f"{layer}attention.self.pos_query_proj", hidden, hidden))
        shapes.update(_linear(f"{layer}attention.output.dense", hidden, hidden))
        shapes.update(_layer_norm(f"{layer}attention.output.LayerNorm", hidden))
        shapes.update(_linear(f"{layer}intermediate.dense", hidden, inner))
        shapes.update(_linear(f"{layer}output.dense", inner, hidden))
        shapes.update(_layer_norm(f"{layer}output.LayerNorm", hidden))
    if config.get("relative_attention", False):
        shapes["encoder.rel_embeddings.weight"] = (2 * deberta_relative_span(config), hidden)
    if "layer_norm" in [x.strip().lower() for x in str(config.get("norm_rel_ebd", "none")).split("|")]:
        shapes.update(_layer_norm("encoder.LayerNorm", hidden))
    return shapes


def _deberta_unused_tensors(config):
    if deberta_uses_position_embeddings(config):
        return {}
    return {"embeddings.position_embeddings.weight":
            "unused: position_biased_input is false and emd_layers is 0 (HF ignores it too)"}


def _no_optional_groups(config):
    # DebertaV2Model has no pooler; task models' ContextPooler is skipped.
    return {}


ARCHITECTURES = {
    "bert": Architecture(
        model_type="bert",
        size_keys=("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                   "intermediate_size", "max_position_embeddings", "type_vocab_size"),
        config_defaults={
            "hidden_act": "gelu",
            "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1,
            "layer_norm_eps": 1e-12,
            "pad_token_id": 0,
        },
        check_config=_bert_check_config,
        tensor_shapes=_bert_tensor_shapes,
        optional_groups=_bert_optional_groups,
    ),
    "deberta-v2": Architecture(
        model_type="deberta-v2",
        # type_vocab_size may be 0 (DeBERTa-v3): checked in _deberta_check_config.
        size_keys=("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                   "intermediate_size", "max_position_embeddings"),
        # HF DebertaV2Config's defaults of the keys mtbert reads.
        config_defaults={
            "hidden_act": "gelu",
            "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1,
            "layer_norm_eps": 1e-7,
            "pad_token_id": 0,
            "type_vocab_size": 0,
            "initializer_range": 0.02,
            "relative_attention": False,
            "max_relative_positions": -1,
            "position_buckets": -1,
            "pos_att_type": [],
            "share_att_key": False,
            "norm_rel_ebd": "none",
            "position_biased_input": True,
        },
        check_config=_deberta_check_config,
        tensor_shapes=_deberta_tensor_shapes,
        optional_groups=_no_optional_groups,
        unused_tensors=_deberta_unused_tensors,
    ),
}


def architecture_for(config):
    """The Architecture of a parsed config.json; UserError when unsupported or incomplete."""
    model_type = config.get("model_type")
    if model_type is None:
        raise UserError('config.json has no "model_type" (add e.g. "model_type": "bert")')
    architecture = ARCHITECTURES.get(model_type)
    if architecture is None:
        raise UserError(f"config.json: unknown model_type {model_type!r} "
                        f"(supported: {', '.join(sorted(ARCHITECTURES))})")
    for key in architecture.size_keys:
        value = config.get(key)
        if not (isinstance(value, int) and not isinstance(value, bool) and value > 0):
            raise UserError(f"config.json: {key} must be a positive integer, got {value!r}")
    architecture.check_config(config)
    return architecture


def with_defaults(config, architecture):
    """config plus the HF defaults it leaves out, and the names of the keys added."""
    added = [key for key in architecture.config_defaults if key not in config]
    return {**config, **{key: architecture.config_defaults[key] for key in added}}, added


def check_tensors(architecture, config, tensors, source_names):
    """Checks that the canonical tensors are exactly those the config implies.

    tensors: {canonical name: tensor}; source_names: {canonical name: name in the
    source file}, for messages. Returns the optional groups present. Raises one
    UserError listing the problems (first few in full, then a count)."""
    expected = dict(architecture.tensor_shapes(config))
    present_groups = []
    for group, shapes in architecture.optional_groups(config).items():
        if any(name in tensors for name in shapes):
            expected.update(shapes)
            present_groups.append(group)

    def where(name):
        source = source_names.get(name, name)
        return f"'{name}'" if source == name else f"'{name}' (source '{source}')"

    problems = [f"missing tensor '{name}' of shape {_fmt(shape)}"
                for name, shape in expected.items() if name not in tensors]
    problems += [f"unexpected tensor {where(name)} of shape {_fmt(tensor.shape)}: not part of a "
                 f"{architecture.model_type} model with this config.json"
                 for name, tensor in tensors.items() if name not in expected]
    for name, tensor in tensors.items():
        if name not in expected:
            continue
        if tuple(tensor.shape) != expected[name]:
            problems.append(f"tensor {where(name)} has shape {_fmt(tensor.shape)} "
                            f"but config.json implies {_fmt(expected[name])}")
        elif not tensor.is_floating_point():
            problems.append(f"tensor {where(name)} has dtype {tensor.dtype}, not a floating type")
    if problems:
        shown = "; ".join(problems[:3])
        more = f"; and {len(problems) - 3} more" if len(problems) > 3 else ""
        raise UserError(shown + more)
    return present_groups


def _fmt(shape):
    return "[" + ", ".join(str(d) for d in shape) + "]"
