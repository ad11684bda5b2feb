#!/usr/bin/env python3
"""Draws the figures of training runs, as PNG files.

    plot_run.py RUN_DIR [--out DIR] [--attention FILE.pt ... [--grid LAYERS:HEADS ...]]
    plot_run.py RUN_DIR RUN_DIR ... --out DIR
    plot_run.py --attention FILE.pt ... --out DIR [--grid LAYERS:HEADS ...]

One run folder (written by `mtbert train`) gives, in DIR (default RUN_DIR/figures):
  training-curves.png        train loss per task and dev metrics per task and
                             overall against the step (metrics.jsonl), best step marked
  <task>-dev-confusion.png   binary tasks (Quora paraphrase): confusion matrix on dev
  <task>-dev-histogram.png   SST: true vs predicted class counts; STS: true vs
                             predicted score histograms and scatter
The dev figures join predictions/<task>-dev-output.csv by id with the dev file
that config.resolved.yaml names (relative paths are read from the current
directory, as mtbert reads them). What a run lacks (a task, its predictions,
its dev file) is skipped with a line saying so.

Several run folders give curves-comparison.png in DIR: their curves overlaid.

--attention files (written by `mtbert attention`, with their .tokens.json)
give attention-<file>-L<layers>_H<heads>.png in DIR (attention-L..., for a
file whose name already starts with "attention"): one figure per --grid
(rows: layers, columns: heads; LAYERS and HEADS are `all` or comma lists of
indices and ranges a-b, layers also by name such as emd.0), by default one per
layer with all its heads.

Every PNG is written under a temporary name and renamed into place. Each
written or skipped figure is one line on stdout. A malformed run folder or
input file is one line on stderr, `plot_run: error: ...`, naming the file, and
exit code 2.
"""
import sys
from pathlib import Path

from mtbert_py.common import ArgumentParser, UserError, run_main
from mtbert_py.figures import (default_grids, parse_grid, plot_attention_grid, plot_class_histogram, plot_confusion,
                               plot_curves_comparison, plot_score_histogram, plot_training_curves, save_png)
from mtbert_py.run_files import RunFolder, load_dev_outcome, read_attention_maps

PROG = "plot_run"

# The reports' figures, by task type: (what it is called, file suffix, how it is drawn).
DEV_FIGURES = {
    "binary": ("confusion matrix", "dev-confusion", plot_confusion),
    "classes": ("true vs predicted histogram", "dev-histogram", plot_class_histogram),
    "regression": ("true vs predicted histogram", "dev-histogram", plot_score_histogram),
}
# The reports' three tasks: a run without one of them says so.
REPORT_TASKS = {"sst": "SST histogram", "para": "paraphrase confusion matrix", "sts": "STS histogram"}


def parse_args(argv):
    parser = ArgumentParser(prog=PROG, description="Draw the figures of mtbert training runs as PNG files.")
    parser.add_argument("runs", nargs="*", type=Path, metavar="RUN_DIR",
                        help="run folder(s); several: their curves overlaid")
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="folder for the PNGs (default: RUN_DIR/figures; required for several runs or none)")
    parser.add_argument("--attention", nargs="+", action="extend", default=[], type=Path, metavar="FILE.pt",
                        help="attention maps written by `mtbert attention`")
    parser.add_argument("--grid", action="append", default=[], metavar="LAYERS:HEADS",
                        help="layers and heads of one attention figure, e.g. 11:all, 0-3:0,5 "
                             "(default: one figure per layer, all heads)")
    args = parser.parse_args(argv)
    if not args.runs and not args.attention:
        raise UserError("nothing to draw: give a RUN_DIR, or --attention files with --out")
    if len(args.runs) != 1 and args.out is None:
        raise UserError("--out is needed with " + ("several run folders" if args.runs else "no run folder"))
    if args.grid and not args.attention:
        raise UserError("--grid applies to --attention files, and none was given")
    return args


def unique_labels(runs):
    """Legend names: the runs' names, or their folders where names repeat (seeds of one experiment)."""
    for label in (lambda r: r.name, lambda r: r.root.name, lambda r: str(r.root)):
        labels = [label(run) for run in runs]
        if len(set(labels)) == len(labels):
            return labels
    return labels


class Figures:
    """Writes figures into one folder and says what it wrote and skipped."""

    def __init__(self, out):
        self.out = Path(out)

    def write(self, fig, name):
        print(f"wrote {save_png(fig, self.out / name)}")

    @staticmethod
    def skip(what, why):
        print(f"skipped {what}: {why}")


def draw_run(run, figures):
    # Read (and check) every input before the first figure is written.
    outcomes = [(task, *load_dev_outcome(run, task)) for task in run.tasks]
    if run.metrics:
        figures.write(plot_training_curves(run), "training-curves.png")
    else:
        figures.skip("training curves", f"{run.metrics_path} is missing or empty (no evaluation yet)")
    types = {task.type.name for task in run.tasks}
    for type_name, what in REPORT_TASKS.items():
        if type_name not in types:
            figures.skip(what, f"the run has no {type_name} task ({run.config_path})")
    for task, outcome, why in outcomes:
        what, suffix, plot = DEV_FIGURES[task.type.target]
        if outcome is None:
            figures.skip(f"{task.name} {what}", why)
        else:
            figures.write(plot(outcome, run.name), f"{task.name}-{suffix}.png")


def draw(argv):
    args = parse_args(argv)
    # Inputs are read and checked before the first figure is written.
    runs = [RunFolder(path) for path in args.runs]
    attention = [read_attention_maps(path) for path in args.attention]
    names = [maps.path.with_suffix("").name if maps.path.suffix == ".pt" else maps.path.name
             for maps in attention]
    if len(set(names)) != len(names):
        raise UserError(f"two --attention files share a name ({', '.join(names)}); their figures would collide")
    grids = [[parse_grid(spec, maps) for spec in args.grid] or default_grids(maps) for maps in attention]
    figures = Figures(args.out if args.out is not None else runs[0].root / "figures")
    if len(runs) == 1:
        draw_run(runs[0], figures)
    elif runs:
        if any(run.metrics for run in runs):
            figures.write(plot_curves_comparison(runs, unique_labels(runs)), "curves-comparison.png")
        else:
            figures.skip("curves comparison", "none of the runs has metrics.jsonl rows yet")
    for maps, name, maps_grids in zip(attention, names, grids):
        for grid in maps_grids:
            # att.pt gives attention-att-..., attention.pt gives attention-... (not attention-attention-...).
            stem = name if name.startswith("attention") else f"attention-{name}"
            figures.write(plot_attention_grid(maps, grid), f"{stem}-{grid.tag}.png")


def main(argv=None):
    return run_main(PROG, lambda: draw(argv))


if __name__ == "__main__":
    sys.exit(main())
