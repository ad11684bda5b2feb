"""What a model's config.json implies about its checkpoint, per model_type.

For each supported architecture: which config keys must be present, the HF
defaults of those that may be left out (written out explicitly for the C++
side), and the exact set of canonical tensor names with their shapes. Parts a
checkpoint may lack as a whole (BERT's pooler) are optional groups.
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
