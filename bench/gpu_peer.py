#!/usr/bin/env python3
"""mtbert against HuggingFace's BertModel and DebertaV2Model on the same GPU,
in one process tree: the multi-task training step and encoder inference,
eager and under torch.compile, with the model FLOP utilisation against the
GPU's bf16 peak measured in the same run.

  bench/gpu_peer.py --mtbert build-gpu/mtbert [--out peer.jsonl] [--deadline 300]
                    [--rounds 2] [--steps 20] [--warmup 5] [--size base|tiny]
                    [--case NAME ...] [--compile also|no|only] [--device cuda]

The peer is what a Python user would write with transformers: its BertModel
(SDPA attention, transformers' default) or DebertaV2Model (deberta-v3-base's
attention options, as `mtbert bench --positions c2p|p2c` builds them: 256 log
buckets over 512 positions, shared keys, LayerNorm'd relative embeddings, no
absolute positions), the three task heads of mtbert's bench step (CLS, dropout
0.3, one linear layer: SST-5 cross-entropy, Quora binary cross-entropy, STS-B
mean squared error, the pairs encoded jointly), backward per task, global-norm
clipping at 1.0 and torch.optim.AdamW (its default foreach implementation)
with HuggingFace's no-decay groups. Batches come from pinned host memory, as
a DataLoader with pin_memory gives them. Weights are random (the cost does
not depend on them); mtbert builds the same shapes with `mtbert bench`.

Each case alternates, round by round, one `mtbert bench` process and the
peer's repetitions in this process (eager) or in a child process under
torch.compile (the encoder compiled, heads and optimizer eager: one graph for
all three tasks' shapes; the compile's time is reported apart). Every
repetition is timed as `mtbert bench` times it: synchronise, wall clock,
synchronise; the peer's lines also carry CUDA-event times. A case's line
gives the medians over rounds and the ratio peer / mtbert (above 1: mtbert
faster).

MFU = 6 x parameters x tokens / step time / peak (2 x for inference), the
parameters those of the peer's model and heads (the same shapes as mtbert's),
the peak an 8192^3 bf16 matrix product timed first.

--deadline (seconds from the start) keeps the run inside a device call: a case
that would start after it is reported as skipped; compile cases run last.
--size tiny is for a dry run on a CPU (64 x 2 models, no peak measurement).
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peer"))
from hf_bert import TASKS, make_adamw  # noqa: E402  (the CPU peer's tasks and optimizer groups)
from peer_bench import random_batch, task_labels  # noqa: E402

SIZES = {
    "base": dict(layers=12, hidden=768, heads=12, intermediate=3072),
    "small": dict(layers=4, hidden=256, heads=4, intermediate=1024),
    "tiny": dict(layers=2, hidden=64, heads=2, intermediate=128),
}
VOCAB = 30522
DEBERTA_V3 = "c2p|p2c"

# name: (kind, model, positions, precision, length, batch); in the order they
# run, most wanted first ("size": --size's model).
CASES = {
    "bert_step_bf16": ("step", "size", "absolute", "bf16", 128, 32),
    "deberta_step_bf16": ("step", "size", DEBERTA_V3, "bf16", 128, 32),
    "small_step_bf16": ("step", "small", "absolute", "bf16", 128, 32),
    "bert_forward_bf16_n128": ("forward", "size", "absolute", "bf16", 128, 32),
    "bert_forward_bf16_n512": ("forward", "size", "absolute", "bf16", 512, 32),
    "bert_step_tf32": ("step", "size", "absolute", "tf32", 128, 32),
    # The reports' batch of 16, for the projection of an epoch.
    "bert_step_bf16_b16": ("step", "size", "absolute", "bf16", 128, 16),
    "deberta_step_bf16_b16": ("step", "size", DEBERTA_V3, "bf16", 128, 16),
    "small_step_fp32": ("step", "small", "absolute", "fp32", 128, 32),
}
COMPILE_CASES = ("bert_step_bf16", "bert_forward_bf16_n128", "deberta_step_bf16")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mtbert", help="the mtbert executable (built against this torch, with CUDA)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--size", choices=["base", "tiny"], default="base", help="the model of the non-small cases")
    p.add_argument("--case", action="append", choices=list(CASES), help="(repeatable; default: all)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--compile", choices=["also", "no", "only"], default="also",
                   help="the torch.compile cases (of COMPILE_CASES among the cases run): after the eager ones, none, "
                        "or only them")
    p.add_argument("--deadline", type=float, default=math.inf, help="seconds from the start; no case starts after")
    p.add_argument("--out", help="also append every JSON line to this file as it is printed")
    p.add_argument("--worker", choices=list(CASES), help=argparse.SUPPRESS)  # one compiled measurement, in a child
    args = p.parse_args(argv)
    if not args.worker and not args.mtbert:
        p.error("--mtbert is required")
    return args


def shape_of(args, model):
    return SIZES["small" if model == "small" else args.size]


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


class Heads(nn.Module):
    """mtbert bench's three task heads and losses over any encoder's last hidden state."""

    def __init__(self, hidden):
        super().__init__()
        self.dropout = nn.Dropout(0.3)
        self.classifiers = nn.ModuleDict({task: nn.Linear(hidden, outputs) for task, outputs in TASKS})

    def loss(self, task, last, labels):
        out = self.classifiers[task](self.dropout(last[:, 0])).float()  # losses in float32 under autocast
        if task == "sst":
            return F.cross_entropy(out, labels.long())
        out = out.squeeze(-1)
        return F.binary_cross_entropy_with_logits(out, labels) if task == "para" else F.mse_loss(out, labels)


def make_encoder(shape, positions):
    import transformers
    common = dict(vocab_size=VOCAB, hidden_size=shape["hidden"], num_hidden_layers=shape["layers"],
                  num_attention_heads=shape["heads"], intermediate_size=shape["intermediate"],
                  max_position_embeddings=512, type_vocab_size=2)
    if positions == "absolute":
        return transformers.BertModel(transformers.BertConfig(**common), add_pooling_layer=False)
    config = transformers.DebertaV2Config(
        relative_attention=True, position_buckets=256, max_relative_positions=512, pos_att_type=["p2c", "c2p"],
        share_att_key=True, norm_rel_ebd="layer_norm", position_biased_input=False, **common)
    return transformers.DebertaV2Model(config)


def host_batch(batch, length, pair, device):
    """The CPU peer's random batch (ids above BERT's special ones, full mask,
    token types 0 then 1 for a pair), pinned for a GPU."""
    tensors = random_batch(SimpleNamespace(batch=batch, vocab_size=VOCAB), length, pair)
    return tuple(t.pin_memory() for t in tensors) if device.type == "cuda" else tensors


def labels_for(task, batch, device):
    labels = task_labels(task, batch)
    return labels.pin_memory() if device.type == "cuda" else labels


class Peer:
    """One case's model, optimizer and batches, and the function one repetition runs."""

    def __init__(self, args, name, compiled):
        kind, model, positions, precision, length, batch = CASES[name]
        self.device = torch.device(args.device)
        self.tokens = (len(TASKS) if kind == "step" else 1) * batch * length
        torch.manual_seed(0)
        shape = shape_of(args, model)
        encoder = make_encoder(shape, positions).to(self.device)
        self.attention = getattr(encoder.config, "_attn_implementation", None)
        heads = Heads(shape["hidden"]).to(self.device)
        self.params = sum(p.numel() for p in encoder.parameters()) + \
            (sum(p.numel() for p in heads.parameters()) if kind == "step" else 0)
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision == "tf32"
        run = torch.compile(encoder) if compiled else encoder
        autocast = lambda: torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=precision == "bf16")
        to = lambda t: t.to(self.device, non_blocking=True)
        if kind == "forward":
            encoder.eval()
            ids, mask, types = host_batch(batch, length, False, self.device)

            def forward():
                with torch.inference_mode(), autocast():
                    run(input_ids=to(ids), attention_mask=to(mask), token_type_ids=to(types))
            self.repetition = forward
            return
        # Named as the CPU peer's model ("bert." and the heads), so that
        # make_adamw forms the same four groups as mtbert's optimizer.
        model = nn.ModuleDict({"bert": encoder, "heads": heads}).train()
        optimizer = make_adamw(model, lr=1e-5, weight_decay=0.01)
        batches = [(task, *host_batch(batch, length, task != "sst", self.device), labels_for(task, batch, self.device))
                   for task, _ in TASKS]
        parameters = list(model.parameters())

        def step():
            for task, ids, mask, types, labels in batches:
                with autocast():
                    last = run(input_ids=to(ids), attention_mask=to(mask), token_type_ids=to(types)).last_hidden_state
                    loss = heads.loss(task, last, to(labels))
                loss.backward()
            torch.nn.utils.clip_grad_norm_(parameters, 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        self.repetition = step

    def measure(self, args):
        """Per repetition after the warm-up: wall ms (synchronised), CUDA-event ms, CPU ms; peak memory."""
        wall, events, cpu = [], [], []
        cuda = self.device.type == "cuda"
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        first = None
        for i in range(args.warmup + args.steps):
            sync(self.device)
            cpu_start, start = time.process_time(), time.perf_counter()
            if cuda:
                begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                begin.record()
            self.repetition()
            if cuda:
                end.record()
            sync(self.device)
            ms = (time.perf_counter() - start) * 1e3
            if i == 0:
                first = ms
            if i >= args.warmup:
                wall.append(ms)
                cpu.append((time.process_time() - cpu_start) * 1e3)
                if cuda:
                    events.append(begin.elapsed_time(end))
        line = {"median_ms": round(statistics.median(wall), 3), "min_ms": round(min(wall), 3),
                "median_cpu_ms": round(statistics.median(cpu), 3), "first_ms": round(first, 1),
                "params": self.params, "tokens": self.tokens, "attention": self.attention}
        if cuda:
            line["median_event_ms"] = round(statistics.median(events), 3)
            line["peak_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
        return line


def mtbert_command(args, name):
    kind, model, positions, precision, length, batch = CASES[name]
    shape = shape_of(args, model)
    cmd = [args.mtbert, "bench", "--device", args.device, "--case", "train_step" if kind == "step" else "encoder_forward",
           "--layers", str(shape["layers"]), "--hidden", str(shape["hidden"]), "--heads", str(shape["heads"]),
           "--intermediate", str(shape["intermediate"]), "--length", str(length), "--batch", str(batch),
           "--steps", str(args.steps), "--warmup", str(args.warmup), "--positions", positions,
           "--precision", "bf16" if precision == "bf16" else "fp32"]
    return cmd + (["--tf32"] if precision == "tf32" else [])


def run_mtbert(args, name, timeout):
    cmd = mtbert_command(args, name)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    lines = [l for l in done.stdout.splitlines() if l.startswith('{"')]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    line = json.loads(lines[-1])
    return {k: line[k] for k in ("median_ms", "min_ms", "median_cpu_ms") if k in line}


def run_compiled(args, name, timeout):
    """The compiled peer in a child process (a compile that overruns is killed with it)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--device", args.device, "--size", args.size,
           "--steps", str(args.steps), "--warmup", str(args.warmup)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"torch.compile worker for {name}: exit {done.returncode}: {done.stderr.strip()[-800:]}")
    return json.loads(lines[-1])


def bf16_peak(device):
    """TFLOP/s of an 8192^3 bf16 matrix product: the mean of 10 after 3 warm-ups."""
    n = 8192
    a, b = (torch.randn(n, n, device=device, dtype=torch.bfloat16) for _ in range(2))
    for _ in range(3):
        a @ b
    sync(device)
    start = time.perf_counter()
    for _ in range(10):
        a @ b
    sync(device)
    return 2 * n**3 * 10 / (time.perf_counter() - start) / 1e12


def main(argv=None):
    args = parse_args(argv)
    if args.worker:  # the child of run_compiled
        peer = Peer(args, args.worker, compiled=True)
        print(json.dumps(peer.measure(args)), flush=True)
        return 0
    started = time.monotonic()
    left = lambda: args.deadline - (time.monotonic() - started)
    out = open(args.out, "a") if args.out else None

    def emit(line):
        print(json.dumps(line), flush=True)
        if out:
            out.write(json.dumps(line) + "\n")
            out.flush()

    import transformers
    device = torch.device(args.device)
    header = {"torch": torch.__version__, "transformers": transformers.__version__, "size": args.size,
              "rounds": args.rounds, "steps": args.steps, "warmup": args.warmup}
    if device.type == "cuda":
        header.update(device=torch.cuda.get_device_name(), bf16_peak_tflops=round(bf16_peak(device), 1))
    emit({"case": "setup", **header})
    peak = header.get("bf16_peak_tflops")
    failures = 0
    names = args.case or list(CASES)
    plan = ([] if args.compile == "only" else [(n, False) for n in names]) + \
        ([] if args.compile == "no" else [(n, True) for n in COMPILE_CASES if n in names])
    for name, compiled in plan:
        kind, model, positions, precision, length, batch = CASES[name]
        line = {"case": name, "kind": kind, "model": model if model == "small" else args.size, "positions": positions,
                "precision": precision, "length": length, "batch": batch,
                "peer": "hf-compile" if compiled else "hf-eager"}
        if left() < (90 if compiled else 20):  # a compile takes a minute or more
            emit({**line, "skipped": "past the deadline"})
            continue
        try:
            peer = None if compiled else Peer(args, name, compiled=False)
            mtbert_ms, peer_ms, rounds = [], [], []
            # A compiled peer compiles anew in each child: one round.
            for r in range(1 if compiled else args.rounds):
                try:
                    ours = run_mtbert(args, name, timeout=max(left(), 10))
                except (RuntimeError, subprocess.TimeoutExpired):
                    failures += 1  # mtbert's own failure: the stage fails
                    raise
                theirs = run_compiled(args, name, timeout=max(left(), 10)) if compiled else peer.measure(args)
                mtbert_ms.append(ours["median_ms"])
                peer_ms.append(theirs["median_ms"])
                rounds.append({"mtbert": ours, "peer": theirs})
            tokens, flops_per_token = theirs["tokens"], (6 if kind == "step" else 2) * theirs["params"]
            m, p = statistics.median(mtbert_ms), statistics.median(peer_ms)
            line.update(mtbert_ms=round(m, 3), peer_ms=round(p, 3), ratio=round(p / m, 3), params=theirs["params"],
                        tokens=tokens, mtbert_tokens_per_s=round(tokens / m * 1e3), rounds=rounds)
            if peak:
                line.update(mtbert_mfu=round(flops_per_token * tokens / (m / 1e3) / (peak * 1e12), 4),
                            peer_mfu=round(flops_per_token * tokens / (p / 1e3) / (peak * 1e12), 4))
            del peer
        except Exception as e:  # noqa: BLE001 -- one case's failure is its line's, the next case still runs
            # The peer's failures (a transformers model that does not compile,
            # out of memory) are reported on their line, not counted as mtbert's.
            line["error"] = f"{type(e).__name__}: {' | '.join(str(e).splitlines())}"[:1000]
            peer = None
        if device.type == "cuda":
            torch.cuda.empty_cache()
        emit(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
