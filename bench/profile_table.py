#!/usr/bin/env python3
"""Where the time goes, mtbert beside the eager PyTorch peer: runs
`mtbert bench --profile` and `bench/peer/peer_bench.py --profile` on one case,
shape and length, and prints a Markdown table of the operators with the most
self CPU time per repetition on either side (milliseconds, calls and share of
the side's total operator self time).

  bench/profile_table.py --case train_step --preset small --length 64 [--steps 5] [--threads 2]
                         [--precision bf16] [--mtbert BUILD/mtbert --python VENV/bin/python]

--mtbert and --python choose the pair: an mtbert built against pip's LibTorch
beside the Python of that pip's torch, for example.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def profile(command):
    env = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "PASSIVE"))
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"profile_table.py: {' '.join(map(str, command))} failed: {done.stderr.strip()}")
    [line] = [json.loads(text) for text in done.stdout.splitlines()]
    return line


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--case", required=True, choices=["encoder_forward", "train_step", "mlm_step"])
    p.add_argument("--preset", default="small", choices=["small", "base"])
    p.add_argument("--length", type=int, default=64)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--mtbert", default=str(ROOT / "build" / "mtbert"))
    p.add_argument("--python", default="/usr/bin/python3", help="the Python with torch that runs the peer")
    args = p.parse_args(argv)
    flags = ["--case", args.case, "--preset", args.preset, "--length", str(args.length), "--steps", str(args.steps),
             "--threads", str(args.threads), "--precision", args.precision, "--profile"]
    sides = {"mtbert": profile([args.mtbert, "bench", *flags]),
             "peer": profile([args.python, ROOT / "bench" / "peer" / "peer_bench.py", *flags])}
    ops = {name: {op["op"]: op for op in line["profile"]["top"]} for name, line in sides.items()}
    ranked = []
    for name in ("mtbert", "peer"):
        for op in sides[name]["profile"]["top"][:args.top]:
            if op["op"] not in ranked:
                ranked.append(op["op"])
    ranked.sort(key=lambda op: -max(ops[side].get(op, {"self_ms": 0})["self_ms"] for side in ops))
    print(f"{args.case}, {args.preset}, {args.precision}, N = {args.length}, {args.threads} threads, "
          f"LibTorch {sides['mtbert']['torch_version']} / torch {sides['peer']['torch_version']}: median "
          f"{sides['mtbert']['median_ms']:.1f} ms (mtbert), {sides['peer']['median_ms']:.1f} ms (peer) per repetition\n")
    print("| operator | mtbert self ms | calls | share | peer self ms | calls | share |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")

    def cells(side, op):
        o = ops[side].get(op)
        return f"{o['self_ms']:.2f} | {o['calls']:g} | {o['share']:.1%}" if o else "- | - | -"

    for op in ranked:
        print(f"| `{op}` | {cells('mtbert', op)} | {cells('peer', op)} |")
    totals = [sides[side]["profile"] for side in ("mtbert", "peer")]
    print(f"| all operators | {totals[0]['total_self_ms']:.2f} | {totals[0]['total_calls']:.0f} | "
          f"| {totals[1]['total_self_ms']:.2f} | {totals[1]['total_calls']:.0f} | |")


if __name__ == "__main__":
    main(sys.argv[1:])
