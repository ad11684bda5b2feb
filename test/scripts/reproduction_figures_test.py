#!/usr/bin/env python3
"""Tests of scripts/reproduction_figures.py: the committed REPRODUCTION.md
quotes only figures of its pair tables; a doctored copy (a prose figure no
table holds) is named by line; negated cells are accepted; with --runs, rows
found in the runs' markdown pass and a row changed since fails; a missing
document is a one-line error with exit code 2."""
import tempfile
from pathlib import Path

from mini_runner import call_main, run_tests
import reproduction_figures

DOC = """# Tables

| row | minus | SST | average |
|:--|:--|--:|--:|
| disentangled attention | minBERT finetune | +0.006 [-0.011, +0.024] ~ | -0.002 [-0.011, +0.006] |

| the report's claim | at small scale |
| --- | --- |
| it helps | average -0.002 [-0.011, +0.006], SST +0.006 [-0.011, +0.024] ~ |

Read the other way round: +0.002 [-0.006, +0.011].
"""


def call(*argv):
    return call_main(reproduction_figures.main, argv)


def test_the_committed_document_has_one_source():
    code, out, err = call()
    assert code == 0 and out == "" and err == "", (out, err)


def test_a_prose_figure_without_a_table_cell_is_named():
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "doc.md"
        doc.write_text(DOC, encoding="utf-8")
        assert call("--doc", doc)[0] == 0
        doc.write_text(DOC.replace("SST +0.006 [-0.011, +0.024]", "SST +0.005 [-0.011, +0.024]"), encoding="utf-8")
        code, out, _ = call("--doc", doc)
        assert code == 1 and out == f"{doc}:9: +0.005 [-0.011, +0.024] is in no pair table of the document\n", out


def test_rows_against_the_runs():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        doc = tmp / "doc.md"
        doc.write_text(DOC, encoding="utf-8")
        runs = tmp / "runs" / "deberta_table2"
        runs.mkdir(parents=True)
        # What `mtbert report --against "minBERT finetune"` writes: the
        # reference row's cells read "reference", and there is no minus column.
        report = """# Table 2

| Model | SST | average |
|:--|--:|--:|
| minBERT finetune | reference | reference |
| disentangled attention | +0.006 [-0.011, +0.024] ~ | -0.002 [-0.011, +0.006] |
"""
        (runs / "vs-finetune.md").write_text(report, encoding="utf-8")
        assert call("--doc", doc, "--runs", tmp / "runs") == (0, "", "")
        (runs / "vs-finetune.md").write_text(report.replace("+0.024", "+0.025"), encoding="utf-8")
        code, out, _ = call("--doc", doc, "--runs", tmp / "runs")
        assert code == 1 and "doc.md:5: this pair-table row is in no table under" in out, out
        # The same cells against another reference row are not this pair.
        (runs / "vs-finetune.md").write_text(report.replace("minBERT finetune", "+ log bucketing"), encoding="utf-8")
        assert call("--doc", doc, "--runs", tmp / "runs")[0] == 1


def test_a_missing_document_is_one_line():
    code, out, err = call("--doc", "/nonexistent/REPRODUCTION.md")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "no such file" in err, err


if __name__ == "__main__":
    import sys
    sys.exit(run_tests(globals()))
