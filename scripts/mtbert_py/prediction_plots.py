"""Figures of a task's dev predictions against its gold labels: the confusion
matrix of a binary task (Quora paraphrase), true vs predicted label counts of a
classification task (SST-5) and true vs predicted scores of a regression task
(STS-B)."""
import matplotlib.pyplot as plt
import numpy as np

from .confusion_matrix import confusion_matrix
from .figure_files import plain

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
    ax.set_title(_title(outcome, f"confusion matrix\naccuracy {accuracy:.3f}, n = {total}", run_name))
    fig.colorbar(image, ax=ax, label="examples")
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
