"""Finds and loads the weights of a HuggingFace model folder.

HF folders hold `model.safetensors` or `pytorch_model.bin` (torch.save, either
the zip format of torch >= 1.6 or the older legacy pickle format), or a sharded
variant of either: `<name>.index.json` whose "weight_map" names the shard file
of every tensor.
"""
import pickle
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .errors import UserError, one_line
from .json_files import read_json
from .safetensors_io import read_safetensors

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

