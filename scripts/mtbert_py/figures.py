"""The figures of plot_run.py: training curves of a run (or of several,
overlaid), a task's dev predictions against its gold labels, and heatmaps of
attention probabilities.

matplotlib is set up for files only (the Agg backend, no display needed), and
PNGs are written atomically: under a temporary name beside the target, then
renamed over it, so that a reader never sees half a figure.
"""
import math
import os
import re
import textwrap
import warnings
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np

from .common import UserError, one_line

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


# --- Figure files ------------------------------------------------------------


DPI = 120

# Tokens and texts may hold characters DejaVu Sans lacks; matplotlib draws a
# box for them, and its warning about each would drown the script's output.
warnings.filterwarnings("ignore", message="Glyph .* missing from")


def plain(text):
    """Text shown as is: matplotlib reads a pair of `$` as mathtext."""
    return str(text).replace("$", r"\$")


def save_png(fig, path):
    """Writes fig to path (creating its folder) and closes it."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            fig.savefig(tmp, format="png", dpi=DPI)
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
    except OSError as e:
        raise UserError(f"cannot write {path}: {one_line(e)}") from None
    finally:
        plt.close(fig)
    return path


# --- Training curves ---------------------------------------------------------
# Of runs (metrics.jsonl): the training loss of each task and the dev metrics of
# each task and overall against the optimizer step, with the best evaluation
# marked; and the same curves of several runs overlaid.


OVERALL_COLOR = "black"


def _series(rows, pick):
    """(steps, values) of the rows where pick(row) is not None."""
    points = [(row["step"], pick(row)) for row in rows]
    points = [(s, v) for s, v in points if v is not None]
    return [s for s, _ in points], [v for _, v in points]


def _train_loss(task):
    return lambda row: row["train_loss"].get(task)


def _dev_value(task):
    return lambda row: row["dev"][task]["value"] if task in row["dev"] else None


def _overall(row):
    return row.get("overall")


def _dev_metric_name(rows, task):
    for row in rows:
        if task in row["dev"]:
            return row["dev"][task]["metric"]
    return None


def _marker(n_points):
    # Points stay visible on short runs; long ones draw plain lines.
    return "o" if n_points <= 40 else None


def _empty_note(ax, text):
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")


def plot_training_curves(run):
    """The figure of one run: train loss per task | dev metrics per task and overall."""
    rows, tasks = run.metrics, run.task_names()
    colors = {task: f"C{i % 10}" for i, task in enumerate(tasks)}
    fig, (ax_loss, ax_dev) = plt.subplots(1, 2, figsize=(13, 4.8))
    for task in tasks:
        steps, values = _series(rows, _train_loss(task))
        if steps:
            ax_loss.plot(steps, values, color=colors[task], marker=_marker(len(steps)), ms=3, label=plain(task))
        steps, values = _series(rows, _dev_value(task))
        if steps:
            ax_dev.plot(steps, values, color=colors[task], marker=_marker(len(steps)), ms=3,
                        label=plain(f"{task} ({_dev_metric_name(rows, task)})"))
    steps, values = _series(rows, _overall)
    if steps:
        ax_dev.plot(steps, values, color=OVERALL_COLOR, lw=2, marker=_marker(len(steps)), ms=3, label="overall")
    best = run.best_step()
    if best is not None:
        for ax in (ax_loss, ax_dev):
            ax.axvline(best, color="0.5", ls=":", lw=1.2, label=f"best dev (step {best})")
        best_row = next((row for row in rows if row["step"] == best and "overall" in row), None)
        if best_row is not None:
            ax_dev.plot([best], [best_row["overall"]], marker="*", ms=14, color="gold", mec=OVERALL_COLOR,
                        ls="none", zorder=5, label=f"best overall {best_row['overall']:.3f}")
    ax_loss.set(title="Training loss (mean over each evaluation interval)", xlabel="optimizer step", ylabel="loss")
    ax_dev.set(title="Dev metrics", xlabel="optimizer step", ylabel="accuracy / Pearson r / overall")
    if not any(row["train_loss"] for row in rows):
        _empty_note(ax_loss, "no training loss recorded")
    if not any(row["dev"] for row in rows):
        _empty_note(ax_dev, "no labeled dev data")
    for ax in (ax_loss, ax_dev):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    status = run.summary.get("status")
    fig.suptitle(plain(f"{run.name}: training curves" + (f" ({status})" if status and status != "finished" else "")))
    fig.tight_layout()
    return fig


def plot_curves_comparison(runs, labels):
    """Several runs overlaid: top row the overall dev score and each task's dev
    metric, bottom row each task's training loss; one color per run."""
    tasks = []
    for run in runs:
        tasks += [t for t in run.task_names() if t not in tasks]
    columns = len(tasks) + 1
    fig, axes = plt.subplots(2, columns, figsize=(4.2 * columns, 7.5), squeeze=False)
    for i, (run, label) in enumerate(zip(runs, labels)):
        style = {"color": f"C{i % 10}", "ls": ("-", "--", ":", "-.")[i // 10 % 4], "ms": 3}
        steps, values = _series(run.metrics, _overall)
        if steps:
            axes[0, 0].plot(steps, values, marker=_marker(len(steps)), label=plain(label), **style)
        best = run.best_step()
        best_row = next((row for row in run.metrics if row["step"] == best and "overall" in row), None)
        if best_row is not None:
            axes[0, 0].plot([best], [best_row["overall"]], marker="*", ms=13, color=style["color"],
                            mec="black", ls="none", zorder=5)
        for j, task in enumerate(tasks, start=1):
            steps, values = _series(run.metrics, _dev_value(task))
            if steps:
                axes[0, j].plot(steps, values, marker=_marker(len(steps)), label=plain(label), **style)
            steps, values = _series(run.metrics, _train_loss(task))
            if steps:
                axes[1, j].plot(steps, values, marker=_marker(len(steps)), label=plain(label), **style)
    axes[0, 0].set(title="Dev overall (star: best)", xlabel="optimizer step", ylabel="overall")
    for j, task in enumerate(tasks, start=1):
        metric = next((m for m in (_dev_metric_name(r.metrics, task) for r in runs) if m), "metric")
        axes[0, j].set(title=plain(f"Dev {task}"), xlabel="optimizer step", ylabel=metric)
        axes[1, j].set(title=plain(f"Training loss {task}"), xlabel="optimizer step", ylabel="loss")
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    # The bottom-left cell holds the legend: one entry per run.
    handles, names = [], []
    for ax in axes.flat:
        for handle, name in zip(*ax.get_legend_handles_labels()):
            if name not in names:
                handles.append(handle)
                names.append(name)
    axes[1, 0].axis("off")
    if handles:
        axes[1, 0].legend(handles, names, loc="center", fontsize="small", title="runs")
    fig.suptitle("Training curves compared")
    fig.tight_layout()
    return fig


# --- Dev predictions ---------------------------------------------------------
# A task's dev predictions against its gold labels: the confusion matrix of a
# binary task (Quora paraphrase), true vs predicted label counts of a
# classification task (SST-5) and true vs predicted scores of a regression task
# (STS-B).


def confusion_matrix(gold, predicted, num_classes):
    """counts[g, p]: the examples of gold class g predicted as class p. Labels
    are rounded to the nearest integer (prediction files spell Quora's classes
    "0.0" / "1.0"); one outside 0..num_classes-1 is a ValueError."""
    gold = np.rint(np.asarray(gold, dtype=np.float64)).astype(np.int64)
    predicted = np.rint(np.asarray(predicted, dtype=np.float64)).astype(np.int64)
    if gold.shape != predicted.shape:
        raise ValueError(f"{gold.size} gold labels for {predicted.size} predictions")
    for name, labels in (("gold label", gold), ("prediction", predicted)):
        bad = labels[(labels < 0) | (labels >= num_classes)]
        if bad.size:
            raise ValueError(f"{name} {bad[0]} is not a class index 0..{num_classes - 1}")
    counts = np.zeros((num_classes, num_classes), dtype=np.int64)
    np.add.at(counts, (gold, predicted), 1)
    return counts


GOLD_COLOR, PREDICTED_COLOR = "C0", "C1"


def _title(outcome, what, run_name):
    return plain(f"{run_name}: {outcome.task.name} dev, {what}")


def _class_ticks(class_names):
    return [f"{i}\n{name}" for i, name in enumerate(class_names)]


def plot_confusion(outcome, run_name):
    names = outcome.task.type.class_names
    counts = confusion_matrix(outcome.gold, outcome.predicted, len(names))
    total = counts.sum()
    fig, ax = plt.subplots(figsize=(5.6, 4.8))
    image = ax.imshow(counts, cmap="Blues", vmin=0)
    # Row shares: how each gold class is predicted.
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    for g in range(len(names)):
        for p in range(len(names)):
            dark = counts[g, p] > counts.max() / 2
            ax.text(p, g, f"{counts[g, p]}\n({shares[g, p]:.1%} of row)", ha="center", va="center",
                    color="white" if dark else "black", fontsize=10)
    ax.set_xticks(range(len(names)), _class_ticks(names))
    ax.set_yticks(range(len(names)), _class_ticks(names))
    ax.set(xlabel="predicted", ylabel="gold")
    accuracy = np.trace(counts) / total
    # A figure title, not an axes title: centred over the matrix and its
    # colorbar together, so a long run name does not run into the colorbar.
    fig.colorbar(image, ax=ax, label="examples")
    fig.suptitle(_title(outcome, f"confusion matrix\naccuracy {accuracy:.3f}, n = {total}", run_name))
    fig.tight_layout()
    return fig


def plot_class_histogram(outcome, run_name):
    names = outcome.task.type.class_names
    k = len(names)
    counts = confusion_matrix(outcome.gold, outcome.predicted, k)
    gold, predicted = counts.sum(axis=1), counts.sum(axis=0)
    x = np.arange(k)
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    width = 0.4
    bars = [ax.bar(x - width / 2, gold, width, color=GOLD_COLOR, label="true"),
            ax.bar(x + width / 2, predicted, width, color=PREDICTED_COLOR, label="predicted")]
    for group in bars:
        ax.bar_label(group, fontsize=8, padding=2)
    ax.set_xticks(x, _class_ticks(names))
    ax.set(xlabel="class", ylabel="examples")
    ax.margins(y=0.12)
    accuracy = np.trace(counts) / counts.sum()
    ax.set_title(_title(outcome, f"true vs predicted labels\naccuracy {accuracy:.3f}, n = {len(outcome.gold)}",
                        run_name))
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def plot_score_histogram(outcome, run_name):
    low, high = outcome.task.type.score_range
    gold, predicted = outcome.gold, outcome.predicted
    # Predictions of a regression head may fall outside the label range: widen it to show them.
    edges = np.arange(np.floor(min(low, predicted.min()) * 4) / 4, np.ceil(max(high, predicted.max()) * 4) / 4 + 0.25,
                      0.25)
    fig, (ax_hist, ax_scatter) = plt.subplots(1, 2, figsize=(12, 4.8))
    ax_hist.hist(gold, bins=edges, color=GOLD_COLOR, alpha=0.55, label="true")
    ax_hist.hist(predicted, bins=edges, color=PREDICTED_COLOR, alpha=0.55, label="predicted")
    ax_hist.set(title="Score distribution (bins of 0.25)", xlabel="similarity score", ylabel="examples")
    ax_hist.legend()
    ax_hist.grid(axis="y", alpha=0.3)
    dot = max(6.0, min(30.0, 3000.0 / len(gold)))  # fewer points, bigger dots
    ax_scatter.scatter(gold, predicted, s=dot, alpha=0.5, color=PREDICTED_COLOR, edgecolors="none")
    ax_scatter.plot([edges[0], edges[-1]], [edges[0], edges[-1]], color="0.4", ls="--", lw=1, label="predicted = true")
    ax_scatter.set(title="Predicted vs true", xlabel="true score", ylabel="predicted score",
                   xlim=(edges[0], edges[-1]), ylim=(edges[0], edges[-1]), aspect="equal")
    ax_scatter.legend(loc="upper left")
    ax_scatter.grid(alpha=0.3)
    r = np.corrcoef(gold, predicted)[0, 1] if np.std(gold) > 0 and np.std(predicted) > 0 else float("nan")
    fig.suptitle(_title(outcome, f"true vs predicted scores (Pearson r {r:.3f}, n = {len(gold)})", run_name))
    fig.tight_layout()
    return fig


# --- Attention grids ---------------------------------------------------------
# Which layers and heads an attention figure shows: a grid spec `LAYERS:HEADS`,
# each side `all` or a comma list of indices, ranges `a-b` and (layers) names
# such as `emd.0`.


@dataclass(frozen=True)
class Grid:
    spec: str
    layers: tuple  # indices into AttentionMaps.layers: the figure's rows
    heads: tuple   # head indices: its columns

    @property
    def tag(self):
        """The spec as a file-name part: `0-3:all` -> `L0-3_Hall`."""
        layers, heads = self.spec.split(":")
        return re.sub(r"[^A-Za-z0-9._+-]", "-", f"L{layers}_H{heads}".replace(",", "+"))


def _indices(part, count, names, what, spec, path):
    if part == "all":
        return tuple(range(count))
    result = []
    for item in part.split(","):
        item = item.strip()
        if item in names:
            result.append(names.index(item))
            continue
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", item)
        if not match:
            raise UserError(f"--grid {spec!r}: {item!r} is not a {what} index, range a-b" +
                            (f" or name ({', '.join(names)})" if names else ""))
        first, last = int(match[1]), int(match[2] or match[1])
        if first > last or last >= count:
            raise UserError(f"--grid {spec!r}: {what} {item} is outside 0..{count - 1}, the {what}s of {path}")
        result += range(first, last + 1)
    return tuple(result)


def parse_grid(spec, maps):
    """The Grid of `spec` over `maps`; UserError when it does not fit them."""
    parts = [part.strip() for part in spec.split(":")]
    if len(parts) != 2 or not all(parts):
        raise UserError(f"--grid {spec!r} is not LAYERS:HEADS (e.g. 11:all, 0-3:0,5, emd.0:all)")
    layers, heads = parts
    return Grid(f"{layers}:{heads}",
                _indices(layers, len(maps.layers), maps.layers, "layer", spec, maps.path),
                _indices(heads, maps.attentions.shape[1], [], "head", spec, maps.path))


def default_grids(maps):
    """One figure per layer, with all its heads."""
    return [parse_grid(f"{i}:all", maps) for i in range(len(maps.layers))]


# --- Attention heatmaps ------------------------------------------------------
# One figure per grid of layers and heads, query tokens down, key tokens across,
# one color scale shared by the figure's panels.


MAX_FIGURE_INCHES = 36


def _shorten(text, limit=70):
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _layout(grid):
    """(rows, columns) of panels: layers x heads when both vary, else the
    panels wrapped into a near-square block."""
    if len(grid.layers) > 1 and len(grid.heads) > 1:
        return len(grid.layers), len(grid.heads)
    n = len(grid.layers) * len(grid.heads)
    columns = math.ceil(math.sqrt(n))
    return math.ceil(n / columns), columns


def plot_attention_grid(maps, grid):
    n = len(maps.tokens)
    panels = [(layer, head) for layer in grid.layers for head in grid.heads]
    rows, columns = _layout(grid)
    # Panels grow with the tokens so that their labels stay legible, within a
    # figure a screen or a page can still take.
    cell = min(max(2.8, 0.15 * n + 1.2), MAX_FIGURE_INCHES / max(rows, columns))
    fig, axes = plt.subplots(rows, columns, figsize=(columns * cell + 1.2, rows * cell + 0.9), squeeze=False,
                             layout="constrained")
    labels = [plain(token) for token in maps.tokens]
    font = min(9.0, max(3.0, 0.5 * (cell - 0.8) * 72 / n))  # half the space of a token, in points
    vmax = max(float(maps.attentions[layer, head].max()) for layer, head in panels)
    image = None
    for index, ax in enumerate(axes.flat):
        if index >= len(panels):
            ax.axis("off")
            continue
        layer, head = panels[index]
        image = ax.imshow(maps.attentions[layer, head], cmap="viridis", vmin=0.0, vmax=vmax, interpolation="nearest")
        ax.set_title(plain(f"{maps.layers[layer]}, head {head}"), fontsize=10)
        row, column = divmod(index, columns)
        ax.set_yticks(range(n), labels if column == 0 else [], fontsize=font)
        # Token labels under the lowest panel of each column.
        lowest = index + columns >= len(panels)
        ax.set_xticks(range(n), labels if lowest else [], fontsize=font, rotation=90)
        if column == 0:
            ax.set_ylabel("query token")
        if lowest:
            ax.set_xlabel("key token")
    fig.colorbar(image, ax=axes, shrink=min(1.0, 0.5 + 0.25 * rows), label="attention probability")
    text = repr(_shorten(maps.text)) + ("" if maps.text2 is None else f" / {_shorten(str(maps.text2))!r}")
    # Wrapped to the figure's width (about 9 title characters an inch): a
    # run folder's path would run off a narrow figure.
    title = f"Attention of {maps.model or maps.path.name}: {text}"
    fig.suptitle(plain(textwrap.fill(title, width=max(30, int(9 * fig.get_figwidth())))))
    return fig
