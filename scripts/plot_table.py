#!/usr/bin/env python3
"""Draws a report table's rows with their intervals, as one PNG.

    plot_table.py TABLE.csv... [--title TEXT] [--out FILE]...

TABLE.csv is what `mtbert report TABLE.yaml --format csv` writes. One panel
per column of the table (SST, Quora, STS, overall), one line per row:

- with a reference row (the CSV's `against` and `<column>_vs_against[_low|
  _high]` fields, from `--against` or the table's `against:`): each row's
  difference from the reference with its 95% paired-bootstrap interval; an
  interval that contains 0 is drawn grey and hollow, since at the dev set's
  size that row cannot be told from the reference;
- without one: each row's mean over its runs with the sample standard
  deviation as a bar, and the paper's number as a cross where it has one.

Dev rows only (test rows have no intervals); rows without a finished run are
listed as such. The PNG (default: TABLE.png beside the CSV; with --out, one
per CSV in their order) is written under a temporary name and renamed into
place. Several CSVs (a table and its comparisons against other rows) are
drawn in one process, each read before the first is drawn. A CSV that is not a report's is one
line on stderr, `plot_table: error: ...`, naming the file, and exit code 2.
"""
import csv
import sys
from pathlib import Path

from mtbert_py.common import ArgumentParser, UserError, one_line, run_main
from mtbert_py.figures import plain, plt, save_png

PROG = "plot_table"
COLUMN_PARTS = ("paper", "ours", "std", "n", "diff")


def parse_args(argv):
    parser = ArgumentParser(prog=PROG, description="A report table's rows with their intervals.")
    parser.add_argument("tables", type=Path, nargs="+", metavar="TABLE.csv")
    parser.add_argument("--title", help="the figures' title (default: each CSV's file name)")
    parser.add_argument("--out", type=Path, action="append",
                        help="the PNG, once per CSV in their order (default: TABLE.png beside each CSV)")
    args = parser.parse_args(argv)
    if args.out is not None and len(args.out) != len(args.tables):
        parser.error(f"{len(args.tables)} CSV file(s) but {len(args.out)} --out: give one --out per CSV, or none")
    return args


def _number(text, where):
    if text == "":
        return None
    try:
        return float(text)
    except ValueError:
        raise UserError(f"{where}: \"{text}\" is not a number") from None


class ReportTable:
    """The rows and columns of a report CSV: columns in the table's order, and
    per dev row its label and per column {ours, std, n, paper, diff, low,
    high} (None where empty)."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            with self.path.open(encoding="utf-8", newline="") as f:
                records = list(csv.DictReader(f))
                header = records[0].keys() if records else []
        except FileNotFoundError:
            raise UserError(f"{self.path} does not exist") from None
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            raise UserError(f"cannot read {self.path}: {one_line(e)}") from None
        if not records or not {"row", "split"} <= set(header):
            raise UserError(f"{self.path}: not a report table (mtbert report --format csv): no row and split fields")
        self.columns = [key[:-len("_ours")] for key in header if key.endswith("_ours")]
        if not self.columns:
            raise UserError(f"{self.path}: no <column>_ours fields: not a report table")
        self.against = records[0].get("against") or None
        self.rows = []
        for number, record in enumerate(records, start=2):
            if record["split"] != "dev":
                continue
            cells = {}
            for column in self.columns:
                where = f"{self.path}:{number}: {column}"
                cell = {part: _number(record.get(f"{column}_{part}", ""), f"{where}_{part}") for part in COLUMN_PARTS}
                for part in ("vs_against", "vs_against_low", "vs_against_high"):
                    cell[part] = _number(record.get(f"{column}_{part}", ""), f"{where}_{part}")
                cells[column] = cell
            self.rows.append((record["row"], cells))


def _interval_panel(ax, table, column):
    labels = []
    for y, (label, cells) in enumerate(table.rows):
        cell = cells[column]
        labels.append(label)
        if label == table.against:
            ax.plot([0], [y], marker="D", color="black", ms=6)
            ax.annotate("reference", (0, y), textcoords="offset points", xytext=(6, 4), fontsize="small")
            continue
        if cell["vs_against"] is None:
            ax.annotate("no finished run", (0, y), textcoords="offset points", xytext=(6, -3), fontsize="small",
                        color="grey")
            continue
        low, high, estimate = cell["vs_against_low"], cell["vs_against_high"], cell["vs_against"]
        holds_zero = low <= 0 <= high
        color = "grey" if holds_zero else ("C2" if estimate > 0 else "C3")
        ax.errorbar([estimate], [y], xerr=[[estimate - low], [high - estimate]], fmt="o", color=color, capsize=4,
                    mfc="white" if holds_zero else color)
        ax.annotate(f"{estimate:+.3f}", (estimate, y), textcoords="offset points", xytext=(0, 6), ha="center",
                    fontsize="small", color=color)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel(f"minus \"{plain(table.against)}\" (95% interval)")
    return labels


def _mean_panel(ax, table, column):
    labels = []
    for y, (label, cells) in enumerate(table.rows):
        cell = cells[column]
        labels.append(label)
        if cell["ours"] is not None:
            ax.errorbar([cell["ours"]], [y], xerr=[[cell["std"] or 0]], fmt="o", color="C0", capsize=4,
                        label="ours (mean, std)" if y == 0 else None)
        if cell["paper"] is not None:
            ax.plot([cell["paper"]], [y], marker="x", color="C1", ms=7, ls="", label="paper" if y == 0 else None)
    ax.set_xlabel("score (mean +- std over runs)")
    return labels


def plot_table(table, title):
    compare = table.against is not None
    fig, axes = plt.subplots(1, len(table.columns), figsize=(4.2 * len(table.columns), 1.2 + 0.55 * len(table.rows)),
                             sharey=True, squeeze=False)
    for ax, column in zip(axes[0], table.columns):
        labels = _interval_panel(ax, table, column) if compare else _mean_panel(ax, table, column)
        ax.set_title(column)
        ax.set_yticks(range(len(labels)))
        ax.set_yticklabels([plain(label) for label in labels])
        ax.set_ylim(len(labels) - 0.5, -0.5)
        ax.grid(alpha=0.3, axis="x")
    fig.suptitle(plain(title))
    fig.tight_layout()
    return fig


def draw(argv):
    args = parse_args(argv)
    tables = [ReportTable(path) for path in args.tables]
    outs = args.out if args.out is not None else [path.with_suffix(".png") for path in args.tables]
    for table, out in zip(tables, outs):
        title = args.title if args.title is not None else table.path.stem
        print(f"table figure: {save_png(plot_table(table, title), out)}")


def main(argv=None):
    return run_main(PROG, lambda: draw(argv))


if __name__ == "__main__":
    sys.exit(main())
