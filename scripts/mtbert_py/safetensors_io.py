"""Reads and writes the safetensors format without the `safetensors` package.

Layout: an 8-byte little-endian header length n, n bytes of UTF-8 JSON mapping
each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
relative to the data section that follows the header) plus an optional
"__metadata__" map of strings, then the raw little-endian tensor bytes.
"""
import json
import os
import struct
from pathlib import Path

import numpy as np
import torch

from .common import UserError, one_line

# safetensors dtype name -> (numpy little-endian dtype of the stored bytes, torch dtype).
# numpy has no bfloat16: BF16 bits are read as int16 and viewed as bfloat16 in torch.
DTYPES = {
    "F64": ("<f8", torch.float64),
    "F32": ("<f4", torch.float32),
    "F16": ("<f2", torch.float16),
    "BF16": ("<i2", torch.bfloat16),
    "I64": ("<i8", torch.int64),
    "I32": ("<i4", torch.int32),
    "I16": ("<i2", torch.int16),
    "I8": ("i1", torch.int8),
    "U8": ("u1", torch.uint8),
    "BOOL": ("?", torch.bool),
}
_NAME_OF_TORCH_DTYPE = {torch_dtype: name for name, (_, torch_dtype) in DTYPES.items()}

# A header is a few hundred bytes per tensor; anything near this size is a
# corrupt length field, not a real header.
MAX_HEADER_BYTES = 100 * 1024 * 1024


def read_safetensors(path):
    """Returns ({name: tensor}, metadata) in the file's header order.
    Raises UserError naming the file for any malformed or truncated content."""
    path = Path(path)
    try:
        blob = path.read_bytes()
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    header, data_start = _parse_header(path, blob)
    metadata = header.pop("__metadata__", None) or {}
    data_len = len(blob) - data_start
    tensors = {}
    spans = []
    for name, entry in header.items():
        dtype_name, shape, begin, end = _check_entry(path, name, entry, data_len)
        tensors[name] = _tensor_from_bytes(blob, data_start + begin, dtype_name, shape)
        spans.append((begin, end, name))
    _check_no_overlap(path, spans)
    return tensors, metadata


def write_safetensors(path, tensors, metadata=None):
    """Writes {name: tensor} in the given order (through a temporary file, so a
    crash never leaves a partial file at `path`). Tensors are written one at a
    time: a model is never held twice in memory."""
    path = Path(path)
    header = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    offset = 0
    for name, tensor in tensors.items():
        dtype_name = _NAME_OF_TORCH_DTYPE.get(tensor.dtype)
        if dtype_name is None:
            raise ValueError(f"safetensors has no dtype for {name}'s {tensor.dtype}")
        size = tensor.numel() * tensor.element_size()
        header[name] = {"dtype": dtype_name, "shape": list(tensor.shape), "data_offsets": [offset, offset + size]}
        offset += size
    header_bytes = json.dumps(header, separators=(",", ":")).encode("utf-8")
    # Padding with spaces keeps the data section 8-byte aligned (valid JSON still).
    header_bytes += b" " * (-len(header_bytes) % 8)
    tmp = path.with_name(path.name + ".partial")
    try:
        with open(tmp, "wb") as f:
            f.write(struct.pack("<Q", len(header_bytes)))
            f.write(header_bytes)
            for name, tensor in tensors.items():
                f.write(_tensor_bytes(tensor, header[name]["dtype"]))
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _parse_header(path, blob):
    if len(blob) < 8:
        raise UserError(f"{path} is not a safetensors file: {len(blob)} bytes, "
                        "shorter than the 8-byte header length")
    (n,) = struct.unpack_from("<Q", blob, 0)
    if n > MAX_HEADER_BYTES or 8 + n > len(blob):
        raise UserError(f"{path} is truncated or corrupt: its header claims {n} bytes "
                        f"but the file has {len(blob) - 8} after the length field")
    try:
        header = json.loads(blob[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UserError(f"{path} has a corrupt safetensors header: {one_line(e)}") from None
    if not isinstance(header, dict):
        raise UserError(f"{path} has a corrupt safetensors header: not a JSON object")
    metadata = header.get("__metadata__")
    if metadata is not None and not (
            isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())):
        raise UserError(f"{path}: __metadata__ must map names to strings")
    return header, 8 + n


def _check_entry(path, name, entry, data_len):
    def bad(why):
        return UserError(f"{path}: tensor '{name}' has {why}")

    if not isinstance(entry, dict):
        raise bad("a header entry that is not a JSON object")
    dtype_name = entry.get("dtype")
    if dtype_name not in DTYPES:
        raise bad(f"unsupported dtype {dtype_name!r} (supported: {', '.join(DTYPES)})")
    shape = entry.get("shape")
    if not isinstance(shape, list) or not all(_is_count(d) for d in shape):
        raise bad(f"an invalid shape {shape!r}")
    offsets = entry.get("data_offsets")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(_is_count(o) for o in offsets)
            and offsets[0] <= offsets[1]):
        raise bad(f"invalid data_offsets {offsets!r}")
    begin, end = offsets
    expected = int(np.prod(shape, dtype=np.int64)) * np.dtype(DTYPES[dtype_name][0]).itemsize
    if end - begin != expected:
        raise bad(f"{end - begin} bytes of data but shape {shape} of {dtype_name} needs {expected}")
    if end > data_len:
        raise UserError(f"{path} is truncated: tensor '{name}' ends at byte {end} of the data "
                        f"section, which has only {data_len} bytes")
    return dtype_name, shape, begin, end


def _is_count(value):
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_no_overlap(path, spans):
    spans.sort()
    for (_, prev_end, prev_name), (begin, _, name) in zip(spans, spans[1:]):
        if begin < prev_end:
            raise UserError(f"{path} is corrupt: the data of tensors '{prev_name}' and '{name}' overlap")


def _tensor_from_bytes(blob, start, dtype_name, shape):
    np_dtype, torch_dtype = DTYPES[dtype_name]
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return torch.empty(shape, dtype=torch_dtype)
    stored = np.frombuffer(blob, dtype=np_dtype, count=count, offset=start)
    # A native-endian, writable copy: torch refuses read-only or byte-swapped arrays.
    array = stored.astype(stored.dtype.newbyteorder("="), copy=True)
    tensor = torch.from_numpy(array).reshape(shape)
    if torch_dtype == torch.bfloat16:
        tensor = tensor.view(torch.bfloat16)
    return tensor


def _tensor_bytes(tensor, dtype_name):
    tensor = tensor.detach().cpu().contiguous()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.view(torch.int16)
    array = tensor.numpy()
    return array.astype(np.dtype(DTYPES[dtype_name][0]), copy=False).tobytes()
