#!/usr/bin/env python3
"""Checks that REPRODUCTION.md's figures have one source.

The pair tables of REPRODUCTION.md ("| row | minus | ..." : each row against
a reference row, a difference with its 95% paired-bootstrap interval per
column) are copied from the `vs-*.md` and `table.md` files that
scripts/small_reproduction.sh writes. The prose around them quotes those
intervals. This script checks both links:

  * every interval quoted outside a pair table ("+0.019 [+0.007, +0.032]")
    is a cell of one of the document's pair tables, or a cell negated (a
    pair read the other way round: "-0.002 [-0.011, +0.006]" as
    "+0.002 [-0.006, +0.011]"), so that a reading cannot quote a figure the
    tables do not hold;
  * with --runs FOLDER (small_reproduction.sh's output), every pair-table row
    of the document ("| row | minus | cells |") is a row of a table that
    `mtbert report --against` wrote under FOLDER: a table whose reference
    row (every cell "reference") is `minus`, holding `row` with the same
    cells, so that the tables are the runs' and not an older copy.

Prints one line per figure or row that has no source and exits 1; exits 0
when every figure has one.

  scripts/reproduction_figures.py                     # the prose against the tables
  scripts/reproduction_figures.py --runs runs/small   # and the tables against the runs
"""
import argparse
import re
import sys
from pathlib import Path

INTERVAL = re.compile(r"[+-]\d+\.\d+ \[[+-]\d+\.\d+, [+-]\d+\.\d+\]")
PAIR_HEADER = re.compile(r"^\|\s*row\s*\|\s*minus\s*\|")


def pair_table_lines(lines):
    """Indices of the rows of every pair table (header and rule excluded)."""
    rows = set()
    inside = False
    for i, line in enumerate(lines):
        if PAIR_HEADER.match(line):
            inside = True
            continue
        if inside and line.startswith("|"):
            if not re.match(r"^\|[\s:|-]+\|$", line):
                rows.add(i)
            continue
        inside = False
    return rows


def negated(figure):
    """"-0.002 [-0.011, +0.006]" -> "+0.002 [-0.006, +0.011]"."""
    value, low, high = re.findall(r"[+-]\d+\.\d+", figure)
    flip = lambda x: ("-" if x[0] == "+" else "+") + x[1:]
    return f"{flip(value)} [{flip(high)}, {flip(low)}]"


def cells(line):
    """The cells of a markdown table row, stripped: "| a | b |" -> ("a", "b")."""
    return tuple(c.strip() for c in line.strip().strip("|").split("|"))


def report_pairs(table):
    """(row, minus, *cells) of every row of one report table (its lines, the
    header and rule first) read against its reference row, the row whose
    cells all read "reference"; nothing for a table without one."""
    body = [cells(line) for line in table[2:]]
    references = [row[0] for row in body if len(row) > 1 and all(c == "reference" for c in row[1:])]
    if len(references) != 1:
        return set()
    return {(row[0], references[0], *row[1:]) for row in body if row[0] != references[0]}


def pairs_under(runs):
    """Every (row, minus, *cells) of the report tables in the markdown files under runs."""
    pairs = set()
    for md in sorted(runs.rglob("*.md")):
        table = []
        for line in md.read_text(encoding="utf-8").splitlines() + [""]:
            if line.startswith("|"):
                table.append(line)
                continue
            if table:
                pairs |= report_pairs(table)
            table = []
    return pairs


def check(doc, runs=None):
    """The problems found, one line each."""
    lines = doc.read_text(encoding="utf-8").splitlines()
    rows = pair_table_lines(lines)
    in_tables = set()
    for i in rows:
        for figure in INTERVAL.findall(lines[i]):
            in_tables.update((figure, negated(figure)))
    problems = []
    for i, line in enumerate(lines):
        if i in rows:
            continue
        for figure in INTERVAL.findall(line):
            if figure not in in_tables:
                problems.append(f"{doc}:{i + 1}: {figure} is in no pair table of the document")
    if runs is not None:
        written = pairs_under(runs)
        for i in sorted(rows):
            if cells(lines[i]) not in written:
                problems.append(f"{doc}:{i + 1}: this pair-table row is in no table under {runs}")
    return problems


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--doc", type=Path, default=Path(__file__).resolve().parent.parent / "REPRODUCTION.md")
    parser.add_argument("--runs", type=Path, help="small_reproduction.sh's output folder")
    args = parser.parse_args(argv)
    for path, kind in ((args.doc, "file"), (args.runs, "folder")):
        if path is not None and not (path.is_file() if kind == "file" else path.is_dir()):
            print(f"reproduction_figures.py: error: {path}: no such {kind}", file=sys.stderr)
            return 2
    problems = check(args.doc, args.runs)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
