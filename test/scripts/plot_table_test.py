#!/usr/bin/env python3
"""Tests of scripts/plot_table.py on report CSVs fabricated here in the
layout `mtbert report --format csv` writes: a table with a reference row
(intervals) and one without (means and the paper's numbers) each give a PNG;
test rows are left out; a file that is not a report CSV, or a field that is
not a number, is exit code 2 with one error line naming the file."""
import struct
import tempfile
from pathlib import Path

from mini_runner import call_main, run_tests
import plot_table

ERROR_PREFIX = "plot_table: error: "
HEADER = ("row,run,split,runs,finished,sst_paper,sst_ours,sst_std,sst_n,sst_diff,"
          "overall_paper,overall_ours,overall_std,overall_n,overall_diff")
COMPARED = HEADER.replace(",tags", "") + (",against,sst_vs_against,sst_vs_against_low,sst_vs_against_high,"
                                          "overall_vs_against,overall_vs_against_low,overall_vs_against_high,tags,notes")


def write(path, lines):
    path.write_text("\n".join(lines) + "\n")
    return path


def plot(*argv):
    return call_main(plot_table.main, argv)


def is_png(path):
    data = Path(path).read_bytes()
    return data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24])[0] > 100


def test_intervals_against_a_reference_row():
    with tempfile.TemporaryDirectory() as tmp:
        csv = write(Path(tmp) / "final.csv", [
            COMPARED,
            "baseline,baseline,dev,3,3,0.453,0.30,0.01,3,-0.15,0.635,0.55,0.01,3,-0.08,baseline,,,,,,,small,",
            "GS,gradient_surgery,dev,3,3,0.492,0.33,0.02,3,-0.16,0.654,0.56,0.01,3,-0.09,baseline,"
            "0.03,0.01,0.05,0.01,-0.01,0.03,small,",
            "SMART,smart,dev,3,0,0.52,,,0,,0.746,,,0,,baseline,,,,,,,small,\"sst: 3 missing\"",
            "GS (test),gradient_surgery,test,3,3,0.5,,,0,,0.6,,,0,,baseline,,,,,,,small,",
        ])
        table = plot_table.ReportTable(csv)
        assert table.columns == ["sst", "overall"]
        assert table.against == "baseline"
        assert [label for label, _ in table.rows] == ["baseline", "GS", "SMART"]
        assert table.rows[1][1]["sst"]["vs_against_low"] == 0.01
        code, out, err = plot(csv, "--title", "Final report, Table 1")
        assert code == 0 and err == "", err
        assert is_png(Path(tmp) / "final.png") and "final.png" in out


def test_means_without_a_reference_row():
    with tempfile.TemporaryDirectory() as tmp:
        csv = write(Path(tmp) / "pal.csv", [
            HEADER + ",tags,notes",
            "frozen,frozen,dev,3,3,0.3,0.25,0.02,3,-0.05,0.5,0.45,0.01,3,-0.05,small,",
            "fine-tuned,finetuned,dev,1,1,,0.31,,1,,,0.55,,1,,small,",
        ])
        out_png = Path(tmp) / "figures" / "pal.png"
        code, _, err = plot(csv, "--out", out_png)
        assert code == 0 and err == "", err
        assert is_png(out_png)
        assert plot_table.ReportTable(csv).against is None


def test_several_tables_in_one_call():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        first = write(tmp / "table.csv", [HEADER + ",tags,notes", "frozen,frozen,dev,3,3,0.3,0.25,0.02,3,-0.05,0.5,0.45,"
                                          "0.01,3,-0.05,small,"])
        second = write(tmp / "vs.csv", [
            COMPARED,
            "baseline,baseline,dev,3,3,0.453,0.30,0.01,3,-0.15,0.635,0.55,0.01,3,-0.08,baseline,,,,,,,small,",
            "GS,gs,dev,3,3,0.492,0.33,0.02,3,-0.16,0.654,0.56,0.01,3,-0.09,baseline,0.03,0.01,0.05,0.01,-0.01,0.03,"
            "small,",
        ])
        code, out, err = plot(first, second, "--out", tmp / "a.png", "--out", tmp / "b.png", "--title", "T")
        assert code == 0 and err == "", err
        assert is_png(tmp / "a.png") and is_png(tmp / "b.png") and out.count("table figure:") == 2
        code, _, err = plot(first, second, "--out", tmp / "c.png")
        assert code == 2 and "2 CSV file(s) but 1 --out" in err and err.count("\n") == 1, err
        assert not (tmp / "c.png").exists()
        code, _, err = plot(first, tmp / "absent.csv", "--out", tmp / "d.png", "--out", tmp / "e.png")
        assert code == 2 and "absent.csv does not exist" in err, err
        assert not (tmp / "d.png").exists(), "every CSV is read before the first figure is drawn"


def test_bad_inputs_are_one_line_errors():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for argv, fragment in [
            ([tmp / "absent.csv"], "absent.csv does not exist"),
            ([write(tmp / "other.csv", ["a,b", "1,2"])], "other.csv: not a report table"),
            ([write(tmp / "nocols.csv", ["row,split", "x,dev"])], "nocols.csv: no <column>_ours fields"),
            ([write(tmp / "bad.csv", [HEADER, "r,r,dev,1,1,,abc,,1,,,0.5,,1,"])], "bad.csv:2: sst_ours: \"abc\""),
        ]:
            code, out, err = plot(*argv)
            assert code == 2, (argv, code, out, err)
            assert err.startswith(ERROR_PREFIX) and err.count("\n") == 1, err
            assert fragment in err, (fragment, err)


if __name__ == "__main__":
    import sys
    sys.exit(run_tests(globals()))
