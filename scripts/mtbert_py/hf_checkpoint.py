"""HuggingFace checkpoint folders, as convert_hf_checkpoint.py reads them and
the test fixtures write them: what a config.json implies, how the tensors are
named, where the weights are and how they load, and the tokenizer files.

Canonical names are those of the bare HuggingFace base model (`BertModel`'s own
state dict: `embeddings.*`, `encoder.layer.{i}.*`, `pooler.*`), which the C++
modules register one-to-one. For each supported model_type an `Architecture`
says which config keys must be present, the HF defaults of those that may be
left out (written out explicitly for the C++ side), and the exact set of
canonical tensor names with their shapes; a `Naming` says how a checkpoint's
own names map onto the canonical ones.

bert:       HF BertModel's own names.
deberta-v2: the same names for the structure DeBERTa shares with BERT (see
            NAMINGS for the renaming), plus encoder.rel_embeddings.weight,
            encoder.LayerNorm.*, attention.self.pos_key_proj/pos_query_proj.*
            and embeddings.embed_proj.weight, as the config implies.
"""
import pickle
import re
import shutil
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from .common import UserError, one_line, read_json, write_json
from .safetensors_io import read_safetensors, write_safetensors


# --- Architectures: what a config.json implies -------------------------------
# Parts a checkpoint may lack as a whole (BERT's pooler) are optional groups.


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


def _mlm_head_shapes(config, width):
    """HF's masked-LM head (BertOnlyMLMHead, DeBERTa-v2's legacy one), its
    decoder tied to the word embeddings: transform (hidden -> embedding width,
    LayerNorm) and the output bias."""
    shapes = _linear("cls.predictions.transform.dense", config["hidden_size"], width)
    shapes.update(_layer_norm("cls.predictions.transform.LayerNorm", width))
    shapes["cls.predictions.bias"] = (config["vocab_size"],)
    return shapes


def _bert_optional_groups(config):
    hidden = config["hidden_size"]
    return {"pooler": _linear("pooler.dense", hidden, hidden),
            "mlm_head": _mlm_head_shapes(config, hidden)}


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
        raise UserError(f"config.json: pos_att_type must be a list or a \"c2p|p2c|p2p\" string, got {value!r}")
    for term in deberta_pos_att_type(config):
        if term not in ("c2p", "p2c", "p2p"):
            raise UserError(f"config.json: pos_att_type {term!r} is not supported ('c2p', 'p2c', 'p2p')")
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
        # p2p (position-to-position) uses both position projections, as
        # microsoft/DeBERTa builds them.
        if separate_position_projections and ("c2p" in terms or "p2p" in terms):
            shapes.update(_linear(f"{layer}attention.self.pos_key_proj", hidden, hidden))
        if separate_position_projections and ("p2c" in terms or "p2p" in terms):
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


def _deberta_optional_groups(config):
    # DebertaV2Model has no pooler; task models' ContextPooler is skipped.
    width = config.get("embedding_size") or config["hidden_size"]
    return {"mlm_head": _mlm_head_shapes(config, width)}


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
        optional_groups=_deberta_optional_groups,
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


# --- Names: a checkpoint's tensor names -> canonical names -------------------
# Checkpoints name the same tensors in several ways: a task model prefixes the
# base model (`bert.`), the original TensorFlow-converted releases call LayerNorm
# parameters gamma/beta, and pretraining or task heads and buffers come along.
# Each model_type has one `Naming` entry saying how to undo that.


@dataclass(frozen=True)
class Naming:
    # Prefix of the base model inside task-model checkpoints; stripped when present.
    prefix: str
    # (old suffix, new suffix) pairs applied after the prefix is stripped.
    renames: tuple
    # (regex matched at the start of the unprefixed name, why it is skipped).
    skips: tuple


NAMINGS = {
    "bert": Naming(
        prefix="bert.",
        renames=(
            ("LayerNorm.gamma", "LayerNorm.weight"),
            ("LayerNorm.beta", "LayerNorm.bias"),
        ),
        skips=(
            (r"cls\.predictions\.decoder\.", "masked-LM decoder, tied to the word embeddings"),
            (r"cls\.seq_relationship\.", "next-sentence-prediction head"),
            (r"classifier\.", "task head"),
            (r"embeddings\.position_ids$", "buffer"),
            (r"embeddings\.token_type_ids$", "buffer"),
        ),
    ),
    # DeBERTa-v2/v3 (HF DebertaV2Model and its task and pretraining models).
    # The structure DeBERTa shares with BERT keeps BERT's names, so that a BERT
    # checkpoint loads into a model with disentangled attention and the other
    # way round:
    #   deberta.embeddings.*                      -> embeddings.* (incl. embed_proj)
    #   deberta.encoder.layer.{i}.attention.self.query_proj.* -> ...attention.self.query.*
    #                                  key_proj.*   -> key.*      value_proj.* -> value.*
    #                                  pos_key_proj.*, pos_query_proj.*  kept
    #   deberta.encoder.layer.{i}.{attention.output,intermediate,output}.* kept
    #   deberta.encoder.rel_embeddings.weight, deberta.encoder.LayerNorm.* kept
    "deberta-v2": Naming(
        prefix="deberta.",
        renames=tuple(
            (f"attention.self.{name}_proj.{kind}", f"attention.self.{name}.{kind}")
            for name in ("query", "key", "value") for kind in ("weight", "bias")),
        skips=(
            (r"cls\.predictions\.decoder\.", "masked-LM decoder, tied to the word embeddings"),
            # HF's legacy DeBERTa-v2 MLM head (cls.predictions.*) is kept;
            # microsoft/DeBERTa's layout maps its transform onto the hidden
            # size, which the tied decoder cannot read when embedding_size
            # differs.
            (r"lm_predictions\.", "masked-LM head in microsoft/DeBERTa's layout (HF's legacy "
                                   "cls.predictions.* is converted)"),
            (r"mask_predictions\.", "replaced-token-detection pretraining head"),
            (r"pooler\.", "task-model pooler (ContextPooler), not part of DebertaV2Model"),
            (r"classifier\.", "task head"),
            (r"qa_outputs\.", "task head"),
            (r"embeddings\.position_ids$", "buffer"),
        ),
    ),
}


@dataclass
class NameMapping:
    canonical: dict  # source name -> canonical name, for every tensor kept
    skipped: list    # (source name, why) for every tensor dropped

    @property
    def renamed_count(self):
        return sum(source != target for source, target in self.canonical.items())


def map_names(model_type, source_names):
    """Sorts the source names into kept (with their canonical name) and skipped.
    Does not judge whether a kept name belongs to the architecture: that is
    check_tensors' job, which can then name the source tensor."""
    naming = NAMINGS[model_type]
    mapping = NameMapping(canonical={}, skipped=[])
    source_of = {}
    for source in source_names:
        name = source[len(naming.prefix):] if source.startswith(naming.prefix) else source
        reason = next((why for pattern, why in naming.skips if re.match(pattern, name)), None)
        if reason is not None:
            mapping.skipped.append((source, reason))
            continue
        for old, new in naming.renames:
            if name.endswith(old):
                name = name[:-len(old)] + new
                break
        if name in source_of:
            raise UserError(f"tensors '{source_of[name]}' and '{source}' both map to '{name}'")
        source_of[name] = source
        mapping.canonical[source] = name
    return mapping


# --- Weights: finding and loading them ---------------------------------------
# HF folders hold `model.safetensors` or `pytorch_model.bin` (torch.save, either
# the zip format of torch >= 1.6 or the older legacy pickle format), or a sharded
# variant of either: `<name>.index.json` whose "weight_map" names the shard file
# of every tensor.


# In order of preference: safetensors cannot run code when loaded, pickles can.
WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


@dataclass
class LoadedWeights:
    tensors: dict                     # source name -> plain tensor, in file order
    files: list                       # the file names read, relative to the folder
    kind: str                         # e.g. "safetensors", "torch.save legacy format"
    ignored: list = field(default_factory=list)  # other weight files present, not used


def load_hf_weights(hf_dir):
    hf_dir = Path(hf_dir)
    present = [name for name in WEIGHT_FILES if (hf_dir / name).is_file()]
    if not present:
        raise UserError(f"no weights in {hf_dir}: expected one of {', '.join(WEIGHT_FILES)}")
    chosen = present[0]
    if chosen.endswith(".index.json"):
        weights = _load_sharded(hf_dir, chosen)
    else:
        tensors, kind = _load_file(hf_dir / chosen)
        weights = LoadedWeights(tensors=tensors, files=[chosen], kind=kind)
    weights.ignored = present[1:]
    return weights


def _load_file(path):
    if path.name.endswith(".safetensors"):
        tensors, _ = read_safetensors(path)
        return tensors, "safetensors"
    return _load_torch_pickle(path)


def _load_torch_pickle(path):
    try:
        with open(path, "rb") as f:
            # torch.save's zip format is a zip archive; the legacy format is a bare pickle.
            kind = "torch.save zip format" if f.read(2) == b"PK" else "torch.save legacy format"
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    try:
        # weights_only: the restricted unpickler accepts tensors, Parameters and
        # OrderedDicts but never runs arbitrary code from a downloaded file.
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, KeyError,
            AttributeError, OSError) as e:
        raise UserError(f"cannot read {path} ({kind}): {_load_error_reason(e)}") from None
    if not isinstance(state, dict):
        raise UserError(f"{path} holds a {type(state).__name__}, not a state dict")
    tensors = {}
    for name, value in state.items():
        if not isinstance(value, torch.Tensor):
            raise UserError(f"{path}: entry '{name}' is a {type(value).__name__}, not a tensor")
        # Drops the nn.Parameter wrapper: downstream code wants plain tensors.
        tensors[name] = value.detach()
    return tensors, kind


def _load_error_reason(error):
    message = one_line(error)
    # torch's weights-only message advises loading with weights_only=False, which
    # would run whatever code the file carries; keep only the diagnosis.
    marker = "WeightsUnpickler error:"
    if marker in message:
        message = "it holds something other than tensors, or is not a torch.save file (" \
                  + message[message.index(marker):] + ")"
    return message[:300] or f"{type(error).__name__} (the file is truncated or corrupt)"


def _load_sharded(hf_dir, index_name):
    index_path = hf_dir / index_name
    index = read_json(index_path)
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise UserError(f"{index_path} has no \"weight_map\" of tensor names to shard files")
    shards = sorted(set(weight_map.values()))
    tensors = {}
    kind = None
    for shard in shards:
        if Path(shard).name != shard:
            raise UserError(f"{index_path}: shard '{shard}' is not a plain file name")
        if not (hf_dir / shard).is_file():
            raise UserError(f"{index_path} names shard '{shard}', which is not in {hf_dir}")
        shard_tensors, kind = _load_file(hf_dir / shard)
        for name, tensor in shard_tensors.items():
            if name in tensors:
                raise UserError(f"tensor '{name}' is in more than one shard (again in '{shard}')")
            tensors[name] = tensor
    for name, shard in weight_map.items():
        if name not in tensors:
            raise UserError(f"{index_path} places '{name}' in '{shard}', which does not hold it")
    return LoadedWeights(tensors=tensors, files=[index_name, *shards], kind=f"sharded {kind}")


# --- Tokenizer: carried into the model folder --------------------------------
# The C++ tokenizer reads `vocab.txt` (WordPiece) or `spm.model` (SentencePiece)
# and takes `do_lower_case` from `tokenizer_config.json`. HF folders do not
# always state it (the original bert-base-uncased does not), so it is resolved
# here once and written out explicitly.


TOKENIZER_MODELS = ("vocab.txt", "spm.model")

# Specials such as [CLS] or [unused0] are spelt the same in cased and uncased vocabularies.
_BRACKETED_SPECIAL = re.compile(r"^\[[^\]]*\]$")
_UPPER_ASCII = re.compile(r"[A-Z]")


@dataclass(frozen=True)
class TokenizerFiles:
    source_dir: Path
    models: tuple        # the tokenizer model files present, e.g. ("vocab.txt",)
    do_lower_case: bool
    reason: str          # where do_lower_case came from

    def describe(self):
        return (f"{', '.join(self.models)} copied, "
                f"do_lower_case={str(self.do_lower_case).lower()} ({self.reason})")

    def write(self, out_dir):
        for name in self.models:
            shutil.copyfile(self.source_dir / name, Path(out_dir) / name)
        write_json(Path(out_dir) / "tokenizer_config.json", {"do_lower_case": self.do_lower_case})


def find_tokenizer(hf_dir):
    """The tokenizer files of a HF folder, or None when it has none. Reads and
    checks everything up front so that writing cannot fail on bad input."""
    hf_dir = Path(hf_dir)
    models = tuple(name for name in TOKENIZER_MODELS if (hf_dir / name).is_file())
    if not models:
        return None
    lower, reason = resolve_do_lower_case(hf_dir)
    return TokenizerFiles(source_dir=hf_dir, models=models, do_lower_case=lower, reason=reason)


def resolve_do_lower_case(hf_dir):
    """(do_lower_case, where the answer came from)."""
    config_path = Path(hf_dir) / "tokenizer_config.json"
    if config_path.is_file():
        config = read_json(config_path)
        value = config.get("do_lower_case") if isinstance(config, dict) else None
        if isinstance(value, bool):
            return value, "from tokenizer_config.json"
        if value is not None:
            raise UserError(f"{config_path}: do_lower_case must be true or false, got {value!r}")
    vocab_path = Path(hf_dir) / "vocab.txt"
    if vocab_path.is_file():
        cased = next((token for token in read_vocab(vocab_path) if is_cased_token(token)), None)
        if cased is None:
            return True, "no uppercase token in vocab.txt"
        return False, f"vocab.txt has uppercase tokens such as {cased!r}"
    # SentencePiece models (DeBERTa-v3 and the like) keep case unless told otherwise.
    return False, "SentencePiece model without a tokenizer_config.json"


def is_cased_token(token):
    return bool(_UPPER_ASCII.search(token)) and not _BRACKETED_SPECIAL.match(token)


def read_vocab(path):
    try:
        # Split on "\n" only, as vocabularies are written: str.splitlines would also
        # split inside tokens that contain Unicode line separators.
        return Path(path).read_text(encoding="utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise UserError(f"{path} is not UTF-8 text: {e.reason} at byte {e.start}") from None


# --- Writing HF folders (test fixtures) --------------------------------------
# A HuggingFace-style model folder in any of the weight formats the converter
# reads.


WEIGHT_FORMATS = ("safetensors", "bin-zip", "bin-legacy")


def write_hf_folder(folder, config, tensors, weights_format, vocab=None, tokenizer_config=None):
    """tensors: name -> tensor, written under those names as they are.
    weights_format: "safetensors" (model.safetensors), "bin-zip" (pytorch_model.bin
    in torch.save's zip format) or "bin-legacy" (the pre-1.6 pickle format, with
    nn.Parameter values, as the original bert-base-uncased was saved)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", config)
    if weights_format == "safetensors":
        write_safetensors(folder / "model.safetensors", tensors, metadata={"format": "pt"})
    elif weights_format == "bin-zip":
        torch.save(OrderedDict(tensors), folder / "pytorch_model.bin")
    elif weights_format == "bin-legacy":
        state = OrderedDict(
            (name, torch.nn.Parameter(t, requires_grad=False) if t.is_floating_point() else t)
            for name, t in tensors.items())
        torch.save(state, folder / "pytorch_model.bin", _use_new_zipfile_serialization=False)
    else:
        raise ValueError(f"weights_format must be one of {WEIGHT_FORMATS}, not {weights_format!r}")
    if vocab is not None:
        (folder / "vocab.txt").write_text("".join(token + "\n" for token in vocab), encoding="utf-8")
    if tokenizer_config is not None:
        write_json(folder / "tokenizer_config.json", tokenizer_config)
