"""Writes a HuggingFace-style model folder, in any of the weight formats the
converter reads, for test fixtures."""
from collections import OrderedDict
from pathlib import Path

import torch

from .json_files import write_json
from .safetensors_io import write_safetensors

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
