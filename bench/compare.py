#!/usr/bin/env python3
"""Runs `mtbert bench` and its Python peer (bench/peer/peer_bench.py) side by
side and prints the ratios: mtbert's throughput / the peer's.

  bench/compare.py [--rounds 3] [--case train_step] [--preset small] [--length 64] [--batch 16] ...
                   [--wait-policy] [--relpos] [--raw results.jsonl]

Every case x model x length is one unit. Each round starts, per unit, one
mtbert and one peer process (OMP_WAIT_POLICY=PASSIVE, the same thread count)
with --paced, and alternates their repetitions one at a time, the order
swapped from one repetition to the next: only one of them runs at any moment,
and both steps of a pair see the same spell of this shared machine (whose
speed drifts by 30% over tens of seconds, other tenants aside). The ratio of
a unit is the median, over all timed pairs of all rounds, of the pair's
ratio; "rounds" shows each round's median. Throughputs are the medians over
rounds of each run's median step.

Before every unit it samples /proc/stat for two seconds and, while other
processes keep more than --max-busy of the machine's CPU time busy, waits;
each line records that busy share ("others_busy") and the load average.

--wait-policy also compares mtbert's train_step with OMP_WAIT_POLICY=ACTIVE
(libgomp's default, which mtbert replaces with PASSIVE by re-executing
itself) against PASSIVE: whole runs one after the other, since an idle ACTIVE
process would spin on the cores its partner needs.
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
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(HERE)
CASES = ("encoder_forward", "train_step", "mlm_step", "tokenizer")
# The figure compared per case: examples/s, or sentences/s for the tokenizer.
THROUGHPUT = {"encoder_forward": "examples_per_s", "train_step": "examples_per_s", "mlm_step": "examples_per_s",
              "tokenizer": "sentences_per_s"}


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
                   help="wait before a unit while other processes use more than this share of all CPUs (1: never)")
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


def fail(command, returncode, stderr):
    sys.exit(f"compare.py: {' '.join(command)} failed ({returncode}):\n{stderr}")


def run_json(command, policy):
    """A whole run: its JSON lines."""
    done = subprocess.run(command, env=dict(os.environ, OMP_WAIT_POLICY=policy), capture_output=True, text=True)
    if done.returncode != 0:
        fail(command, done.returncode, done.stderr)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def run_paced(commands, repetitions):
    """Runs the --paced commands {name: argv} side by side, one repetition of
    one of them at a time, alternating the order; returns ({name: [ms per
    repetition]}, {name: summary line})."""
    # stderr goes to files: an unread pipe could fill and stall a process.
    errs = {name: tempfile.TemporaryFile("w+") for name in commands}
    procs = {name: subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errs[name],
                                    text=True, env=dict(os.environ, OMP_WAIT_POLICY="PASSIVE"))
             for name, argv in commands.items()}

    def failed(name):
        errs[name].seek(0)
        fail(commands[name], procs[name].wait(), errs[name].read())

    times, summary = {name: [] for name in procs}, {}
    names = list(procs)
    for i in range(repetitions):
        for name in names if i % 2 == 0 else names[::-1]:
            if name in summary:  # finished early: a skipped case
                continue
            proc = procs[name]
            try:
                proc.stdin.write("go\n")
                proc.stdin.flush()
            except BrokenPipeError:  # it ended without waiting: its last line says why
                pass
            line = proc.stdout.readline()
            if not line:
                failed(name)
            record = json.loads(line)
            if "rep" in record:
                times[name].append(record["ms"])
            else:
                summary[name] = record
    for name, proc in procs.items():
        # The rest through the same buffered reader: readline may already hold
        # the summary line (communicate() would read past it, from the pipe).
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
        rest = proc.stdout.read()
        if proc.wait() != 0:
            failed(name)
        for line in rest.splitlines():
            if line.startswith("{") and "rep" not in json.loads(line):
                summary[name] = json.loads(line)
    return times, summary


def main(argv):
    args = parse_args(argv)
    mtbert = [os.path.join(args.build, "mtbert"), "bench"]
    peer = [args.python, os.path.join(HERE, "peer", "peer_bench.py")]
    raw = open(args.raw, "a", buffering=1) if args.raw else None

    def record(line, r, busy, load):
        line.update({"round": r, "others_busy": busy, "load_before": round(load, 2)})
        if raw:
            raw.write(json.dumps(line) + "\n")

    lines = {}       # (unit, impl) -> [summary line per round]
    pair_ratios = {}  # unit -> [[peer ms / mtbert ms per timed pair] per round]
    for r in range(args.rounds):
        print(f"round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
        for unit in units(args):
            busy, load = wait_for_quiet(args), os.getloadavg()[0]
            flags = unit_flags(args, unit) + ["--paced"]
            # Who starts alternates between rounds as well as within them.
            commands = {"mtbert": mtbert + flags, "peer": peer + flags}
            if r % 2:
                commands = dict(reversed(list(commands.items())))
            times, summary = run_paced(commands, args.warmup + args.steps)
            for impl, line in summary.items():
                record(line, r, busy, load)
                lines.setdefault((unit, impl), []).append(line)
            timed = slice(args.warmup, None)
            pairs = [p / m for m, p in zip(times["mtbert"][timed], times["peer"][timed])]
            pair_ratios.setdefault(unit, []).append(pairs)
            if args.wait_policy and unit[0] == "train_step":
                for policy in (["PASSIVE", "ACTIVE"] if r % 2 == 0 else ["ACTIVE", "PASSIVE"]):
                    busy, load = wait_for_quiet(args), os.getloadavg()[0]
                    for line in run_json(mtbert + unit_flags(args, unit), policy):
                        record(line, r, busy, load)
                        lines.setdefault((unit, "mtbert-" + policy), []).append(line)
    if args.relpos:
        relpos = os.path.join(args.build, "bench", "mtbert_bench_relpos")
        for line in run_json([relpos, "--quick", "--only", "op", "--threads", str(args.threads)], "PASSIVE"):
            print(json.dumps(line))
            if raw:
                raw.write(json.dumps(line) + "\n")

    print(f"threads {args.threads}, {args.precision}, batch {args.batch} per task, {args.rounds} rounds of "
          f"{args.steps} timed pairs after {args.warmup} warm-up\n")
    print("| case | model | N | mtbert /s | peer /s | ratio (median of pairs) | rounds |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for unit in units(args):
        ours, theirs = lines.get((unit, "mtbert"), []), lines.get((unit, "peer"), [])
        case, preset, length = unit
        skipped = next((line["skipped"] for line in ours + theirs if "skipped" in line), None)
        if skipped or not ours or not theirs:
            print(f"| {case} | {preset or '-'} | {length or '-'} | skipped: {skipped or 'not run'} | | | |")
            continue
        key = THROUGHPUT[case]
        every_pair = [x for pairs in pair_ratios[unit] for x in pairs]
        per_round = ", ".join(f"{statistics.median(pairs):.2f}" for pairs in pair_ratios[unit])
        print(f"| {case} | {preset or '-'} | {length or '-'} | {statistics.median(a[key] for a in ours):.1f} | "
              f"{statistics.median(b[key] for b in theirs):.1f} | **{statistics.median(every_pair):.2f}x** | "
              f"{per_round} |")
    if args.wait_policy:
        print("\n| model | N | PASSIVE ex/s | ACTIVE ex/s | ACTIVE / PASSIVE (median of rounds) |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for unit in units(args):
            active, passive = lines.get((unit, "mtbert-ACTIVE")), lines.get((unit, "mtbert-PASSIVE"))
            if not active:
                continue
            ratios = [a["examples_per_s"] / p["examples_per_s"] for a, p in zip(active, passive)]
            print(f"| {unit[1]} | {unit[2]} | {statistics.median(p['examples_per_s'] for p in passive):.1f} | "
                  f"{statistics.median(a['examples_per_s'] for a in active):.1f} | {statistics.median(ratios):.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
