#!/usr/bin/env python3
"""Tests of scripts/side_by_side.py on report CSVs fabricated here: the
paper's numbers and each CSV's mean ± std per column under its name; CSVs
of different rows, or an argument without NAME=, are one-line errors."""
import tempfile
from pathlib import Path

from mini_runner import call_main, run_tests
import side_by_side

HEADER = "row,run,split,runs,finished,sst_paper,sst_ours,sst_std,sst_n,sst_diff,tags,notes"


def write(path, lines):
    path.write_text("\n".join([HEADER] + lines) + "\n")
    return path


def call(*argv):
    return call_main(side_by_side.main, argv)


def test_paper_then_each_table():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        smoke = write(tmp / "smoke.csv", ["baseline,b,dev,1,1,0.453,0.25,,1,,smoke,", "GS,g,dev,1,0,0.492,,,0,,smoke,",
                                          "GS (test),g,test,1,1,0.5,,,0,,smoke,"])
        small = write(tmp / "small.csv", ["baseline,b,dev,3,3,0.453,0.3123,0.0101,3,,small,",
                                          "GS,g,dev,3,3,0.492,0.33,0.02,3,,small,"])
        code, out, err = call(f"smoke={smoke}", f"small={small}")
        assert code == 0 and err == "", err
        assert out.splitlines() == [
            "| Model | sst paper | sst smoke | sst small |",
            "|:--|--:|--:|--:|",
            "| baseline | 0.453 | 0.250 | 0.312 ± 0.010 |",
            "| GS | 0.492 | - | 0.330 ± 0.020 |",
        ], out


def test_bad_inputs_are_one_line_errors():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        a = write(tmp / "a.csv", ["baseline,b,dev,1,1,0.453,0.25,,1,,,"])
        b = write(tmp / "b.csv", ["other,o,dev,1,1,0.453,0.25,,1,,,"])
        for argv, fragment in [([f"x={a}", f"y={b}"], "b.csv: its rows or columns differ"),
                               ([str(a)], "write NAME=TABLE.csv")]:
            code, out, err = call(*argv)
            assert code == 2 and err.startswith("side_by_side: error: ") and err.count("\n") == 1, (code, err)
            assert fragment in err, err


if __name__ == "__main__":
    import sys
    sys.exit(run_tests(globals()))
