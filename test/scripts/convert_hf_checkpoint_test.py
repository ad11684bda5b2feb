#!/usr/bin/env python3
"""Tests of scripts/convert_hf_checkpoint.py: both namings and every weight
format convert exactly, and every user mistake gives exit code 2, one error line
naming the problem, and no output folder (not even a half-written one)."""
import contextlib
import json
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from mini_runner import SOURCE_DIR, call_main, run_tests
import convert_hf_checkpoint
from mtbert_py.common import write_folder_atomically
from mtbert_py.hf_checkpoint import write_hf_folder
from mtbert_py.safetensors_io import read_safetensors, write_safetensors
from mtbert_py.tiny_models import bert_config, random_bert_weights, tiny_vocab, to_original_naming

VOCAB = tiny_vocab()
CONFIG = bert_config(len(VOCAB), hidden_size=8, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=11, layer_norm_eps=1e-12, type_vocab_size=2)
ERROR_PREFIX = "convert_hf_checkpoint: error: "


def make_source(folder, original_naming=False, weights_format="safetensors", dtype=torch.float32,
                with_pooler=True, config=CONFIG, vocab=VOCAB, tokenizer_config=None, seed=7):
    """Writes a HF folder; returns its weights under canonical names."""
    weights = {n: t.to(dtype) for n, t in random_bert_weights(config, seed, with_pooler).items()}
    tensors = to_original_naming(weights, config, seed + 1) if original_naming else weights
    write_hf_folder(folder, config, tensors, weights_format, vocab=vocab, tokenizer_config=tokenizer_config)
    return weights


def convert(hf, out, *extra):
    """Runs the converter in-process: (exit code, stdout, stderr)."""
    return call_main(convert_hf_checkpoint.main, ["--hf", hf, "--out", out, *extra])


def assert_converted(result):
    code, stdout, stderr = result
    assert code == 0 and stderr == "", f"conversion failed ({code}): {stderr}"
    return stdout


def assert_user_error(result, out, *fragments):
    """Exit code 2, exactly one stderr line containing every fragment, and no
    trace of an output folder next to where it would have been."""
    code, _, stderr = result
    assert code == 2, f"exit code {code}, stderr {stderr!r}"
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(ERROR_PREFIX), f"not one error line: {stderr!r}"
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    assert_no_partial_output(out)
    return lines[0]


def assert_no_partial_output(out):
    leftovers = [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    assert not leftovers, f"temporary folders left behind: {leftovers}"


def read_model(out):
    tensors, metadata = read_safetensors(out / "model.safetensors")
    config = json.loads((out / "config.json").read_text())
    return tensors, metadata, config


def expected_names(with_pooler=True):
    return list(random_bert_weights(CONFIG, 0, with_pooler))


# The masked-LM head that the original naming carries, as the converter keeps it.
MLM_HEAD = {"cls.predictions.transform.dense.weight": "cls.predictions.transform.dense.weight",
            "cls.predictions.transform.dense.bias": "cls.predictions.transform.dense.bias",
            "cls.predictions.transform.LayerNorm.weight": "cls.predictions.transform.LayerNorm.gamma",
            "cls.predictions.transform.LayerNorm.bias": "cls.predictions.transform.LayerNorm.beta",
            "cls.predictions.bias": "cls.predictions.bias"}


@contextlib.contextmanager
def workdir():
    with tempfile.TemporaryDirectory(prefix="convert_test_") as tmp:
        yield Path(tmp)


def test_every_naming_and_format_converts_exactly():
    cases = [(original, fmt) for original in (True, False) for fmt in ("bin-legacy", "bin-zip")]
    cases.append((False, "safetensors"))
    for original, fmt in cases:
        with workdir() as tmp:
            weights = make_source(tmp / "hf", original_naming=original, weights_format=fmt)
            assert_converted(convert(tmp / "hf", tmp / "out"))
            tensors, _, _ = read_model(tmp / "out")
            head = list(MLM_HEAD) if original else []
            assert list(tensors) == expected_names() + head, f"{original} {fmt}: names or order differ"
            source = to_original_naming(weights, CONFIG, 8) if original else {}
            for name, tensor in tensors.items():
                assert tensor.dtype == torch.float32
                expected = source[MLM_HEAD[name]] if name in MLM_HEAD else weights[name]
                assert torch.equal(tensor, expected), f"{original} {fmt}: {name} differs"


def test_original_naming_lists_skipped_heads_and_buffer():
    with workdir() as tmp:
        make_source(tmp / "hf", original_naming=True, weights_format="bin-legacy")
        stdout = assert_converted(convert(tmp / "hf", tmp / "out"))
        skipped = [line.split()[1] for line in stdout.splitlines() if line.startswith("  skipped ")]
        assert "cls.predictions.decoder.weight" in skipped and "cls.seq_relationship.bias" in skipped
        assert "bert.embeddings.position_ids" in skipped
        assert len(skipped) == 5, skipped  # decoder weight and bias (tied), NSP weight and bias, the buffer
        assert f"renamed {len(expected_names()) + 2} tensors" in stdout  # + the head's LayerNorm gamma/beta


def test_an_untied_decoder_is_refused():
    with workdir() as tmp:
        weights = random_bert_weights(CONFIG, 7)
        tensors = to_original_naming(weights, CONFIG, 8)
        tensors["cls.predictions.decoder.weight"] = tensors["cls.predictions.decoder.weight"] + 1
        write_hf_folder(tmp / "hf", CONFIG, tensors, "safetensors", vocab=VOCAB)
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out", "cls.predictions.decoder.weight differs")


def test_output_config_keeps_hf_keys_and_adds_format():
    with workdir() as tmp:
        config = {k: v for k, v in CONFIG.items() if k != "layer_norm_eps"}
        make_source(tmp / "hf", config=config)
        stdout = assert_converted(convert(tmp / "hf", tmp / "out"))
        _, metadata, written = read_model(tmp / "out")
        assert written == {**CONFIG, "mtbert_format": 1}, written
        assert "added HF defaults for layer_norm_eps" in stdout
        assert metadata["source"] == "model.safetensors" and "convert_hf_checkpoint" in metadata["converter"]


def test_safetensors_layout_is_aligned_and_contiguous():
    with workdir() as tmp:
        make_source(tmp / "hf")
        assert_converted(convert(tmp / "hf", tmp / "out"))
        blob = (tmp / "out" / "model.safetensors").read_bytes()
        (n,) = struct.unpack_from("<Q", blob)
        assert n % 8 == 0
        header = json.loads(blob[8:8 + n])
        header.pop("__metadata__")
        offset = 0
        for entry in header.values():
            assert entry["data_offsets"][0] == offset
            offset = entry["data_offsets"][1]
        assert 8 + n + offset == len(blob)


def test_half_precision_sources_upcast_by_default_and_kept_on_request():
    for dtype, name in ((torch.bfloat16, "BF16"), (torch.float16, "F16")):
        with workdir() as tmp:
            weights = make_source(tmp / "hf", dtype=dtype)
            assert_converted(convert(tmp / "hf", tmp / "f32"))
            assert_converted(convert(tmp / "hf", tmp / "kept", "--dtype", "keep"))
            upcast, _, _ = read_model(tmp / "f32")
            kept, _, _ = read_model(tmp / "kept")
            for key, tensor in weights.items():
                assert upcast[key].dtype == torch.float32
                assert torch.equal(upcast[key], tensor.to(torch.float32)), f"{name} {key}"
                assert kept[key].dtype == dtype
                assert torch.equal(kept[key].view(torch.int16), tensor.view(torch.int16)), f"{name} {key} bits"
            header_len = struct.unpack_from("<Q", (tmp / "kept" / "model.safetensors").read_bytes())[0]
            assert f'"dtype":"{name}"' in (tmp / "kept" / "model.safetensors").read_bytes()[8:8 + header_len].decode()


def test_sharded_checkpoints_convert():
    for fmt, index_name in (("safetensors", "model.safetensors.index.json"),
                            ("bin-zip", "pytorch_model.bin.index.json")):
        with workdir() as tmp:
            hf = tmp / "hf"
            weights = make_source(hf, original_naming=True, weights_format="bin-zip")
            full = torch.load(hf / "pytorch_model.bin")
            (hf / "pytorch_model.bin").unlink()
            names = list(full)
            shards = {f"part-1.{fmt}": names[:10], f"part-2.{fmt}": names[10:]}
            for shard, shard_names in shards.items():
                part = {n: full[n] for n in shard_names}
                if fmt == "safetensors":
                    write_safetensors(hf / shard, part)
                else:
                    torch.save(part, hf / shard)
            weight_map = {n: shard for shard, shard_names in shards.items() for n in shard_names}
            (hf / index_name).write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
            stdout = assert_converted(convert(hf, tmp / "out"))
            assert "sharded" in stdout
            tensors, _, _ = read_model(tmp / "out")
            assert all(torch.equal(tensors[n], weights[n]) for n in weights)
            assert len(tensors) == len(weights) + len(MLM_HEAD)


def test_source_without_pooler_gives_model_without_pooler():
    with workdir() as tmp:
        make_source(tmp / "hf", with_pooler=False)
        stdout = assert_converted(convert(tmp / "hf", tmp / "out"))
        tensors, _, _ = read_model(tmp / "out")
        assert list(tensors) == expected_names(with_pooler=False)
        assert "no pooler" in stdout


def test_do_lower_case_is_resolved():
    cased_vocab = VOCAB[:-1] + ["Hello"]
    cases = (
        (VOCAB, None, True),                              # only bracketed specials are uppercase
        (cased_vocab, None, False),
        (cased_vocab, {"do_lower_case": True}, True),     # an explicit setting wins
        (VOCAB, {"model_max_length": 512}, True),         # a config without the key: vocabulary decides
    )
    for vocab, tokenizer_config, expected in cases:
        with workdir() as tmp:
            make_source(tmp / "hf", vocab=vocab, tokenizer_config=tokenizer_config)
            assert_converted(convert(tmp / "hf", tmp / "out"))
            written = json.loads((tmp / "out" / "tokenizer_config.json").read_text())
            assert written == {"do_lower_case": expected}, (tokenizer_config, written)
            assert (tmp / "out" / "vocab.txt").read_bytes() == (tmp / "hf" / "vocab.txt").read_bytes()


def test_missing_folder_config_and_weights():
    with workdir() as tmp:
        assert_user_error(convert(tmp / "nowhere", tmp / "out"), tmp / "out", "nowhere", "not a folder")
        make_source(tmp / "hf")
        (tmp / "hf" / "config.json").unlink()
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out", "no config.json")
    with workdir() as tmp:
        make_source(tmp / "hf")
        (tmp / "hf" / "model.safetensors").unlink()
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out", "no weights", "pytorch_model.bin")


def test_bad_config_json_and_unknown_model_type():
    with workdir() as tmp:
        make_source(tmp / "hf")
        (tmp / "hf" / "config.json").write_text('{"model_type": "bert",\n "hidden_size": }')
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out", "config.json", "not valid JSON", "line 2")
        (tmp / "hf" / "config.json").write_text(json.dumps({**CONFIG, "model_type": "gpt2"}))
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out", "unknown model_type 'gpt2'")


def test_truncated_and_corrupt_safetensors():
    with workdir() as tmp:
        make_source(tmp / "hf")
        path = tmp / "hf" / "model.safetensors"
        blob = path.read_bytes()
        path.write_bytes(blob[:-4])
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out", "truncated", "pooler.dense.bias")
        path.write_bytes(blob[:50])
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out", "truncated or corrupt")
        path.write_bytes(struct.pack("<Q", 6) + b"{nope}" + blob[14:])
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out", "corrupt safetensors header")


def test_corrupt_pytorch_model_bin():
    with workdir() as tmp:
        make_source(tmp / "hf", weights_format="bin-legacy")
        path = tmp / "hf" / "pytorch_model.bin"
        path.write_bytes(path.read_bytes()[:300])
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out", "cannot read", "pytorch_model.bin")


def test_wrong_shape_names_tensor_and_both_shapes():
    with workdir() as tmp:
        make_source(tmp / "hf", original_naming=True, weights_format="bin-zip")
        state = torch.load(tmp / "hf" / "pytorch_model.bin")
        state["bert.encoder.layer.1.attention.self.key.weight"] = torch.zeros(8, 7)
        torch.save(state, tmp / "hf" / "pytorch_model.bin")
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out",
                          "'encoder.layer.1.attention.self.key.weight'",
                          "'bert.encoder.layer.1.attention.self.key.weight'", "[8, 7]", "[8, 8]")


def test_unexpected_and_missing_tensors():
    with workdir() as tmp:
        weights = make_source(tmp / "hf")
        extra = {**weights, "encoder.layer.2.output.dense.bias": torch.zeros(8)}
        write_safetensors(tmp / "hf" / "model.safetensors", extra)
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out",
                          "unexpected tensor 'encoder.layer.2.output.dense.bias'")
        del weights["encoder.layer.0.output.LayerNorm.bias"]
        write_safetensors(tmp / "hf" / "model.safetensors", weights)
        assert_user_error(convert(tmp / "hf", tmp / "out"), tmp / "out",
                          "missing tensor 'encoder.layer.0.output.LayerNorm.bias'", "[8]")


def test_existing_output_needs_force_and_force_replaces():
    with workdir() as tmp:
        make_source(tmp / "hf")
        out = tmp / "out"
        out.mkdir()
        (out / "keep.txt").write_text("precious")
        code, _, stderr = convert(tmp / "hf", out)
        assert code == 2 and "already exists" in stderr and "--force" in stderr
        assert (out / "keep.txt").read_text() == "precious"
        assert_converted(convert(tmp / "hf", out, "--force"))
        assert not (out / "keep.txt").exists() and (out / "model.safetensors").is_file()
        assert_no_partial_output(out)


def test_failed_force_leaves_existing_output_alone():
    with workdir() as tmp:
        make_source(tmp / "hf")
        assert_converted(convert(tmp / "hf", tmp / "out"))
        before = (tmp / "out" / "model.safetensors").read_bytes()
        (tmp / "hf" / "vocab.txt").write_bytes(b"\xff\xfe not utf-8")
        assert_user_error(convert(tmp / "hf", tmp / "out", "--force"), tmp / "out", "vocab.txt", "UTF-8")
        assert (tmp / "out" / "model.safetensors").read_bytes() == before


def test_interrupted_write_leaves_old_folder_and_no_partial_one():
    with workdir() as tmp:
        out = tmp / "out"
        out.mkdir()
        (out / "old.txt").write_text("old")

        def fill(folder):
            (folder / "model.safetensors").write_bytes(b"half")
            raise KeyboardInterrupt

        try:
            write_folder_atomically(out, fill, force=True)
        except KeyboardInterrupt:
            pass
        else:
            raise AssertionError("the interruption was swallowed")
        assert [p.name for p in out.iterdir()] == ["old.txt"]
        assert_no_partial_output(out)


def test_command_line_errors_are_one_line():
    with workdir() as tmp:
        result = convert(tmp, tmp / "out", "--dtype", "float8")
        assert_user_error(result, tmp / "out", "--dtype")


def test_cli_process_exit_codes():
    """The real executable: success prints a summary; a mistake prints one line, no traceback."""
    script = SOURCE_DIR / "scripts" / "convert_hf_checkpoint.py"
    with workdir() as tmp:
        make_source(tmp / "hf", original_naming=True, weights_format="bin-legacy")
        ok = subprocess.run([sys.executable, str(script), "--hf", str(tmp / "hf"), "--out", str(tmp / "out")],
                            capture_output=True, text=True)
        assert ok.returncode == 0 and "skipped cls.seq_relationship.bias" in ok.stdout, ok.stderr
        again = subprocess.run([sys.executable, str(script), "--hf", str(tmp / "hf"), "--out", str(tmp / "out")],
                               capture_output=True, text=True)
        assert again.returncode == 2 and len(again.stderr.splitlines()) == 1, again.stderr
        assert again.stderr.startswith(ERROR_PREFIX) and "Traceback" not in again.stderr


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
