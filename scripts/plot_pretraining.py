#!/usr/bin/env python3
"""Draws the curves of masked-language-model pretraining runs, as one PNG.

    plot_pretraining.py RUN_DIR [RUN_DIR ...] [--out FILE]

Each RUN_DIR is a folder written by `mtbert pretrain` (its metrics.jsonl: one
row per held-out evaluation, with the training loss of the interval). The
figure (default RUN_DIR/figures/pretraining-curves.png of the first run) has
three panels against the optimizer step, one line per run: the training MLM
loss, the held-out MLM accuracy (the masked tokens predicted right), and the
held-out perplexity (exp of the held-out loss, log scale). Runs are labeled
by their summary.json name, else their folder's name.

The PNG is written under a temporary name and renamed into place. A folder
that is not a pretraining run, or a malformed metrics.jsonl, is one line on
stderr, `plot_pretraining: error: ...`, naming the file, and exit code 2.
"""
import json
import sys
from pathlib import Path

from mtbert_py.common import ArgumentParser, UserError, one_line, read_json, run_main
from mtbert_py.figures import plain, plt, save_png

PROG = "plot_pretraining"


def parse_args(argv):
    parser = ArgumentParser(prog=PROG, description="Curves of mtbert pretraining runs.")
    parser.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    parser.add_argument("--out", type=Path, help="the PNG (default: the first run's figures/pretraining-curves.png)")
    return parser.parse_args(argv)


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _read_rows(path):
    """(step, train loss or None, held-out {loss, accuracy, perplexity} or None)
    per row. A last line without its newline that does not parse was torn by a
    crash and is dropped, as mtbert itself does."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except FileNotFoundError:
        raise UserError(f"{path} does not exist (no evaluation yet?)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read {path}: {one_line(e)}") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            if number == len(lines):
                break
            raise UserError(f"{where}: not valid JSON: {e.msg}") from None
        if not isinstance(row, dict) or not isinstance(row.get("step"), int):
            raise UserError(f"{where}: not an object with an integer `step`")
        train = row.get("train_loss", {}).get("mlm") if isinstance(row.get("train_loss"), dict) else None
        dev = row.get("dev", {}).get("mlm") if isinstance(row.get("dev"), dict) else None
        if train is not None and not _number(train):
            raise UserError(f"{where}: train_loss.mlm is not a number")
        if dev is not None and not (isinstance(dev, dict) and
                                    all(_number(dev.get(k)) for k in ("loss", "accuracy", "perplexity"))):
            raise UserError(f"{where}: dev.mlm has no numeric loss, accuracy and perplexity")
        rows.append((row["step"], train, dev))
    return rows


class PretrainingRun:
    def __init__(self, root):
        self.root = Path(root)
        if not self.root.is_dir():
            raise UserError(f"{self.root} is not a folder")
        summary_path = self.root / "summary.json"
        summary = {}
        if summary_path.exists():
            summary = read_json(summary_path)
            if not isinstance(summary, dict):
                raise UserError(f"{summary_path}: not a JSON object")
            if summary.get("kind", "pretrain") != "pretrain":
                raise UserError(f"{self.root} is a `{summary['kind']}` run, not a pretraining run ({summary_path})")
        self.name = summary.get("name") if isinstance(summary.get("name"), str) else self.root.resolve().name
        self.status = summary.get("status")
        self.rows = _read_rows(self.root / "metrics.jsonl")
        if not any(dev for _, _, dev in self.rows):
            raise UserError(f"{self.root / 'metrics.jsonl'}: no held-out MLM evaluation (dev.mlm) yet")


def plot_pretraining_curves(runs):
    fig, (ax_train, ax_accuracy, ax_perplexity) = plt.subplots(1, 3, figsize=(15, 4.6))
    for i, run in enumerate(runs):
        label = plain(run.name + (f" ({run.status})" if run.status and run.status != "finished" else ""))
        style = {"color": f"C{i % 10}", "lw": 1.6}
        train = [(step, loss) for step, loss, _ in run.rows if loss is not None]
        dev = [(step, d) for step, _, d in run.rows if d is not None]
        if train:
            ax_train.plot(*zip(*train), label=label, **style)
        ax_accuracy.plot([s for s, _ in dev], [d["accuracy"] for _, d in dev], marker="o", ms=3, label=label, **style)
        ax_perplexity.plot([s for s, _ in dev], [d["perplexity"] for _, d in dev], marker="o", ms=3, label=label,
                           **style)
        last_step, last = dev[-1]
        ax_accuracy.annotate(f"{last['accuracy']:.3f}", (last_step, last["accuracy"]), textcoords="offset points",
                             xytext=(4, 4), fontsize="small", color=style["color"])
        ax_perplexity.annotate(f"{last['perplexity']:.1f}", (last_step, last["perplexity"]),
                               textcoords="offset points", xytext=(4, 4), fontsize="small", color=style["color"])
    ax_train.set(title="Training MLM loss (mean over each interval)", xlabel="optimizer step", ylabel="loss")
    ax_accuracy.set(title="Held-out MLM accuracy (masked tokens)", xlabel="optimizer step", ylabel="accuracy")
    ax_perplexity.set(title="Held-out perplexity", xlabel="optimizer step", ylabel="exp(loss)", yscale="log")
    for ax in (ax_train, ax_accuracy, ax_perplexity):
        ax.grid(alpha=0.3, which="both")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    fig.suptitle("Masked-language-model pretraining")
    fig.tight_layout()
    return fig


def draw(argv):
    args = parse_args(argv)
    runs = [PretrainingRun(path) for path in args.runs]
    out = args.out if args.out is not None else runs[0].root / "figures" / "pretraining-curves.png"
    print(f"pretraining curves: {save_png(plot_pretraining_curves(runs), out)}")


def main(argv=None):
    return run_main(PROG, lambda: draw(argv))


if __name__ == "__main__":
    sys.exit(main())
