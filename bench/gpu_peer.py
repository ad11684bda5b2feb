#!/usr/bin/env python3
"""mtbert against HuggingFace's BertModel and DebertaV2Model on the same GPU,
in one process tree: the multi-task training step and encoder inference,
each against the peer as a careful user writes it, eager and under
torch.compile, with the model FLOP utilisation against the GPU's bf16 peak
measured in the same run.

  bench/gpu_peer.py --mtbert build-gpu/mtbert [--out peer.jsonl] [--deadline 300]
                    [--rounds 2] [--steps 20] [--warmup 5] [--size base|tiny]
                    [--case NAME ...] [--compile also|no|only]
                    [--mode default|reduce-overhead|max-autotune|max-autotune-no-cudagraphs ...]
                    [--compile-scope step|encoder]
                    [--device cuda]
  bench/gpu_peer.py --peer-only --device cpu --size tiny ...   (the peer alone: a dry run without mtbert)

The model is transformers' BertModel (SDPA attention, transformers' default)
or DebertaV2Model (deberta-v3-base's attention options, as `mtbert bench
--positions c2p|p2c` builds them: 256 log buckets over 512 positions, shared
keys, LayerNorm'd relative embeddings, no absolute positions), with the three
task heads of mtbert's bench step (CLS, dropout 0.3, one linear layer: SST-5
cross-entropy, Quora binary cross-entropy, STS-B mean squared error, the pairs
encoded jointly). Weights are random (the cost does not depend on them);
mtbert builds the same shapes with `mtbert bench`.

The training step, as a careful user writes it:

  step_loss = MultitaskStep(encoder, heads)      # forward(batches) -> the summed loss
  optimizer = AdamW(HF's no-decay groups, fused=True)
  for each step:
      batches -> the device (non_blocking, from pinned host memory, as a
                 DataLoader with pin_memory gives them)
      with torch.autocast(device, bfloat16):     # ONE region per step
          loss = step_loss(batches)              # the three tasks' forwards and losses, summed
      loss.backward()                            # ONE backward
      torch.nn.utils.clip_grad_norm_(parameters, 1.0)
      optimizer.step()
      optimizer.zero_grad(set_to_none=True)

AdamW is torch.optim.AdamW with fused=True (multi-tensor kernels that do the
whole update; CUDA, and the CPU from torch 2.4 on); where the device or torch
has no fused AdamW, foreach=True. Every line names the implementation it ran ("optimizer").
Clipping is clip_grad_norm_'s default (foreach where the device has it).

The peer variants (every line names its own in "peer"):
  hf-eager                    the step above, eager
  hf-compile                  torch.compile(step_loss) (mode "default")
  hf-compile-reduce-overhead  mode="reduce-overhead" (CUDA graphs through cudagraph trees;
                              torch.compiler.cudagraph_mark_step_begin() before each step)
  hf-compile-max-autotune     mode="max-autotune" (autotuned GEMMs, and CUDA graphs)
  hf-compile-max-autotune-no-cudagraphs
The extra modes run with --mode, after every case's default-mode one, where
the deadline leaves time (MIN_LEFT: a max-autotune compile of bert-base is
expected to take minutes).

What is compiled: the whole step's model, MultitaskStep (encoder, heads and
losses, its forward returning the summed loss), not the encoder alone. That
is what `torch.compile(model)` does for a model whose forward computes its
loss (HuggingFace's Trainer with torch_compile=True compiles the model with
its heads and loss), and what a user who writes the one-backward step above
compiles: the heads, the float32 casts and the losses fused with the
encoder's last kernels, no graph boundary between tasks (where the model
itself has no graph break) and one guard check a step instead of three. The
price is the compile's time: the graph holds the encoder once per task, so
Dynamo and Inductor trace and schedule about three times the encoder's graph
(kernels whose code comes out the same are compiled once); the compile's
time is reported apart ("compile_s": the first repetition). With
--compile-scope encoder a step compiles its encoder alone instead (in place:
one graph for the three calls, heads and losses eager; the peer is named
"hf-compile-encoder..."), a shorter compile where the deadline is near. The
optimizer step and clipping stay eager (fused AdamW and foreach clipping are
already a few multi-tensor kernel launches each). Inference compiles the
encoder (inference has no heads): torch.inference_mode() and the autocast
region around the compiled call. (On a CPU, torch 2.15 and transformers
5.24, torch._dynamo.explain finds one graph and no graph break in the tiny
BERT and DeBERTa step models.)

Each case alternates, round by round, one `mtbert bench` process and the
peer's repetitions: eager in this process; compiled in one child process per
case and mode (it compiles once, in its first round, and is killed with its
compile if the deadline passes), paced by this one so that it runs only
while mtbert does not. Every repetition is timed as `mtbert bench` times it:
synchronise, wall clock, synchronise; the peer's lines also carry CUDA-event
times. A case's line gives, for one peer variant, the medians over rounds and
the ratio peer / mtbert of those rounds (above 1: mtbert faster). A round
starts only if the deadline leaves time for one more like the last.

At the end, one "summary" line per case reads mtbert against the FASTEST peer
variant measured: "peer_variants" (every variant's median), "fastest_peer",
"fastest_peer_ms", "mtbert_ms" (the median of every mtbert round of the case),
"ratio_to_fastest" = fastest_peer_ms / mtbert_ms, and
"ratio_to_fastest_paired" (the fastest variant's own line: the mtbert rounds
that alternated with it). With --out, the summary also takes the variants of
the call before it in that file (its lines from the last "setup" line on, if
that call ran the same torch, transformers, device and size): check.sh's
peer-eager and peer-compile stages are two calls and the second's summary
covers both. The last summary line of a case is the one to read.

MFU = 6 x parameters x tokens / step time / peak (2 x for inference), the
parameters those of the peer's model and heads (the same shapes as mtbert's),
the peak an 8192^3 bf16 matrix product timed first.

On CUDA each round of a case also runs mtbert with its step (or its forward,
as an evaluation replays it) captured in CUDA graphs (`mtbert bench
--cuda-graphs`, train.cuda_graphs; --graphs no leaves it out): the case's
line then has "mtbert_graphs_ms" and
"ratio_graphs" (peer / mtbert with graphs), the summary "mtbert_graphs_ms"
and "ratio_graphs_to_fastest".

--deadline (seconds from the start) keeps the run inside a device call: a case
that would start after it is reported as skipped; compile cases run last.
--size tiny is for a dry run on a CPU (64 x 2 models, no peak measurement);
--peer-only runs the peer variants without mtbert (lines without ratios).
"""
import argparse
import json
import math
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
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
# The cases compiled, in the order they run (each mode in turn, "default" first).
COMPILE_CASES = ("bert_step_bf16", "deberta_step_bf16", "bert_forward_bf16_n128", "bert_forward_bf16_n512")
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
# Seconds that must be left for a variant's case to start. bert-base on an
# H200: an eager case takes seconds; the encoder alone compiled in 45 s
# (2026-11-27), the whole step is expected to take longer; max-autotune
# benchmarks every GEMM's candidates.
MIN_LEFT = {None: 20, "default": 100, "reduce-overhead": 120, "max-autotune": 300, "max-autotune-no-cudagraphs": 300}


def variant_name(mode, encoder_only=False):
    """The peer's name on its lines: hf-eager, hf-compile, hf-compile-<mode>;
    "hf-compile-encoder..." where a step compiled its encoder alone (--compile-scope encoder)."""
    if mode is None:
        return "hf-eager"
    return "hf-compile" + ("-encoder" if encoder_only else "") + ("" if mode == "default" else f"-{mode}")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mtbert", help="the mtbert executable (built against this torch, with CUDA)")
    p.add_argument("--peer-only", action="store_true",
                   help="run the peer variants alone, without mtbert (a dry run where no mtbert is built): "
                        "lines without ratios")
    p.add_argument("--device", default="cuda")
    p.add_argument("--size", choices=["base", "tiny"], default="base", help="the model of the non-small cases")
    p.add_argument("--case", action="append", choices=list(CASES), help="(repeatable; default: all)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--compile", choices=["also", "no", "only"], default="also",
                   help="the torch.compile cases (of COMPILE_CASES among the cases run): after the eager ones, none, "
                        "or only them")
    p.add_argument("--mode", action="append", choices=MODES,
                   help="torch.compile modes, in the order given (repeatable; default: default); every compile "
                        "case of one mode runs before the next mode's")
    p.add_argument("--compile-scope", choices=["step", "encoder"], default="step",
                   help="what a step's compiled peer compiles: the whole step's model (encoder, heads, losses), "
                        "or its encoder alone (a shorter compile; the peer's name says -encoder)")
    p.add_argument("--graphs", choices=["also", "no"], default="also",
                   help="on CUDA: also time mtbert with its step or forward in CUDA graphs (--cuda-graphs)")
    p.add_argument("--deadline", type=float, default=math.inf, help="seconds from the start; no case starts after")
    p.add_argument("--out", help="also append every JSON line to this file as it is printed")
    # One compiled peer in a child (run_compiled): its case and mode.
    p.add_argument("--worker", choices=list(CASES), help=argparse.SUPPRESS)
    p.add_argument("--worker-mode", choices=MODES, default="default", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.mode = args.mode or ["default"]
    if not args.worker and not args.mtbert and not args.peer_only:
        p.error("--mtbert is required (or --peer-only)")
    for name in ("rounds", "steps"):
        if getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    if args.warmup < 0:
        p.error("--warmup must be at least 0")
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


class MultitaskStep(nn.Module):
    """The whole step's model: the encoder ("bert.", so that make_adamw forms
    mtbert's four groups), the heads, and a forward that takes a batch of
    each task (in TASKS' order: ids, mask, token types, labels) and returns
    the sum of their losses. What torch.compile compiles."""

    def __init__(self, encoder, heads):
        super().__init__()
        self.bert = encoder
        self.heads = heads

    def forward(self, batches):
        total = None
        for (task, _), (ids, mask, types, labels) in zip(TASKS, batches):
            last = self.bert(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state
            loss = self.heads.loss(task, last, labels)
            total = loss if total is None else total + loss
        return total


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


def make_optimizer(model):
    """AdamW(fused=True) with HF's no-decay groups; foreach=True where this
    device or torch has no fused AdamW. Returns it and its name."""
    try:
        return make_adamw(model, lr=1e-5, weight_decay=0.01, fused=True), "AdamW(fused=True)"
    except (RuntimeError, TypeError):  # TypeError: a torch without fused=; RuntimeError: a device without it
        return make_adamw(model, lr=1e-5, weight_decay=0.01, foreach=True), "AdamW(foreach=True)"


def host_batch(batch, length, pair, device):
    """The CPU peer's random batch (ids above BERT's special ones, full mask,
    token types 0 then 1 for a pair), pinned for a GPU."""
    tensors = random_batch(SimpleNamespace(batch=batch, vocab_size=VOCAB), length, pair)
    return tuple(t.pin_memory() for t in tensors) if device.type == "cuda" else tensors


def labels_for(task, batch, device):
    labels = task_labels(task, batch)
    return labels.pin_memory() if device.type == "cuda" else labels


class Peer:
    """One case's model, optimizer and batches for one variant (mode None:
    eager; else torch.compile's mode), and the function one repetition runs."""

    def __init__(self, args, name, mode=None):
        kind, model, positions, precision, length, batch = CASES[name]
        self.device = torch.device(args.device)
        tokens = (len(TASKS) if kind == "step" else 1) * batch * length
        torch.manual_seed(0)
        shape = shape_of(args, model)
        encoder = make_encoder(shape, positions).to(self.device)
        heads = Heads(shape["hidden"]).to(self.device)
        params = sum(p.numel() for p in encoder.parameters()) + \
            (sum(p.numel() for p in heads.parameters()) if kind == "step" else 0)
        encoder_only = kind == "step" and args.compile_scope == "encoder"
        self.fields = {"peer": variant_name(mode, encoder_only),
                       "attention": getattr(encoder.config, "_attn_implementation", None),
                       "params": params, "tokens": tokens}
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision == "tf32"
        options = {} if mode == "default" else {"mode": mode}
        compile_ = (lambda m: m) if mode is None else (lambda m: torch.compile(m, **options))
        # cudagraph trees (reduce-overhead, max-autotune on CUDA) are told where each step begins.
        mark_step = torch.compiler.cudagraph_mark_step_begin if mode in ("reduce-overhead", "max-autotune") \
            else (lambda: None)
        autocast = lambda: torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=precision == "bf16")
        to = lambda t: t.to(self.device, non_blocking=True)
        if kind == "forward":
            encoder.eval()
            run = compile_(encoder)
            self.fields["compiled"] = None if mode is None else "encoder"
            ids, mask, types = host_batch(batch, length, False, self.device)

            def forward():
                mark_step()
                with torch.inference_mode(), autocast():
                    run(input_ids=to(ids), attention_mask=to(mask), token_type_ids=to(types))
            self.repetition = forward
            return
        model = MultitaskStep(encoder, heads).train()
        optimizer, self.fields["optimizer"] = make_optimizer(model)
        if encoder_only and mode is not None:  # the encoder's calls compiled in place, heads and losses eager
            model.bert.compile(**options)
            run = model
        else:
            run = compile_(model)
        self.fields["compiled"] = None if mode is None else \
            ("encoder (heads and losses eager)" if encoder_only else "step: encoder, heads and losses")
        batches = [(*host_batch(batch, length, task != "sst", self.device), labels_for(task, batch, self.device))
                   for task, _ in TASKS]
        parameters = list(model.parameters())

        def step():
            mark_step()
            on_device = [tuple(to(t) for t in tensors) for tensors in batches]
            with autocast():  # one region: the three tasks' forwards and losses
                loss = run(on_device)
            loss.backward()  # one backward, of the summed loss
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
        line = {**self.fields, "median_ms": round(statistics.median(wall), 3), "min_ms": round(min(wall), 3),
                "median_cpu_ms": round(statistics.median(cpu), 3), "first_ms": round(first, 1)}
        if cuda:
            line["median_event_ms"] = round(statistics.median(events), 3)
            line["peak_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
        return line


def mtbert_command(args, name, graphs=False):
    kind, model, positions, precision, length, batch = CASES[name]
    shape = shape_of(args, model)
    cmd = [args.mtbert, "bench", "--device", args.device, "--case", "train_step" if kind == "step" else "encoder_forward",
           "--layers", str(shape["layers"]), "--hidden", str(shape["hidden"]), "--heads", str(shape["heads"]),
           "--intermediate", str(shape["intermediate"]), "--length", str(length), "--batch", str(batch),
           "--steps", str(args.steps), "--warmup", str(args.warmup), "--positions", positions,
           "--precision", "bf16" if precision == "bf16" else "fp32"]
    return cmd + (["--tf32"] if precision == "tf32" else []) + (["--cuda-graphs"] if graphs else [])


def with_graphs(args):
    """Whether a round of the case also times mtbert's step (or forward) in CUDA graphs."""
    return args.graphs == "also" and args.device.startswith("cuda")


def run_mtbert(args, name, timeout, graphs=False):
    cmd = mtbert_command(args, name, graphs)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    lines = [l for l in done.stdout.splitlines() if l.startswith('{"')]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
    line = json.loads(lines[-1])
    return {k: line[k] for k in ("median_ms", "min_ms", "median_cpu_ms") if k in line}


class CompiledPeer:
    """A compiled peer in a child process: it builds its model, says it is
    ready, then measures once (warm-up and timed repetitions, as the eager
    peer) for every line this process writes to it; the first measurement
    compiles. A child that overruns is killed with its compile."""

    def __init__(self, args, name, mode, timeout):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, "--worker-mode", mode,
               "--device", args.device, "--size", args.size, "--compile-scope", args.compile_scope,
               "--steps", str(args.steps), "--warmup", str(args.warmup)]
        self.what = f"torch.compile (mode {mode}) worker for {name}"
        self.stderr = tempfile.TemporaryFile(mode="w+")  # a file: a compile's warnings cannot fill a pipe
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                     text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        try:
            self._next(timeout)  # {"ready": true}
        except BaseException:
            self.close()
            raise

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.lines.put(line)
        self.lines.put(None)

    def _next(self, timeout):
        """The child's next line, within timeout seconds (None: no limit)."""
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self.proc.kill()
            raise RuntimeError(f"{self.what}: no answer in {timeout:.0f} s (killed)") from None
        if line is None:
            self.proc.wait()
            self.stderr.seek(0)
            raise RuntimeError(f"{self.what}: exit {self.proc.returncode}: {self.stderr.read().strip()[-800:]}")
        return json.loads(line)

    def measure(self, timeout):
        self.proc.stdin.write("measure\n")
        self.proc.stdin.flush()
        return self._next(timeout)

    def close(self):
        """Ends the child: EOF on its stdin, killed if it has not exited 30 s later."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


def worker(args):
    """The child of CompiledPeer."""
    peer = Peer(args, args.worker, mode=args.worker_mode)
    print(json.dumps({"ready": True}), flush=True)
    for _ in sys.stdin:
        print(json.dumps(peer.measure(args)), flush=True)
    return 0


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


def mfu(kind, params, tokens, ms, peak):
    return round((6 if kind == "step" else 2) * params * tokens / (ms / 1e3) / (peak * 1e12), 4)


def previous_call(path, header):
    """The case lines of the call before this one in --out: those after its
    last setup line, if that call ran the same torch, transformers, device and size."""
    if not path or not os.path.exists(path):
        return []
    with open(path) as f:
        lines = [json.loads(l) for l in f if l.startswith("{")]
    setups = [i for i, l in enumerate(lines) if l.get("case") == "setup"]
    if not setups:
        return []
    setup = lines[setups[-1]]
    if any(setup.get(k) != header.get(k) for k in ("torch", "transformers", "device", "size")):
        return []
    return [l for l in lines[setups[-1] + 1:] if l.get("case") in CASES and "peer_ms" in l and not l.get("summary")]


def summaries(lines, peak):
    """One line per case: mtbert against the fastest peer variant measured."""
    for name in CASES:
        measured = [l for l in lines if l.get("case") == name and "peer_ms" in l]
        if not measured:
            continue
        variants = {}
        for l in measured:  # a variant measured twice (two calls): its later line
            variants[l["peer"]] = l
        fastest = min(variants.values(), key=lambda l: l["peer_ms"])
        kind = CASES[name][0]
        line = {"case": name, "summary": True, "peer_variants": {v: l["peer_ms"] for v, l in variants.items()},
                "fastest_peer": fastest["peer"], "fastest_peer_ms": fastest["peer_ms"]}
        ours = [r["mtbert"]["median_ms"] for l in variants.values() for r in l.get("rounds", []) if "mtbert" in r]
        if ours:
            m = statistics.median(ours)
            line.update(mtbert_ms=round(m, 3), mtbert_rounds=len(ours),
                        ratio_to_fastest=round(fastest["peer_ms"] / m, 3),
                        ratio_to_fastest_paired=fastest.get("ratio"))
            if peak:
                line["mtbert_mfu"] = mfu(kind, fastest["params"], fastest["tokens"], m, peak)
        graphs = [r["mtbert_graphs"]["median_ms"] for l in variants.values() for r in l.get("rounds", [])
                  if "mtbert_graphs" in r]
        if graphs:
            g = statistics.median(graphs)
            line.update(mtbert_graphs_ms=round(g, 3), ratio_graphs_to_fastest=round(fastest["peer_ms"] / g, 3))
            if peak:
                line["mtbert_graphs_mfu"] = mfu(kind, fastest["params"], fastest["tokens"], g, peak)
        if peak:
            line["fastest_peer_mfu"] = mfu(kind, fastest["params"], fastest["tokens"], fastest["peer_ms"], peak)
        yield line


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    started = time.monotonic()
    left = lambda: args.deadline - (time.monotonic() - started)
    # A child's or mtbert's time limit: what is left (at least 10 s), or none without --deadline.
    limit = lambda: None if math.isinf(args.deadline) else max(left(), 10)

    import transformers
    device = torch.device(args.device)
    header = {"torch": torch.__version__, "transformers": transformers.__version__, "device": str(device),
              "size": args.size, "rounds": args.rounds, "steps": args.steps, "warmup": args.warmup,
              "modes": args.mode, "peer_only": args.peer_only}
    if device.type == "cuda":
        header.update(gpu=torch.cuda.get_device_name(), bf16_peak_tflops=round(bf16_peak(device), 1))
    earlier = previous_call(args.out, header)
    out = open(args.out, "a") if args.out else None
    emitted = []

    def emit(line):
        emitted.append(line)
        print(json.dumps(line), flush=True)
        if out:
            out.write(json.dumps(line) + "\n")
            out.flush()

    emit({"case": "setup", **header})
    peak = header.get("bf16_peak_tflops")
    failures = 0
    names = args.case or list(CASES)
    plan = ([] if args.compile == "only" else [(n, None) for n in names]) + \
        ([] if args.compile == "no" else [(n, mode) for mode in args.mode for n in COMPILE_CASES if n in names])
    for name, mode in plan:
        kind, model, positions, precision, length, batch = CASES[name]
        peer_name = variant_name(mode, kind == "step" and args.compile_scope == "encoder")
        line = {"case": name, "peer": peer_name, "kind": kind, "model": model if model == "small" else args.size,
                "positions": positions, "precision": precision, "length": length, "batch": batch}
        if left() < MIN_LEFT[mode]:
            emit({**line, "skipped": "past the deadline"})
            continue
        peer = None
        try:
            peer = Peer(args, name) if mode is None else CompiledPeer(args, name, mode, timeout=limit())
            mtbert_ms, graphs_ms, peer_ms, rounds, round_s = [], [], [], [], 0.0
            for r in range(args.rounds):
                if r and left() < 1.5 * round_s:
                    line["rounds_cut"] = f"{r} of {args.rounds}: the deadline"
                    break
                round_start = time.monotonic()
                this = {}
                if not args.peer_only:
                    try:
                        this["mtbert"] = run_mtbert(args, name, timeout=limit())
                    except (RuntimeError, subprocess.TimeoutExpired):
                        failures += 1  # mtbert's own failure: the stage fails
                        raise
                    mtbert_ms.append(this["mtbert"]["median_ms"])
                    if with_graphs(args):
                        try:
                            this["mtbert_graphs"] = run_mtbert(args, name, timeout=limit(), graphs=True)
                        except (RuntimeError, subprocess.TimeoutExpired):
                            failures += 1
                            raise
                        graphs_ms.append(this["mtbert_graphs"]["median_ms"])
                this["peer"] = peer.measure(args) if mode is None else peer.measure(timeout=limit())
                peer_ms.append(this["peer"]["median_ms"])
                rounds.append(this)
                # A round's time to come, without the first round's compile.
                round_s = time.monotonic() - round_start - \
                    (this["peer"]["first_ms"] / 1e3 if r == 0 and mode is not None else 0)
            theirs = rounds[0]["peer"]
            p = statistics.median(peer_ms)
            line.update({k: theirs[k] for k in ("attention", "optimizer", "compiled") if k in theirs})
            if mode is not None:
                line["compile_s"] = round(theirs["first_ms"] / 1e3, 1)  # the first repetition: compile and run
            line.update(peer_ms=round(p, 3), params=theirs["params"], tokens=theirs["tokens"])
            if mtbert_ms:
                m = statistics.median(mtbert_ms)
                line.update(mtbert_ms=round(m, 3), ratio=round(p / m, 3),
                            mtbert_tokens_per_s=round(theirs["tokens"] / m * 1e3))
                if peak:
                    line["mtbert_mfu"] = mfu(kind, theirs["params"], theirs["tokens"], m, peak)
            if graphs_ms:
                g = statistics.median(graphs_ms)
                line.update(mtbert_graphs_ms=round(g, 3), ratio_graphs=round(p / g, 3))
                if peak:
                    line["mtbert_graphs_mfu"] = mfu(kind, theirs["params"], theirs["tokens"], g, peak)
            if peak:
                line["peer_mfu"] = mfu(kind, theirs["params"], theirs["tokens"], p, peak)
            line["rounds"] = rounds
        except Exception as e:  # noqa: BLE001 -- one case's failure is its line's, the next case still runs
            # The peer's failures (a transformers model that does not compile,
            # out of memory) are reported on their line, not counted as mtbert's.
            line["error"] = f"{type(e).__name__}: {' | '.join(str(e).splitlines())}"[:1000]
        finally:
            if isinstance(peer, CompiledPeer):
                peer.close()
            peer = None
        if device.type == "cuda":
            torch.cuda.empty_cache()
        emit(line)
    for summary in summaries(earlier + emitted, peak):
        emit(summary)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
