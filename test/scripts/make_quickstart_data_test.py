#!/usr/bin/env python3
"""scripts/make_quickstart_data.py: the committed quickstart files are exactly
what the script writes (so they can never drift from it), in the CS224N
layouts, with sensible label distributions."""
import csv
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from mini_runner import SOURCE_DIR, run_tests

SCRIPT = SOURCE_DIR / "scripts" / "make_quickstart_data.py"
COMMITTED = SOURCE_DIR / "experiments" / "data" / "quickstart"
sys.path.insert(0, str(SOURCE_DIR / "scripts"))
from make_quickstart_data import FILES  # noqa: E402

NAMES = list(FILES.values())
TASK_SPLIT = {name: key for key, name in FILES.items()}
SIZES = {"train": 1500, "dev": 300, "test": 300}
HEADERS = {
    "sst": ["", "id", "sentence", "sentiment"],
    "sst-test": ["0", "", "id", "sentence"],  # the odd header of ids-sst-test-student.csv
    "para": ["", "id", "sentence1", "sentence2", "is_duplicate"],
    "para-test": ["", "id", "sentence1", "sentence2"],
    "sts": ["", "id", "sentence1", "sentence2", "similarity"],
    "sts-test": ["", "id", "sentence1", "sentence2"],
}


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f, delimiter="\t"))


def test_committed_files_are_what_the_script_writes():
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, str(SCRIPT), "--out", tmp], check=True, capture_output=True)
        written = sorted(p.name for p in Path(tmp).iterdir())
        assert written == sorted(NAMES), written
        for name in NAMES:
            assert (Path(tmp) / name).read_bytes() == (COMMITTED / name).read_bytes(), \
                f"{name} differs from the script's output: rerun scripts/make_quickstart_data.py and commit"


def test_small_enough_to_commit():
    total = sum((COMMITTED / name).stat().st_size for name in NAMES)
    assert total < 800_000, total


def test_cs224n_layouts():
    ids = set()
    for name in NAMES:
        task, split = TASK_SPLIT[name]
        table = rows(COMMITTED / name)
        header = HEADERS[f"{task}-test"] if split == "test" else HEADERS[task]
        assert table[0] == header, (name, table[0])
        assert len(table) - 1 == SIZES[split], (name, len(table))
        for row in table[1:]:
            assert len(row) == len(header), (name, row)
            id_ = row[header.index("id")]
            assert len(id_) == 25 and all(c in "0123456789abcdef" for c in id_), (name, id_)
            ids.add(id_)
        if task == "sst" and split == "test":
            assert [r[:2] for r in table[1:3]] == [["1", "0.0"], ["2", "1.0"]]
    assert len(ids) == sum(SIZES[split] for _, split in FILES), "ids are unique"


def test_labels_are_spread_over_their_range():
    sst = Counter(int(r[3]) for r in rows(COMMITTED / FILES["sst", "train"])[1:])
    assert sorted(sst) == [0, 1, 2, 3, 4] and min(sst.values()) > 250, sst
    para = Counter(r[4] for r in rows(COMMITTED / FILES["para", "train"])[1:])
    assert sorted(para) == ["0.0", "1.0"] and 0.35 < para["1.0"] / 1500 < 0.55, para
    sts = [float(r[4]) for r in rows(COMMITTED / FILES["sts", "train"])[1:]]
    assert min(sts) == 0.0 and max(sts) == 5.0 and 1.0 < statistics.pstdev(sts), (min(sts), max(sts))
    assert all(len(r[4].split(".")[1]) == 1 for r in rows(COMMITTED / FILES["sts", "dev"])[1:])


if __name__ == "__main__":
    sys.exit(run_tests(globals()))
