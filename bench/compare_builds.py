#!/usr/bin/env python3
"""Times one `mtbert bench` case with two mtbert executables side by side (a
change's before and after) and prints the paired ratio: baseline ms /
candidate ms per step (above 1: the candidate is faster).

  bench/compare_builds.py BASELINE CANDIDATE [--rounds 3] [--steps 10] -- BENCH ARGS...

  e.g. bench/compare_builds.py /tmp/mtbert-before build/mtbert -- \\
         --case train_step --preset small --length 128 --positions 'c2p|p2c' --threads 2

BENCH ARGS name one case, one model and one length (--paced needs that).
Both run with --paced, alternating repetitions one at a time, the order
swapped every repetition, as bench/compare.py pairs mtbert with its peer: only
one runs at any moment, so both steps of a pair see the same spell of a
machine whose speed drifts. The ratio is the median over all pairs of all
rounds; each round waits first for the machine to be quiet (--max-busy).
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import run_paced, wait_for_quiet  # noqa: E402


def main(argv):
    if "--" not in argv:
        sys.exit("compare_builds.py: give the bench arguments after --")
    split = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("baseline", help="the mtbert executable before the change")
    p.add_argument("candidate", help="the mtbert executable after it")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=10, help="timed repetitions per round")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--max-busy", type=float, default=0.15, help="wait while others use more of the CPUs")
    p.add_argument("--max-wait", type=float, default=600, help="seconds to wait for quiet at most")
    args = p.parse_args(argv[:split])
    bench = argv[split + 1:]
    flags = ["bench", "--paced", "--steps", str(args.steps), "--warmup", str(args.warmup)] + bench
    pairs, rounds = [], []
    for r in range(args.rounds):
        busy = wait_for_quiet(args)
        # Who goes first alternates between rounds too.
        order = ["baseline", "candidate"] if r % 2 == 0 else ["candidate", "baseline"]
        commands = {name: [getattr(args, name)] + flags for name in order}
        times, _ = run_paced(commands, args.warmup + args.steps)
        times = {name: ms[args.warmup:] for name, ms in times.items()}  # the warm-up repetitions print too
        round_pairs = [b / c for b, c in zip(times["baseline"], times["candidate"])]
        pairs += round_pairs
        rounds.append({"round": r + 1, "others_busy": busy, "baseline_ms": statistics.median(times["baseline"]),
                       "candidate_ms": statistics.median(times["candidate"]),
                       "ratio": round(statistics.median(round_pairs), 4)})
        print(json.dumps(rounds[-1]), flush=True)
    print(json.dumps({"bench": " ".join(bench), "pairs": len(pairs), "ratio": round(statistics.median(pairs), 4),
                      "rounds": [r["ratio"] for r in rounds]}))


if __name__ == "__main__":
    main(sys.argv[1:])
