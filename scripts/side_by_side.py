#!/usr/bin/env python3
"""Sets report tables of the same rows side by side, as one Markdown table.

    side_by_side.py NAME=TABLE.csv [NAME=TABLE.csv ...]

Each TABLE.csv is what `mtbert report TABLE.yaml --format csv` writes, all for
the same table file (the same rows, e.g. the smoke runs and the small-scale
runs). Per row and column the output gives the paper's number (from the first
CSV), then each CSV's ours as mean ± sample std (n runs), under its NAME.
REPRODUCTION.md's side-by-side tables are its output:

    side_by_side.py smoke=runs/smoke/final_table1/table.csv small=runs/small/final_table1/table.csv

Dev rows only. CSVs whose rows differ, or a file that is not a report CSV, is
one line on stderr, `side_by_side: error: ...`, and exit code 2.
"""
import sys
from pathlib import Path

from mtbert_py.common import ArgumentParser, UserError, run_main
from plot_table import ReportTable

PROG = "side_by_side"


def parse_args(argv):
    parser = ArgumentParser(prog=PROG, description="Report tables of the same rows side by side (Markdown).")
    parser.add_argument("tables", nargs="+", metavar="NAME=TABLE.csv")
    args = parser.parse_args(argv)
    named = []
    for item in args.tables:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise UserError(f"\"{item}\": write NAME=TABLE.csv")
        named.append((name, ReportTable(Path(path))))
    return named


def _ours(cell):
    if cell["ours"] is None:
        return "-"
    spread = f" ± {cell['std']:.3f}" if cell["std"] is not None else ""
    return f"{cell['ours']:.3f}{spread}"


def side_by_side(named):
    first_name, first = named[0]
    labels = [label for label, _ in first.rows]
    for name, table in named[1:]:
        if [label for label, _ in table.rows] != labels or table.columns != first.columns:
            raise UserError(f"{table.path}: its rows or columns differ from {first.path}'s")
    header = ["Model"]
    for column in first.columns:
        header += [f"{column} paper"] + [f"{column} {name}" for name, _ in named]
    lines = ["| " + " | ".join(header) + " |", "|:--|" + "--:|" * (len(header) - 1)]
    for i, label in enumerate(labels):
        cells = [label]
        for column in first.columns:
            paper = first.rows[i][1][column]["paper"]
            cells.append(f"{paper:.3f}" if paper is not None else "-")
            cells += [_ours(table.rows[i][1][column]) for _, table in named]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    return run_main(PROG, lambda: print(side_by_side(parse_args(argv)), end=""))


if __name__ == "__main__":
    sys.exit(main())
