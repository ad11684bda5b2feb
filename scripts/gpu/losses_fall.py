#!/usr/bin/env python3
"""Checks that each run folder's training went somewhere: every train loss in
its metrics.jsonl is finite, and the last evaluation's train loss (summed over
tasks) is below the first one's. One line per run; exit status 1 if any run
fails, 2 if a folder has no metrics.

  scripts/gpu/losses_fall.py RUN [RUN ...]
"""
import json
import math
import sys
from pathlib import Path


def train_losses(run):
    """The summed train loss of each metrics line that has one, in order."""
    losses = []
    for line in (Path(run) / "metrics.jsonl").read_text().splitlines():
        per_task = json.loads(line).get("train_loss")
        if per_task:
            losses.append((sum(per_task.values()), per_task))
    return losses


def main(runs):
    status = 0
    for run in runs:
        try:
            losses = train_losses(run)
        except (OSError, ValueError) as e:
            print(f"{run}: no readable metrics.jsonl ({e})")
            status = max(status, 2)
            continue
        if len(losses) < 2:
            print(f"{run}: {len(losses)} train loss(es) in metrics.jsonl; two or more needed")
            status = max(status, 2)
            continue
        finite = all(math.isfinite(v) for _, per_task in losses for v in per_task.values())
        first, last = losses[0][0], losses[-1][0]
        ok = finite and last < first
        print(f"{run}: {'ok' if ok else 'FAILED'}: train loss {first:.4f} -> {last:.4f} over {len(losses)} "
              f"evaluations{'' if finite else ', not all finite'}")
        status = max(status, 0 if ok else 1)
    return status


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
