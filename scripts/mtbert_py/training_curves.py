"""Training curves of runs (metrics.jsonl): the training loss of each task and
the dev metrics of each task and overall against the optimizer step, with the
best evaluation marked; and the same curves of several runs overlaid."""
import matplotlib.pyplot as plt

from .figure_files import plain

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
