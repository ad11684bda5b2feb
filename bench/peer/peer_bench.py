#!/usr/bin/env python3
"""The Python peer of `mtbert bench`: the same cases, shapes, flags and JSON
lines (one per case, "impl": "pytorch-eager"), computed by eager PyTorch
(hf_bert.py) and by the pure-Python BERT tokenizer of
test/reference/bert_tokenizer_reference.py (HuggingFace's slow BertTokenizer
algorithm).

  /usr/bin/python3 bench/peer/peer_bench.py [--case train_step] [--preset small] [--length 64] ...

Cases:
  encoder_forward  BertModel inference (eval, no autograd) on random ids [B, N], full mask
  mlm_step         one masked-LM training step: HF BertForMaskedLM (logits at every
                   position, cross-entropy ignoring the unmasked ones) on [B, N]
                   with 15% of the positions masked, clipping, AdamW
  train_step       one multi-task step: a batch of each of sst, para, sts (the
                   "mixed" sampler), as a careful user writes it: the three
                   tasks' forward passes and losses in one autocast region
                   (bf16 with --precision bf16), the losses summed, one
                   backward, global-norm clipping to 1.0, AdamW step,
                   zero_grad(set_to_none=True) (PyTorch 2's default);
                   examples/s counts 3 * B per step
  tokenizer        [CLS] + WordPiece ids + [SEP] of every SST train sentence
Timings: each step (pass) timed alone after --warmup untimed ones; medians.
--paced (one case, model and length): each repetition waits for a line on
stdin and prints {"rep": i, "ms": wall} after it, as `mtbert bench --paced`
does, so that bench/compare.py can alternate single steps of the two.
"""
import argparse
import csv
import json
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SOURCE_DIR, "test", "reference"))
from bert_tokenizer_reference import ReferenceBertTokenizer  # noqa: E402
from hf_bert import TASKS, BertConfig, BertForMaskedLMPeer, BertModel, MultitaskPeer, make_adamw  # noqa: E402

PRESETS = {
    "small": dict(layers=4, hidden=256, heads=4, intermediate=1024),
    "base": dict(layers=12, hidden=768, heads=12, intermediate=3072),
}
CASES = ("encoder_forward", "train_step", "mlm_step", "tokenizer")
DEFAULT_DATA = os.path.join(SOURCE_DIR, "..", "shared", "data")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--case", action="append", choices=CASES, help="cases to run (repeatable; default: all)")
    p.add_argument("--preset", default="all", choices=["small", "base", "all"])
    for name in ("layers", "hidden", "heads", "intermediate"):
        p.add_argument(f"--{name}", type=int, help="overrides the preset's value")
    p.add_argument("--length", type=int, action="append", help="sequence length (repeatable; default: 64 and 128)")
    p.add_argument("--batch", type=int, default=16, help="examples per batch (per task for train_step)")
    p.add_argument("--steps", type=int, default=5, help="timed repetitions per case")
    p.add_argument("--warmup", type=int, default=1, help="untimed repetitions first")
    p.add_argument("--threads", type=int, default=0, help="intra-op threads (0: one per core)")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--precision", default="fp32", choices=["fp32", "bf16"], help="bf16: autocast forward passes")
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--lr", type=float, default=1e-5)
    p.add_argument("--vocab-size", type=int, default=30522)
    p.add_argument("--data", default=os.environ.get("MTBERT_DATA", DEFAULT_DATA),
                   help="folder with ids-sst-train.csv and bert-base-uncased/vocab.txt")
    p.add_argument("--paced", action="store_true",
                   help="wait for a line on stdin before each repetition, print its time after it")
    p.add_argument("--profile", action="store_true",
                   help="after the timed repetitions, as many again under torch.autograd.profiler: "
                        "each line gets the operators with the most self CPU time per repetition")
    args = p.parse_args(argv)
    args.case = args.case or list(CASES)
    args.length = args.length or [64, 128]
    for name in ("batch", "steps", "vocab_size"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.warmup < 0:
        p.error("--warmup must be at least 0")
    if args.paced:
        model_cases = [c for c in args.case if c != "tokenizer"]
        lines = len(args.case) - len(model_cases) + len(model_cases) * len(models(args)) * len(args.length)
        if lines != 1:
            p.error(f"--paced needs exactly one case, model and length ({lines} lines requested)")
    return args


def models(args):
    """(name, shape) of each model to run: the preset(s), with overrides."""
    names = ["small", "base"] if args.preset == "all" else [args.preset]
    overrides = {k: getattr(args, k) for k in PRESETS["small"] if getattr(args, k) is not None}
    if overrides:  # an explicit shape is one model, the preset's values filling the rest
        return [("custom", {**PRESETS[names[0]], **overrides})]
    return [(n, PRESETS[n]) for n in names]


class Context:
    def __init__(self, args):
        self.args = args
        self.device = torch.device(args.device)
        threads = args.threads if args.threads > 0 else (os.cpu_count() or 1)
        torch.set_num_threads(threads)

    def common(self):
        return {
            "impl": "pytorch-eager",
            "device": str(self.device),
            "threads": torch.get_num_threads(),
            "torch_version": torch.__version__,
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
        }

    def autocast(self):
        return torch.autocast(device_type=self.device.type, dtype=torch.bfloat16,
                              enabled=self.args.precision == "bf16")

    def sync(self):
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def time_repeated(self, fn):
        """Wall-clock and process CPU milliseconds of each repetition after the warm-up."""
        times, cpu = [], []
        for i in range(self.args.warmup + self.args.steps):
            if self.args.paced and not sys.stdin.readline():
                sys.exit("peer_bench.py: --paced: stdin ended before every repetition ran")
            self.sync()
            cpu_start = time.process_time()
            start = time.perf_counter()
            fn()
            self.sync()
            ms = (time.perf_counter() - start) * 1e3
            if self.args.paced:
                print(json.dumps({"rep": i, "ms": round(ms, 3)}), flush=True)
            if i >= self.args.warmup:
                times.append(ms)
                cpu.append((time.process_time() - cpu_start) * 1e3)
        ops = self.profile_ops(fn) if self.args.profile else None
        return times, cpu, ops

    def profile_ops(self, fn):
        """Self CPU milliseconds and calls per repetition of each operator
        (key_averages' "Self CPU"), largest first: what mtbert bench --profile
        reports from LibTorch's profiler."""
        with torch.autograd.profiler.profile() as prof:
            for _ in range(self.args.steps):
                fn()
        ops = [(e.key, e.count / self.args.steps, e.self_cpu_time_total / 1e3 / self.args.steps)
               for e in prof.key_averages()]
        return sorted(ops, key=lambda op: -op[2])


def random_batch(args, length, pair):
    """Random ids (no special or padding ids), full mask; token types 0 then 1
    for pairs. On the CPU, as a data loader gives them."""
    ids = torch.randint(min(1000, args.vocab_size - 1), args.vocab_size, (args.batch, length))
    types = torch.zeros(args.batch, length, dtype=torch.long)
    if pair:
        types[:, length // 2:] = 1
    return ids, torch.ones(args.batch, length, dtype=torch.long), types


def task_labels(task, batch):
    if task == "sst":
        return torch.randint(0, 5, (batch,)).float()
    if task == "para":
        return torch.randint(0, 2, (batch,)).float()
    return torch.rand(batch) * 5


def shape_fields(name, shape, args, length):
    # BERT's absolute positions: the peer has no DeBERTa (mtbert bench --positions).
    return {"model": name, **shape, "vocab": args.vocab_size, "batch": args.batch, "length": length,
            "positions": "absolute"}


def profile_field(ops):
    total = sum(op[2] for op in ops)
    return {"total_self_ms": round(total, 3), "total_calls": round(sum(op[1] for op in ops), 1),
            "top": [{"op": name, "calls": round(calls, 1), "self_ms": round(ms, 3),
                     "share": round(ms / total if total > 0 else 0.0, 4)} for name, calls, ms in ops[:15]],
            "calls": {name: round(calls, 1) for name, calls, _ in ops}}


def timing_fields(ctx, measured, examples, tokens):
    times, cpu, ops = measured
    median = statistics.median(times)
    fields = {
        "steps": ctx.args.steps,
        "warmup": ctx.args.warmup,
        "median_ms": round(median, 3),
        "min_ms": round(min(times), 3),
        "median_cpu_ms": round(statistics.median(cpu), 3),
        "examples_per_s": round(examples / (median / 1e3), 2),
        "tokens_per_s": round(tokens / (median / 1e3), 1),
    }
    if ops is not None:
        fields["profile"] = profile_field(ops)
    return fields


def bert_config(shape, args):
    return BertConfig(vocab_size=args.vocab_size, hidden_size=shape["hidden"], num_hidden_layers=shape["layers"],
                      num_attention_heads=shape["heads"], intermediate_size=shape["intermediate"])


def bench_encoder_forward(ctx, name, shape, length):
    args = ctx.args
    model = BertModel(bert_config(shape, args)).to(ctx.device).eval()
    ids, mask, types = (t.to(ctx.device) for t in random_batch(args, length, pair=False))

    def run():
        with torch.no_grad(), ctx.autocast():
            model(ids, mask, types)

    times = ctx.time_repeated(run)
    return {"case": "encoder_forward", "precision": args.precision, **shape_fields(name, shape, args, length),
            **timing_fields(ctx, times, args.batch, args.batch * length)}


def bench_train_step(ctx, name, shape, length):
    args = ctx.args
    model = MultitaskPeer(bert_config(shape, args)).to(ctx.device).train()
    optimizer = make_adamw(model, args.lr, args.weight_decay)
    batches = []
    for task, _ in TASKS:
        batches.append((task, *random_batch(args, length, pair=task != "sst"), task_labels(task, args.batch)))

    def step():
        with ctx.autocast():
            losses = []
            for task, *tensors in batches:
                ids, mask, types, labels = (t.to(ctx.device, non_blocking=True) for t in tensors)
                losses.append(model.loss(task, model(task, ids, mask, types), labels))
            loss = sum(losses)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    times = ctx.time_repeated(step)
    examples = len(TASKS) * args.batch
    return {"case": "train_step", "precision": args.precision, **shape_fields(name, shape, args, length), "tasks": len(TASKS),
            "examples_per_step": examples, "join_tasks": False,  # three forward passes, as a user writes them
            **timing_fields(ctx, times, examples, examples * length)}


def masked_positions(args, length):
    """15% of the [B, N] positions, the same draw as mtbert bench's (seeded)."""
    g = torch.Generator().manual_seed(1234)
    count = max(1, round(0.15 * args.batch * length))
    return torch.randperm(args.batch * length, generator=g)[:count]


def bench_mlm_step(ctx, name, shape, length):
    args = ctx.args
    model = BertForMaskedLMPeer(bert_config(shape, args)).to(ctx.device).train()
    optimizer = make_adamw(model, args.lr, args.weight_decay)
    ids, mask, types = random_batch(args, length, pair=False)
    labels = torch.full((args.batch * length,), -100, dtype=torch.long)
    positions = masked_positions(args, length)
    labels[positions] = ids.view(-1)[positions]
    labels = labels.view(args.batch, length)

    def step():
        with ctx.autocast():
            tensors = (t.to(ctx.device, non_blocking=True) for t in (ids, mask, types, labels))
            i, m, t, y = tensors
            loss = model.loss(model(i, m, t), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    times = ctx.time_repeated(step)
    return {"case": "mlm_step", "precision": args.precision, **shape_fields(name, shape, args, length),
            "masked": len(positions), **timing_fields(ctx, times, args.batch, args.batch * length)}


def read_sst_sentences(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    column = rows[0].index("sentence")
    return [row[column] for row in rows[1:] if row]


def bench_tokenizer(ctx):
    args = ctx.args
    data = os.path.join(args.data, "ids-sst-train.csv")
    vocab = os.path.join(args.data, "bert-base-uncased", "vocab.txt")
    if not (os.path.exists(data) and os.path.exists(vocab)):
        return {"case": "tokenizer", "skipped": f"needs {data} and {vocab}"}
    sentences = read_sst_sentences(data)
    tokenizer = ReferenceBertTokenizer(vocab, lower_case=True)
    counted = []

    def run():
        counted.append(sum(len(tokenizer.encode_for_model(s)[0]) for s in sentences))

    times, _, _ = ctx.time_repeated(run)
    median = statistics.median(times)
    return {"case": "tokenizer", "data": "ids-sst-train.csv", "sentences": len(sentences), "tokens": counted[-1],
            "steps": args.steps, "warmup": args.warmup, "median_ms": round(median, 3),
            "min_ms": round(min(times), 3), "sentences_per_s": round(len(sentences) / (median / 1e3), 1),
            "tokens_per_s": round(counted[-1] / (median / 1e3), 1)}


def main(argv):
    args = parse_args(argv)
    ctx = Context(args)
    torch.manual_seed(0)
    for case in args.case:
        if case == "tokenizer":
            lines = [bench_tokenizer(ctx)]
        else:
            fn = {"encoder_forward": bench_encoder_forward, "train_step": bench_train_step,
                  "mlm_step": bench_mlm_step}[case]
            lines = [fn(ctx, name, shape, n) for name, shape in models(args) for n in args.length]
        for line in lines:
            print(json.dumps({**line, **ctx.common()}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
