#!/usr/bin/env python3
"""`mtbert bench`, its Python peer (bench/peer/peer_bench.py) and the runner
(bench/compare.py) on tiny shapes: every case prints one JSON line with the
keys BENCHMARKS.md and compare.py read, the two implementations print the
same keys and count the same sentences and tokens, and bad flags are one line
with exit code 2. Timings are never asserted."""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mini_runner import SOURCE_DIR, run_tests

MTBERT = os.environ.get("MTBERT_BINARY", str(SOURCE_DIR / "build" / "mtbert"))
PYTHON = os.environ.get("MTBERT_PYTHON", "/usr/bin/python3")
PEER = SOURCE_DIR / "bench" / "peer" / "peer_bench.py"
WORK = Path(tempfile.mkdtemp(prefix="mtbert-bench-test-"))
TINY_SHAPE = ["--layers", "1", "--hidden", "32", "--heads", "2", "--intermediate", "64", "--vocab-size", "1200",
              "--batch", "2", "--threads", "1"]
TINY = TINY_SHAPE + ["--steps", "1", "--warmup", "0"]

COMMON_KEYS = {"case", "impl", "device", "threads", "torch_version", "omp_wait_policy"}
MODEL_KEYS = COMMON_KEYS | {"precision", "model", "layers", "hidden", "heads", "intermediate", "vocab", "batch",
                            "length", "steps", "warmup", "median_ms", "min_ms", "median_cpu_ms", "examples_per_s",
                            "tokens_per_s", "positions"}
EXPECTED_KEYS = {
    "encoder_forward": MODEL_KEYS,
    "train_step": MODEL_KEYS | {"tasks", "examples_per_step", "join_tasks"},
    "tokenizer": COMMON_KEYS | {"data", "sentences", "tokens", "steps", "warmup", "median_ms", "min_ms",
                                "sentences_per_s", "tokens_per_s"},
}


def run(command):
    return subprocess.run([str(c) for c in command], capture_output=True, text=True)


def lines_of(command):
    done = run(command)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def mtbert_bench(*args):
    return lines_of([MTBERT, "bench", *args])


def peer_bench(*args):
    return lines_of([PYTHON, PEER, *args])


def tiny_sst_folder():
    """ids-sst-train.csv (the CS224N layout) and a vocab.txt covering most of it."""
    folder = WORK / "data"
    (folder / "bert-base-uncased").mkdir(parents=True, exist_ok=True)
    rows = ["a gripping film .", "Dull , dull , dull !", "unbelievably well-made", "the end"]
    with open(folder / "ids-sst-train.csv", "w", encoding="utf-8") as f:
        f.write("\tid\tsentence\tsentiment\n")
        for i, text in enumerate(rows):
            f.write(f"{i}\tid{i}\t{text}\t{i % 5}\n")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "grip", "##ping", "film", ".", "dull", ",", "!",
             "un", "##believ", "##ably", "well", "-", "made", "the", "end"]
    (folder / "bert-base-uncased" / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return folder


def test_train_step_prints_one_line_with_the_expected_keys():
    [line] = mtbert_bench("--case", "train_step", "--length", "8", *TINY)
    assert set(line) == EXPECTED_KEYS["train_step"], set(line) ^ EXPECTED_KEYS["train_step"]
    assert line["case"] == "train_step" and line["impl"] == "mtbert" and line["model"] == "custom"
    assert (line["layers"], line["hidden"], line["heads"], line["intermediate"]) == (1, 32, 2, 64)
    assert line["tasks"] == 3 and line["examples_per_step"] == 6 and line["length"] == 8
    assert line["threads"] == 1 and line["device"] == "cpu"
    assert line["omp_wait_policy"] == os.environ.get("OMP_WAIT_POLICY", "PASSIVE")
    assert line["median_ms"] > 0 and line["examples_per_s"] > 0


def test_positions_runs_a_deberta_style_encoder():
    for positions in ("c2p|p2c", "c2p|p2c|p2p"):
        [line] = mtbert_bench("--case", "train_step", "--length", "8", "--positions", positions, *TINY)
        assert line["positions"] == positions and line["median_ms"] > 0
    done = run([MTBERT, "bench", "--case", "train_step", "--positions", "c2p|p2x", *TINY])
    assert done.returncode == 2 and "\"p2x\" is not a position term" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""


def test_one_line_per_length_and_preset_values():
    lines = mtbert_bench("--case", "encoder_forward", "--preset", "small", "--layers", "1", "--length", "8",
                         "--length", "12", "--batch", "2", "--steps", "1", "--warmup", "0", "--vocab-size", "1200")
    assert [line["length"] for line in lines] == [8, 12]
    for line in lines:
        assert set(line) == EXPECTED_KEYS["encoder_forward"]
        # --layers overrides the preset; the rest is the small preset's
        assert (line["layers"], line["hidden"], line["heads"], line["intermediate"]) == (1, 256, 4, 1024)


def test_the_peer_prints_the_same_keys():
    for case in ("train_step", "encoder_forward"):
        [ours] = mtbert_bench("--case", case, "--length", "8", *TINY)
        [theirs] = peer_bench("--case", case, "--length", "8", *TINY)
        assert set(theirs) == set(ours), set(theirs) ^ set(ours)
        assert theirs["impl"] == "pytorch-eager"
        for key in ("precision", "model", "layers", "hidden", "heads", "intermediate", "vocab", "batch", "length",
                    "steps", "threads"):
            assert theirs[key] == ours[key], key
        if case == "train_step":
            assert theirs["examples_per_step"] == ours["examples_per_step"] == 6


def test_profile_lists_operators_by_self_time_in_both():
    products = {}
    for case in ("train_step", "encoder_forward"):
        [ours] = mtbert_bench("--case", case, "--length", "8", *TINY, "--profile")
        [theirs] = peer_bench("--case", case, "--length", "8", *TINY, "--profile")
        for line in (ours, theirs):
            profile = line["profile"]
            ops = {op["op"]: op for op in profile["top"]}
            assert "aten::mm" in ops or "aten::addmm" in ops, ops.keys()
            times = [op["self_ms"] for op in profile["top"]]
            assert times == sorted(times, reverse=True), times
            assert 0 < sum(op["share"] for op in profile["top"]) <= 1.0001
            assert all(op["calls"] > 0 for op in profile["top"])
            assert profile["total_calls"] >= sum(op["calls"] for op in profile["top"])
            assert all(profile["calls"][op["op"]] == op["calls"] for op in profile["top"])
            assert abs(sum(profile["calls"].values()) - profile["total_calls"]) <= 0.1 * len(profile["calls"])
        calls = ours["profile"]["calls"]
        products[case] = sum(calls.get(name, 0) for name in ("aten::mm", "aten::addmm"))
        # Without --profile, no profile key.
        [plain] = mtbert_bench("--case", case, "--length", "8", *TINY)
        assert "profile" not in plain
    # The step's backward pass is recorded too: its one forward pass over the
    # three tasks' batches, and two more products per product backward. (Call
    # counts of every operator, not of those that lead by self time, which
    # move with the machine's load.)
    assert products["train_step"] >= 3 * products["encoder_forward"], products


def test_bf16_autocast_runs_in_both():
    for bench in (mtbert_bench, peer_bench):
        [line] = bench("--case", "train_step", "--length", "8", "--precision", "bf16", *TINY)
        assert line["precision"] == "bf16" and line["examples_per_s"] > 0


def test_tokenizer_counts_agree_with_the_peer():
    data = tiny_sst_folder()
    [ours] = mtbert_bench("--case", "tokenizer", "--data", data, "--steps", "2", "--warmup", "0")
    [theirs] = peer_bench("--case", "tokenizer", "--data", data, "--steps", "2", "--warmup", "0")
    assert set(ours) == set(theirs) == EXPECTED_KEYS["tokenizer"]
    assert ours["sentences"] == theirs["sentences"] == 4
    # [CLS] a grip ##ping film . [SEP] | [CLS] dull , dull , dull ! [SEP] |
    # [CLS] un ##believ ##ably well - made [SEP] | [CLS] the end [SEP]
    assert ours["tokens"] == theirs["tokens"] == 7 + 8 + 8 + 4


def test_tokenizer_without_data_is_a_skipped_line():
    empty = WORK / "empty"
    empty.mkdir(exist_ok=True)
    for lines in (mtbert_bench("--case", "tokenizer", "--data", empty),
                  peer_bench("--case", "tokenizer", "--data", empty)):
        [line] = lines
        assert line["case"] == "tokenizer" and "ids-sst-train.csv" in line["skipped"]


def test_bad_flags_are_one_line_and_exit_code_2():
    for args in (["--hidden", "30", "--heads", "4"], ["--length", "600"], ["--case", "nonsense"],
                 ["--device", "tpu"], ["--steps", "0"], ["--device", "cpu", "--tf32"], ["--lr", "nan"],
                 ["--weight-decay", "inf"], ["--data", str(WORK / "no-such-folder")]):
        case = [] if "--case" in args else ["--case", "encoder_forward"]
        done = run([MTBERT, "bench", *case, *args])
        assert done.returncode == 2, (args, done.returncode, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and "error" in done.stderr, (args, done.stderr)
        assert done.stdout == "", args


def test_paced_runs_one_repetition_per_input_line():
    for command in ([MTBERT, "bench"], [PYTHON, PEER]):
        done = subprocess.run([str(c) for c in command] + ["--case", "train_step", "--length", "8", *TINY_SHAPE,
                                                             "--steps", "2", "--warmup", "1", "--paced"],
                              input="go\ngo\ngo\n", capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        assert [line.get("rep") for line in lines[:3]] == [0, 1, 2] and all(line["ms"] > 0 for line in lines[:3])
        assert lines[3]["case"] == "train_step" and lines[3]["steps"] == 2 and len(lines) == 4
        # one unit only: its repetitions are what gets paired
        done = run([*command, "--case", "train_step", "--length", "8", "--length", "12", *TINY, "--paced"])
        assert done.returncode == 2 and "--paced" in done.stderr, done.stderr


def test_compare_prints_a_ratio_table():
    done = run([PYTHON, SOURCE_DIR / "bench" / "compare.py", "--build", Path(MTBERT).parent, "--python", PYTHON,
                "--rounds", "1", "--max-busy", "1", "--case", "train_step", "--preset", "small", "--length", "8", "--batch", "2",
                "--steps", "1", "--warmup", "0", "--threads", "1", "--raw", WORK / "raw.jsonl",
                "--extra", "--layers 1 --hidden 32 --heads 2 --intermediate 64 --vocab-size 1200"])
    assert done.returncode == 0, done.stderr
    rows = [row for row in done.stdout.splitlines() if row.startswith("| train_step |")]
    assert len(rows) == 1 and "x**" in rows[0], done.stdout
    assert "1 rounds of 1 timed pairs" in done.stdout
    raw = [json.loads(line) for line in (WORK / "raw.jsonl").read_text().splitlines()]
    assert sorted(line["impl"] for line in raw) == ["mtbert", "pytorch-eager"]


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
