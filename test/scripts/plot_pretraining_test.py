#!/usr/bin/env python3
"""Tests of scripts/plot_pretraining.py on pretraining run folders fabricated
here in `mtbert pretrain`'s layout (metrics.jsonl rows with train_loss.mlm and
dev.mlm, summary.json): the figure is a valid PNG, several runs go in one
figure, a torn last line is dropped, and a fine-tuning run, a folder without
held-out evaluations or a malformed row is exit code 2 with one error line
naming the file."""
import json
import struct
import tempfile
from pathlib import Path

from mini_runner import call_main, run_tests
import plot_pretraining

ERROR_PREFIX = "plot_pretraining: error: "


def make_run(root, name, rows=4, kind="pretrain"):
    run = root / name
    run.mkdir(parents=True)
    lines = [json.dumps({"step": 250 * (i + 1), "epoch": 1, "lr": 1e-4, "train_loss": {"mlm": 8.0 - i},
                         "dev": {"mlm": {"loss": 7.0 - i, "accuracy": 0.1 * (i + 1), "perplexity": 2.718 ** (7 - i),
                                         "tokens": 3000}}}) for i in range(rows)]
    (run / "metrics.jsonl").write_text("\n".join(lines) + "\n")
    (run / "summary.json").write_text(json.dumps({"kind": kind, "name": name, "status": "finished"}))
    return run


def plot(*argv):
    return call_main(plot_pretraining.main, argv)


def png_size(path):
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def assert_user_error(result, *fragments):
    code, out, err = result
    assert code == 2, (code, out, err)
    assert err.startswith(ERROR_PREFIX) and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_one_figure_for_several_runs():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bert, deberta = make_run(tmp, "bert_small"), make_run(tmp, "deberta_small", rows=3)
        code, out, err = plot(bert, deberta)
        assert code == 0 and err == "", err
        figure = bert / "figures" / "pretraining-curves.png"
        assert str(figure) in out
        width, height = png_size(figure)
        assert width > 1000 and height > 400, (width, height)
        code, _, _ = plot(bert, "--out", tmp / "elsewhere" / "curves.png")
        assert code == 0 and (tmp / "elsewhere" / "curves.png").exists()


def test_a_torn_last_line_is_dropped():
    with tempfile.TemporaryDirectory() as tmp:
        run = make_run(Path(tmp), "torn")
        with open(run / "metrics.jsonl", "a") as f:
            f.write('{"step": 1250, "dev": {"ml')
        assert plot(run)[0] == 0


def test_bad_inputs_are_one_line_errors():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        assert_user_error(plot(tmp / "missing"), "missing", "not a folder")
        assert_user_error(plot(make_run(tmp, "finetune", kind="train")), "`train` run", "summary.json")
        empty = make_run(tmp, "empty", rows=0)
        assert_user_error(plot(empty), "metrics.jsonl", "no held-out")
        bad = make_run(tmp, "bad")
        with open(bad / "metrics.jsonl", "a") as f:
            f.write('{"step": 9, "dev": {"mlm": {"loss": "x"}}}\n')
        assert_user_error(plot(bad), "metrics.jsonl:5", "dev.mlm")
        broken = make_run(tmp, "broken")
        (broken / "metrics.jsonl").write_text("{oops\n" + (broken / "metrics.jsonl").read_text())
        assert_user_error(plot(broken), "metrics.jsonl:1", "not valid JSON")
        assert_user_error(plot(), "RUN_DIR")
        assert not (tmp / "bad" / "figures").exists()


if __name__ == "__main__":
    import sys
    sys.exit(run_tests(globals()))
