#!/usr/bin/env python3
"""The shell commands of README.md and docs/*.md, run as written so that they
cannot go stale.

Every command of every ```sh block (README.md first, then the docs pages in
alphabetical order, all in one scratch folder, so that a page may use what
README made: runs/quickstart, runs/tiny/model) is either run (exit 0 expected), in a
scratch folder laid out like the repository (build/, experiments/, scripts/,
bench/, results/ linked, ../shared/data linked when the data sets are here),
in the README's order, with tiny settings appended where a command trains; or
skipped for a stated reason (a download, the real bert-base-uncased, hours of
training that a script test covers with a tiny budget). A command that no
rule knows runs as written: a new README command is tested by default.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE = Path(os.environ.get("MTBERT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
BINARY = Path(os.environ.get("MTBERT_BINARY", SOURCE / "build" / "mtbert"))
DATA = Path(os.environ.get("MTBERT_DATA") or SOURCE.parent / "shared" / "data")

# A quickstart run in seconds: one epoch on a few rows.
TINY_TRAIN = " ".join(f"tasks.{task}.limit_{split}={n}" for task in ("sst", "para", "sts")
                      for split, n in (("train", 64), ("dev", 32), ("test", 16))) + " train.epochs=1"
COMMAND_SECONDS = 600
TINY_PRETRAIN = "train.max_steps=30 train.eval_every_steps=15 train.eval_segments=32"

# What reads ../shared/data, directly or through a run made from it earlier
# in the README (the pretrained folders, the smoke runs).
DATA_READERS = ("../shared/data", "experiments/pretrain/", "runs/tiny", "runs/bert_small", "quickstart_pretrained",
                "experiments/smoke.yaml", "runs/smoke")

NEEDS_BERT_BASE = "needs the real bert-base-uncased (models/bert-base-uncased, converted from the HuggingFace hub)"
NEEDS_WEIGHTS = "needs real weights converted from the HuggingFace hub into models/"

# (pattern, what to do): the first rule whose pattern matches the command
# wins. ("run", extra arguments appended) or ("skip", why).
RULES = [
    (r"^scripts/(quickstart|test)\.sh\b", ("skip", "installs packages and builds: what CI runs (.ci/run)")),
    (r"^scripts/(setup|build)\.sh\b(?!.*cmake_prefix_path)", ("skip", "installs packages and builds: this test runs "
                                                                     "against the build it was given")),
    (r"^ctest\b(?!.*bert-base-uncased)", ("skip", "CTest itself: this test runs inside it")),
    (r"\bpip install\b", ("skip", "downloads from PyPI")),
    (r"device=cuda|--device cuda", ("skip", "needs a GPU and a build against a CUDA LibTorch (docs/gpu.md; "
                                            "scripts/gpu/check.sh runs these there)")),
    (r"convert_hf_checkpoint\.py --hf\b", ("skip", "downloads from the HuggingFace hub (py.convert_hf_checkpoint_test "
                                                   "converts local folders)")),
    (r"models/(bert-base-uncased|deberta-v3-base)\b", ("skip", NEEDS_WEIGHTS)),
    (r"runs/base\b|experiments/base\.yaml", ("skip", NEEDS_BERT_BASE + ": runs/base is its run")),
    (r"experiments/final/gradient_surgery\.yaml", ("skip", NEEDS_BERT_BASE + ", and 8 GPUs or Slurm")),
    (r"^build/mtbert sweep experiments/sweeps/\w+\.yaml(?!.*--(emit|overlay))",
     ("skip", "the tables' runs: " + NEEDS_BERT_BASE)),
    (r"sweeps/small/.*--overlay experiments/small\.yaml", ("skip", "needs the small encoders (hours of pretraining)")),
    (r"--runs runs/small/", ("skip", "the small study's runs (hours)")),
    (r"^scripts/(small_reproduction|pretrain_small)\.sh", ("skip", "hours on 2 cores: cli.small_reproduction_script_test "
                                                                   "and cli.pretrain_small_script_test run them small")),
    (r"^scripts/smoke_reproduction\.sh", ("skip", "cli.smoke_reproduction_test runs it")),
    (r"^bench/compare\.py", ("skip", "minutes, on a quiet machine (BENCHMARKS.md; py.bench_cli_test runs the bench)")),
    (r"^scripts/build\.sh .*cmake_prefix_path", ("skip", "another LibTorch (pip's)")),
    (r"^build/mtbert pretrain experiments/pretrain/bert_small\.yaml",
     ("run", "train.max_steps=4 train.batch_size=4 train.eval_every_steps=2 train.eval_segments=8")),
    (r"^build/mtbert pretrain experiments/pretrain/\w+\.yaml", ("run", TINY_PRETRAIN)),
    (r"^(MTBERT_DATA=\S+ )?build/mtbert train experiments/(quickstart\w*|studies/\w+)\.yaml", ("run", TINY_TRAIN)),
    # The study's 8 quickstart runs, each on a few rows (key=value overrides
    # of a sweep apply to every run).
    (r"^build/mtbert sweep experiments/sweeps/studies/pooling\.yaml --jobs", ("run", TINY_TRAIN)),
    # A measurement's default repetitions are for a quiet machine; here the
    # command only has to work (beside CI's other tests it once took > 600 s).
    (r"^build/mtbert bench\b", ("run", "--steps 2 --warmup 1")),
]


def commands(readme):
    """(line number, command) of every ```sh block, continuation lines joined,
    comment lines left out."""
    found, block, pending, start = [], False, "", 0
    for number, line in enumerate(readme.read_text().splitlines(), 1):
        if line.startswith("```"):
            block = line.strip() == "```sh" if not block else False
            continue
        if not block or (not pending and (not line.strip() or line.lstrip().startswith("#"))):
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        found.append((start, pending + line))
        pending = ""
    return found


def without_comment(command):
    """The command without a trailing "   # ..." comment (none of the README's
    commands has a '#' inside quotes)."""
    return re.split(r"\s+#\s", command, maxsplit=1)[0].rstrip()


def workspace():
    """A folder that looks like the repository root to the commands."""
    root = Path(tempfile.mkdtemp(prefix="mtbert-readme-test-"))
    repo = root / "repo"
    repo.mkdir()
    (repo / "build").symlink_to(BINARY.parent)
    for name in ("experiments", "scripts", "bench", "results"):
        (repo / name).symlink_to(SOURCE / name)
    if (DATA / "ids-sst-train.csv").exists():
        (root / "shared").mkdir()
        (root / "shared" / "data").symlink_to(DATA)
    return root, repo


def page_commands():
    """(page as printed, line number, command): README.md's, then each docs page's."""
    pages = [("README.md", SOURCE / "README.md")]
    pages += [(f"docs/{path.name}", path) for path in sorted((SOURCE / "docs").glob("*.md"))]
    for page, path in pages:
        for line, command in commands(path):
            yield page, line, command


def main():
    root, repo = workspace()
    has_data = (root / "shared").exists()
    env = {k: v for k, v in os.environ.items() if k != "MTBERT_DATA"}  # the README's defaults
    ran, skipped, failed = 0, 0, []
    try:
        for page, line, command in page_commands():
            where = f"{page}:{line}"
            command = without_comment(command)
            action, detail = next((rule for pattern, rule in RULES if re.search(pattern, command)), ("run", ""))
            uses_data = any(name in command for name in DATA_READERS)
            if action == "run" and uses_data and not has_data:
                action, detail = "skip", "the data sets are not at ../shared/data"
            if action == "skip":
                print(f"skipped: {where}: {command}  ({detail})")
                skipped += 1
                continue
            full = f"{command} {detail}".rstrip()
            ran += 1
            try:
                result = subprocess.run(["bash", "-c", "set -o pipefail; " + full], cwd=repo, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        timeout=COMMAND_SECONDS)
            except subprocess.TimeoutExpired:
                print(f"FAILED (still running after {COMMAND_SECONDS} s): {where}: {full}")
                failed.append(where)
                continue
            if result.returncode == 0:
                print(f"ok: {where}: {full}")
            else:
                tail = "\n    ".join(result.stdout.strip().splitlines()[-5:])
                print(f"FAILED (exit {result.returncode}): {where}: {full}\n    {tail}")
                failed.append(where)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"{ran} commands of README.md and docs/ ran, {skipped} skipped, {len(failed)} failed")
    if ran == 0:
        print("SKIPPED: no README or docs command could run here")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
