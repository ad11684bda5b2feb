#!/usr/bin/env python3
"""Tests of scripts/mtbert_py/safetensors_io.py against bytes written out by
hand, so that reader and writer cannot share a misreading of the format."""
import json
import struct
import sys
import tempfile
from pathlib import Path

import torch

from mini_runner import run_tests
from mtbert_py.common import UserError
from mtbert_py.safetensors_io import read_safetensors, write_safetensors

# Little-endian bit patterns: 1.0 and -2.0 as float32 are 0x3F800000 and
# 0xC0000000; bfloat16 keeps their upper halves, float16 spells them 0x3C00, 0xC000.
HAND_MADE = {
    "f32": ("F32", [2], struct.pack("<2f", 1.0, -2.0), torch.tensor([1.0, -2.0])),
    "bf16": ("BF16", [2], bytes.fromhex("803f00c0"), torch.tensor([1.0, -2.0], dtype=torch.bfloat16)),
    "f16": ("F16", [1, 2], bytes.fromhex("003c00c0"), torch.tensor([[1.0, -2.0]], dtype=torch.float16)),
    "f64": ("F64", [], struct.pack("<d", 0.1), torch.tensor(0.1, dtype=torch.float64)),
    "i64": ("I64", [3], struct.pack("<3q", -1, 0, 2 ** 40), torch.tensor([-1, 0, 2 ** 40])),
    "empty": ("F32", [0, 4], b"", torch.empty(0, 4)),
}


def hand_made_file(path):
    header, data = {"__metadata__": {"format": "pt"}}, b""
    for name, (dtype, shape, raw, _) in HAND_MADE.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + data)


def test_reads_hand_made_file():
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.safetensors"
        hand_made_file(path)
        tensors, metadata = read_safetensors(path)
    assert metadata == {"format": "pt"} and list(tensors) == list(HAND_MADE)
    for name, (_, _, _, expected) in HAND_MADE.items():
        got = tensors[name]
        assert got.dtype == expected.dtype and got.shape == expected.shape and torch.equal(got, expected), name


def test_writes_the_hand_made_bytes():
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.safetensors"
        write_safetensors(path, {name: t for name, (_, _, _, t) in HAND_MADE.items()}, {"format": "pt"})
        blob = path.read_bytes()
    (n,) = struct.unpack_from("<Q", blob)
    assert n % 8 == 0 and blob[8 + n - 1:8 + n] in (b"}", b" ")
    header = json.loads(blob[8:8 + n])
    assert header.pop("__metadata__") == {"format": "pt"}
    data = blob[8 + n:]
    for name, (dtype, shape, raw, _) in HAND_MADE.items():
        entry = header[name]
        assert entry["dtype"] == dtype and entry["shape"] == shape, name
        begin, end = entry["data_offsets"]
        assert data[begin:end] == raw, name
    assert len(data) == sum(len(raw) for _, _, raw, _ in HAND_MADE.values())


def test_rejects_malformed_headers():
    cases = {
        "short file": b"\x01\x02",
        "header longer than file": struct.pack("<Q", 1000) + b"{}",
        "not JSON": struct.pack("<Q", 4) + b"{x:1",
        "unknown dtype": _file({"t": {"dtype": "F8", "shape": [1], "data_offsets": [0, 1]}}, b"\0"),
        "size mismatch": _file({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 8),
        "past the end": _file({"t": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"\0" * 4),
        "overlap": _file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                          "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"\0" * 8),
    }
    with tempfile.TemporaryDirectory() as tmp:
        for why, blob in cases.items():
            path = Path(tmp) / "bad.safetensors"
            path.write_bytes(blob)
            try:
                read_safetensors(path)
            except UserError as e:
                assert str(path) in str(e), why
            else:
                raise AssertionError(f"{why}: accepted")


def _file(header, data):
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
