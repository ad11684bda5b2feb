"""Reads what `mtbert attention` writes (src/cli/attention_command.cpp):

    OUT.pt            torch.save dict: attentions float32 [layers, heads, N, N]
                      (row i: how query token i spreads over the keys), input_ids [N]
    OUT.tokens.json   {"tokens": [N], "layers": ["layer.0", ..., "emd.0"], "heads": H,
                       "model": DIR, "text": ..., "text2": ... or null}

and which layers and heads a figure shows: a grid spec `LAYERS:HEADS`, each
side `all` or a comma list of indices, ranges `a-b` and (layers) names such as
`emd.0`.
"""
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from .errors import UserError, one_line
from .json_files import read_json


@dataclass
class AttentionMaps:
    path: Path
    attentions: np.ndarray  # [layers, heads, N, N]
    tokens: list
    layers: list            # layer names, one per attentions[i]
    model: str
    text: str
    text2: object           # str or None


@dataclass(frozen=True)
class Grid:
    spec: str
    layers: tuple  # indices into AttentionMaps.layers: the figure's rows
    heads: tuple   # head indices: its columns

    @property
    def tag(self):
        """The spec as a file-name part: `0-3:all` -> `L0-3_Hall`."""
        layers, heads = self.spec.split(":")
        return re.sub(r"[^A-Za-z0-9._+-]", "-", f"L{layers}_H{heads}".replace(",", "+"))


def tokens_path(path):
    """OUT.pt -> OUT.tokens.json, as mtbert attention names it."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix == ".pt" else path
    return stem.with_name(stem.name + ".tokens.json")


def read_attention_maps(path):
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path} does not exist")
    try:
        # mtbert writes it with torch::pickle_save, whose type tags the weights_only unpickler of
        # torch 1.13 rejects; the file is the user's own output.
        data = torch.load(path, map_location="cpu")
    except Exception as e:  # torch raises many types for a file that is not its own
        raise UserError(f"{path}: not a torch.save file of tensors: {one_line(e)}") from None
    attentions = data.get("attentions") if isinstance(data, dict) else None
    if not isinstance(attentions, torch.Tensor) or attentions.dim() != 4 or \
            attentions.shape[2] != attentions.shape[3] or not attentions.is_floating_point():
        raise UserError(f"{path}: no `attentions` float tensor [layers, heads, N, N] (written by mtbert attention?)")
    sidecar_path = tokens_path(path)
    sidecar = read_json(sidecar_path)
    layers_n, heads_n, n = attentions.shape[:3]
    if not isinstance(sidecar, dict):
        raise UserError(f"{sidecar_path}: not a JSON object")
    tokens, layers = sidecar.get("tokens"), sidecar.get("layers")
    if not isinstance(tokens, list) or len(tokens) != n or not all(isinstance(t, str) for t in tokens):
        raise UserError(f"{sidecar_path}: `tokens` is not a list of {n} strings, one per token of {path}")
    if not isinstance(layers, list) or len(layers) != layers_n or sidecar.get("heads") != heads_n:
        raise UserError(f"{sidecar_path}: `layers` and `heads` do not match the {layers_n} x {heads_n} maps of {path}")
    return AttentionMaps(path, attentions.float().numpy(), tokens, [str(x) for x in layers],
                         str(sidecar.get("model", "")), str(sidecar.get("text", "")), sidecar.get("text2"))


def _indices(part, count, names, what, spec, path):
    if part == "all":
        return tuple(range(count))
    result = []
    for item in part.split(","):
        item = item.strip()
        if item in names:
            result.append(names.index(item))
            continue
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        if not match:
            raise UserError(f"--grid {spec!r}: {item!r} is not a {what} index, range a-b" +
                            (f" or name ({', '.join(names)})" if names else ""))
        first, last = int(match[1]), int(match[2] or match[1])
        if first > last or last >= count:
            raise UserError(f"--grid {spec!r}: {what} {item} is outside 0..{count - 1}, the {what}s of {path}")
        result += range(first, last + 1)
    return tuple(result)


def parse_grid(spec, maps):
    """The Grid of `spec` over `maps`; UserError when it does not fit them."""
    parts = [part.strip() for part in spec.split(":")]
    if len(parts) != 2 or not all(parts):
        raise UserError(f"--grid {spec!r} is not LAYERS:HEADS (e.g. 11:all, 0-3:0,5, emd.0:all)")
    layers, heads = parts
    return Grid(f"{layers}:{heads}",
                _indices(layers, len(maps.layers), maps.layers, "layer", spec, maps.path),
                _indices(heads, maps.attentions.shape[1], [], "head", spec, maps.path))


def default_grids(maps):
    """One figure per layer, with all its heads."""
    return [parse_grid(f"{i}:all", maps) for i in range(len(maps.layers))]
