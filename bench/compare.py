#!/usr/bin/env python3
"""Runs `mtbert bench` and its Python peer (bench/peer/peer_bench.py) one after
the other and prints the ratios: mtbert's throughput / the peer's.

  bench/compare.py [--rounds 3] [--case train_step] [--preset small] [--length 64] [--batch 16] ...
                   [--wait-policy] [--relpos] [--raw results.jsonl]

Every case x model x length is one unit. Each round runs every unit once per
implementation, each run a fresh process with OMP_WAIT_POLICY=PASSIVE and the
same thread count, the order of the two swapped from round to round; within a
run the bench itself times --steps repetitions after --warmup and reports the
median. The ratio of a unit is the median over rounds of that round's ratio
(a slow spell of a shared machine hits both runs of a round alike); the
throughputs shown are the medians over rounds.

Before every run it samples /proc/stat for two seconds and, while other
processes keep more than --max-busy of the machine's CPU time busy, waits
(this machine is shared: another tenant's compile halves a 2-core benchmark);
each line records that busy share ("others_busy") and the load average.

--wait-policy also runs mtbert's train_step units with OMP_WAIT_POLICY=ACTIVE
in every round (libgomp's default, which mtbert replaces with PASSIVE by
re-executing itself) and reports ACTIVE / PASSIVE throughput.
--relpos adds the relative-position op's own benchmark
(build/bench/mtbert_bench_relpos --quick --only op), whose lines already
compare mtbert's op with the gather formulation.
Needs Debian's /usr/bin/python3 with torch (--python to change).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(HERE)
CASES = ("encoder_forward", "train_step", "tokenizer")
# The figure compared per case: examples/s, or sentences/s for the tokenizer.
THROUGHPUT = {"encoder_forward": "examples_per_s", "train_step": "examples_per_s", "tokenizer": "sentences_per_s"}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(SOURCE_DIR, "build"), help="build folder with mtbert")
    p.add_argument("--python", default="/usr/bin/python3", help="Python with torch, for the peer")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--case", action="append", choices=CASES, help="(repeatable; default: all)")
    p.add_argument("--preset", action="append", choices=["small", "base"], help="(repeatable; default: both)")
    p.add_argument("--length", type=int, action="append", help="(repeatable; default: 64 and 128)")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"], help="for the model cases")
    p.add_argument("--extra", default="", help="more flags for both benches, e.g. \"--hidden 64 --layers 1\"")
    p.add_argument("--wait-policy", action="store_true", help="also mtbert's train_step with OMP_WAIT_POLICY=ACTIVE")
    p.add_argument("--relpos", action="store_true", help="also the relative-position op's benchmark")
    p.add_argument("--raw", help="append every JSON line here")
    p.add_argument("--max-busy", type=float, default=0.15,
                   help="wait before a run while other processes use more than this share of all CPUs (1: never wait)")
    p.add_argument("--max-wait", type=float, default=900, help="seconds to wait for a quiet machine, then run anyway")
    args = p.parse_args(argv)
    args.case = args.case or list(CASES)
    args.preset = args.preset or ["small", "base"]
    args.length = args.length or [64, 128]
    return args


def units(args):
    """(case, preset, length) of each comparison; the tokenizer has no shape."""
    out = []
    for case in args.case:
        if case == "tokenizer":
            out.append((case, None, None))
        else:
            out.extend((case, preset, n) for preset in args.preset for n in args.length)
    return out


def unit_flags(args, unit):
    case, preset, length = unit
    flags = ["--case", case, "--steps", str(args.steps), "--warmup", str(args.warmup),
             "--threads", str(args.threads), "--batch", str(args.batch)]
    if preset:
        flags += ["--preset", preset, "--length", str(length), "--precision", args.precision]
    return flags + args.extra.split()


def busy_share(seconds=2.0):
    """Share of all CPUs' time spent busy during `seconds` (0..1), from /proc/stat.
    Time of niced processes counts as free: a nice 19 compile yields its core
    to a benchmark at normal priority (CFS weight 15 against 1024)."""
    def sample():
        with open("/proc/stat") as f:
            values = [int(v) for v in f.readline().split()[1:]]
        return values[1] + values[3] + values[4], sum(values)  # nice + idle + iowait, total
    free0, total0 = sample()
    time.sleep(seconds)
    free1, total1 = sample()
    return 1.0 - (free1 - free0) / max(total1 - total0, 1)


def wait_for_quiet(args):
    """Waits while other processes keep the machine busier than --max-busy; returns the last share seen."""
    if not os.path.exists("/proc/stat"):
        return None
    waited, share = 0.0, busy_share()
    while share > args.max_busy and waited < args.max_wait:
        time.sleep(8)
        waited += 10
        share = busy_share()
    if share > args.max_busy:
        print(f"compare.py: machine still {share:.0%} busy after {waited:.0f} s; running anyway", file=sys.stderr)
    return round(share, 3)


def run_json(command, policy):
    env = dict(os.environ, OMP_WAIT_POLICY=policy)
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"compare.py: {' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main(argv):
    args = parse_args(argv)
    mtbert = os.path.join(args.build, "mtbert")
    peer = [args.python, os.path.join(HERE, "peer", "peer_bench.py")]
    runs = {"mtbert": lambda flags: run_json([mtbert, "bench"] + flags, "PASSIVE"),
            "peer": lambda flags: run_json(peer + flags, "PASSIVE")}
    if args.wait_policy:
        runs["mtbert-active"] = lambda flags: run_json([mtbert, "bench"] + flags, "ACTIVE")
    raw = open(args.raw, "a", buffering=1) if args.raw else None

    results = {}  # (unit, impl) -> [line per round]
    for r in range(args.rounds):
        load = os.getloadavg()[0]
        print(f"round {r + 1}/{args.rounds} (load {load:.2f})", file=sys.stderr, flush=True)
        for unit in units(args):
            order = ["mtbert", "peer"] if r % 2 == 0 else ["peer", "mtbert"]
            if args.wait_policy and unit[0] == "train_step":
                order.append("mtbert-active")
            for impl in order:
                busy = wait_for_quiet(args)
                load = os.getloadavg()[0]
                for line in runs[impl](unit_flags(args, unit)):
                    line["round"], line["others_busy"], line["load_before"] = r, busy, round(load, 2)
                    if impl == "mtbert-active":
                        line["impl"] = "mtbert"
                    if raw:
                        raw.write(json.dumps(line) + "\n")
                    results.setdefault((unit, impl), []).append(line)
    if args.relpos:
        relpos = os.path.join(args.build, "bench", "mtbert_bench_relpos")
        for line in run_json([relpos, "--quick", "--only", "op", "--threads", str(args.threads)], "PASSIVE"):
            print(json.dumps(line))
            if raw:
                raw.write(json.dumps(line) + "\n")

    print(f"threads {args.threads}, {args.precision}, batch {args.batch} per task, {args.rounds} rounds, "
          f"{args.steps} timed steps after {args.warmup} warm-up per run\n")
    print("| case | model | N | mtbert /s | peer /s | ratio (median of rounds) | per round |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for unit in units(args):
        ours, theirs = results.get((unit, "mtbert"), []), results.get((unit, "peer"), [])
        case, preset, length = unit
        if not ours or any("skipped" in line for line in ours + theirs):
            reason = next((line["skipped"] for line in ours + theirs if "skipped" in line), "not run")
            print(f"| {case} | {preset or '-'} | {length or '-'} | skipped: {reason} | | | |")
            continue
        key = THROUGHPUT[case]
        ratios = [a[key] / b[key] for a, b in zip(ours, theirs)]
        print(f"| {case} | {preset or '-'} | {length or '-'} | {statistics.median(a[key] for a in ours):.1f} | "
              f"{statistics.median(b[key] for b in theirs):.1f} | **{statistics.median(ratios):.2f}x** | "
              f"{', '.join(f'{x:.2f}' for x in ratios)} |")
    if args.wait_policy:
        print("\n| model | N | PASSIVE ex/s | ACTIVE ex/s | ACTIVE / PASSIVE (median of rounds) |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for unit in units(args):
            active = results.get((unit, "mtbert-active"))
            if not active:
                continue
            passive = results[(unit, "mtbert")]
            ratios = [a["examples_per_s"] / p["examples_per_s"] for a, p in zip(active, passive)]
            print(f"| {unit[1]} | {unit[2]} | {statistics.median(p['examples_per_s'] for p in passive):.1f} | "
                  f"{statistics.median(a['examples_per_s'] for a in active):.1f} | {statistics.median(ratios):.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
