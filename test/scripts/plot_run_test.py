#!/usr/bin/env python3
"""Tests of scripts/plot_run.py on run folders fabricated here in mtbert's
layout (config.resolved.yaml naming small dev files, metrics.jsonl,
summary.json, predictions in the leaderboard layout, an attention file as
`mtbert attention` writes it): every figure is a valid PNG of sensible size,
the confusion matrix counts are the ones worked out by hand, what a run lacks
is skipped with a line, and every malformed input is exit code 2 with one
error line naming the file."""
import contextlib
import json
import struct
import tempfile
from pathlib import Path

import numpy as np
import torch

from mini_runner import call_main, run_tests
import plot_run
from mtbert_py.common import UserError
from mtbert_py.figures import confusion_matrix
from mtbert_py.run_files import RunFolder, join_by_id, load_dev_outcome

ERROR_PREFIX = "plot_run: error: "
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# Dev rows: (id, text(s), gold label). The first SST sentence is quoted and
# holds a tab, as pandas writes such a field.
SST_DEV = [("s1", '"a \tquoted, gripping film"', 4), ("s2", "dull", 0), ("s3", "fine", 2),
           ("s4", "good", 3), ("s5", "awful", 0), ("s6", "meh", 1)]
SST_PRED = {"s1": 4, "s2": 1, "s3": 2, "s4": 3, "s5": 0, "s6": 2}
PARA_DEV = [("p1", 1.0), ("p2", 0.0), ("p3", 1.0), ("p4", 1.0), ("p5", 0.0), ("p6", 0.0), ("p7", 1.0),
            ("p8", 0.0)]
# p8 is left out of the predictions (limit_dev); p7 is written first (any order joins).
PARA_PRED = [("p7", "1.0"), ("p1", "1.0"), ("p2", "1.0"), ("p3", "0.0"), ("p4", "0.0"), ("p5", "0.0"),
             ("p6", "0.0")]
# By hand, gold (rows) x predicted (columns) over p1..p7:
#   gold 0: p2 -> 1, p5 -> 0, p6 -> 0            => [2, 1]
#   gold 1: p1 -> 1, p3 -> 0, p4 -> 0, p7 -> 1   => [2, 2]
PARA_CONFUSION = [[2, 1], [2, 2]]
STS_DEV = [("t1", 0.0), ("t2", 1.2), ("t3", 2.5), ("t4", 3.8), ("t5", 5.0), ("t6", 4.4)]
STS_PRED = {"t1": "0.31", "t2": "1.0", "t3": "2.7356372", "t4": "3.3", "t5": "5.4", "t6": "-0.2"}

TOKENS = ["[CLS]", "a", "$", "film", "[SEP]", "dull", "[SEP]"]


def write_dev_files(folder):
    folder.mkdir(parents=True, exist_ok=True)
    lines = ["\tid\tsentence\tsentiment"] + [f"{i}\t{id_}\t{text}\t{label}" for i, (id_, text, label) in
                                            enumerate(SST_DEV)]
    (folder / "sst-dev.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = ["\tid\tsentence1\tsentence2\tis_duplicate"] + [f"{i}\t{id_}\tq one\tq two\t{label}"
                                                           for i, (id_, label) in enumerate(PARA_DEV)]
    (folder / "para-dev.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    lines = ["\tid\tsentence1\tsentence2\tsimilarity"] + [f"{i}\t{id_}\ta\tb\t{label}"
                                                         for i, (id_, label) in enumerate(STS_DEV)]
    (folder / "sts-dev.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def config_yaml(tasks):
    """config.resolved.yaml as mtbert writes it: strings double-quoted, `$` doubled."""
    out = ['# Every key of this experiment with its value, defaults included (see experiments/base.yaml).',
           'name: "fabricated"', "seed: 11711", "", "model:", '  pretrained: ""', "", "tasks:"]
    for name, (type_name, dev) in tasks.items():
        out += [f"  {name}:", f'    type: "{type_name}"', '    train: "x.csv"',
                f'    dev: "{str(dev).replace("$", "$$")}"', "    limit_dev: 0", "    max_length: 128"]
    out += ["", "train:", "  epochs: 2"]
    return "\n".join(out) + "\n"


def metrics_rows(tasks):
    rows = []
    for k, step in enumerate((10, 20, 30, 40)):
        dev = {t: {"metric": "pearson" if t == "sts" else "accuracy", "value": 0.2 + 0.1 * k + 0.01 * i,
                   "loss": 1.0 - 0.1 * k, "examples": 6} for i, t in enumerate(tasks)}
        overall = np.mean([(v["value"] + 1) / 2 if v["metric"] == "pearson" else v["value"] for v in dev.values()])
        rows.append({"step": step, "epoch": 1 + k // 2, "lr": 1e-5, "train_loss": {t: 1.5 - 0.2 * k for t in tasks},
                     "dev": dev, "overall": float(overall) - (0.3 if step == 40 else 0.0),
                     "examples_per_second": 100.0, "eval_seconds": 0.1})
    return rows


def write_predictions(run, task, column, rows):
    text = f"id \t {column} \n" + "".join(f"{id_} , {value} \n" for id_, value in rows)
    (run / "predictions" / f"{task}-dev-output.csv").write_text(text, encoding="utf-8")


def make_run(root, tasks=("sst", "para", "sts"), predictions=True, name="run"):
    """A finished run over the given built-in tasks; the data lives in a
    folder whose name holds a `$` (doubled in the config)."""
    data = root / "data$dir"
    write_dev_files(data)
    run = root / name
    (run / "predictions").mkdir(parents=True)
    (run / "config.resolved.yaml").write_text(config_yaml({t: (t, data / f"{t}-dev.csv") for t in tasks}))
    rows = metrics_rows(tasks)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    best = rows[2]  # step 40's overall is lowered: step 30 is the best
    (run / "summary.json").write_text(json.dumps({"name": name, "status": "finished",
                                                  "best": {"step": 30, "epoch": 2, "dev": best["dev"],
                                                           "overall": best["overall"]}}))
    if predictions:
        if "sst" in tasks:
            write_predictions(run, "sst", "Predicted_Sentiment", SST_PRED.items())
        if "para" in tasks:
            write_predictions(run, "para", "Predicted_Is_Paraphrase", PARA_PRED)
        if "sts" in tasks:
            write_predictions(run, "sts", "Predicted_Similiarity", STS_PRED.items())
    return run


def make_attention(path, layers=3, heads=2):
    """An attention file as `mtbert attention` writes it: rows are softmax distributions."""
    n = len(TOKENS)
    torch.manual_seed(3)
    attentions = torch.softmax(torch.randn(layers, heads, n, n), dim=-1)
    torch.save({"attentions": attentions, "input_ids": torch.arange(n)}, path)
    sidecar = {"tokens": TOKENS, "layers": [f"layer.{i}" for i in range(layers - 1)] + ["emd.0"], "heads": heads,
               "model": "models/tiny", "text": "a $ film", "text2": "dull"}
    path.with_name(path.stem + ".tokens.json").write_text(json.dumps(sidecar))
    return path


def plot(*argv):
    """Runs plot_run in-process: (exit code, stdout, stderr)."""
    return call_main(plot_run.main, argv)


def assert_plotted(result):
    code, stdout, stderr = result
    assert code == 0 and stderr == "", f"plot_run failed ({code}): {stderr}"
    return stdout


def assert_user_error(result, *fragments):
    code, stdout, stderr = result
    assert code == 2, f"exit code {code}, stderr {stderr!r}"
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(ERROR_PREFIX), f"not one error line: {stderr!r}"
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    return lines[0]


def png_size(path):
    """(width, height) of a PNG, after checking its signature and the IHDR chunk."""
    blob = Path(path).read_bytes()
    assert blob[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert blob[12:16] == b"IHDR" and blob.endswith(b"IEND\xaeB`\x82"), f"{path}: truncated or malformed PNG"
    return struct.unpack(">II", blob[16:24])


def assert_sensible_png(path, min_side=300, max_side=5000):
    width, height = png_size(path)
    assert min_side <= width <= max_side and min_side <= height <= max_side, f"{path}: {width} x {height}"
    import matplotlib.image
    pixels = matplotlib.image.imread(path)
    assert pixels.shape[:2] == (height, width)
    assert pixels.std() > 0.05, f"{path} is nearly blank"


@contextlib.contextmanager
def workdir():
    with tempfile.TemporaryDirectory(prefix="plot_run_test_") as tmp:
        yield Path(tmp)


def test_confusion_matrix_counts_by_hand():
    counts = confusion_matrix([0, 0, 1, 1, 1, 0, 1], [0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0], 2)
    assert counts.tolist() == [[2, 1], [1, 3]], counts
    counts = confusion_matrix([4, 0, 2, 3, 0, 1], [4, 1, 2, 3, 0, 2], 5)
    assert counts.tolist() == [[1, 1, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 1, 0],
                               [0, 0, 0, 0, 1]], counts
    for gold, predicted in (([0, 2], [0, 1]), ([0, 1], [0, -1])):
        try:
            confusion_matrix(gold, predicted, 2)
        except ValueError as e:
            assert "not a class index" in str(e)
        else:
            raise AssertionError(f"{gold} / {predicted} accepted")


def test_join_by_id_follows_predictions_and_rejects_unknown_ids():
    gold, predicted = join_by_id({"a": 1.0, "b": 0.0, "c": 3.0}, {"c": 2.5, "a": 1.0}, "p.csv", "d.csv")
    assert gold.tolist() == [3.0, 1.0] and predicted.tolist() == [2.5, 1.0]
    try:
        join_by_id({"a": 1.0}, {"a": 1.0, "zz": 0.0}, "p.csv", "d.csv")
    except UserError as e:
        assert "p.csv" in str(e) and "zz" in str(e) and "d.csv" in str(e)
    else:
        raise AssertionError("an id missing from the dev file was accepted")


def test_paraphrase_confusion_of_a_run_matches_hand_counts():
    with workdir() as tmp:
        run = RunFolder(make_run(tmp))
        para = next(t for t in run.tasks if t.name == "para")
        assert "data$dir" in para.dev and "$$" not in para.dev
        outcome, why = load_dev_outcome(run, para)
        assert why is None, why
        assert confusion_matrix(outcome.gold, outcome.predicted, 2).tolist() == PARA_CONFUSION
        sst = next(t for t in run.tasks if t.name == "sst")
        outcome, _ = load_dev_outcome(run, sst)
        # s1 (the quoted sentence with a tab) keeps its label 4.
        assert outcome.gold.tolist() == [4, 0, 2, 3, 0, 1] and outcome.predicted.tolist() == [4, 1, 2, 3, 0, 2]
        assert run.best_step() == 30


def test_every_figure_is_written_as_a_sensible_png():
    with workdir() as tmp:
        run = make_run(tmp)
        att = make_attention(tmp / "att.pt")
        stdout = assert_plotted(plot(run, "--attention", att))
        figures = run / "figures"
        expected = ["training-curves.png", "sst-dev-histogram.png", "para-dev-confusion.png", "sts-dev-histogram.png",
                    "attention-att-L0_Hall.png", "attention-att-L1_Hall.png", "attention-att-L2_Hall.png"]
        assert sorted(p.name for p in figures.iterdir()) == sorted(expected), "figures left behind or missing"
        for name in expected:
            assert f"wrote {figures / name}" in stdout, stdout
            assert_sensible_png(figures / name)
        assert "skipped" not in stdout, stdout


def test_attention_grids_by_index_range_and_name():
    with workdir() as tmp:
        att = make_attention(tmp / "att.pt")
        out = tmp / "figs"
        assert_plotted(plot("--attention", att, "--out", out, "--grid", "0-1:all", "--grid", "emd.0,0:1"))
        names = sorted(p.name for p in out.iterdir())
        assert names == ["attention-att-L0-1_Hall.png", "attention-att-Lemd.0+0_H1.png"], names
        for name in names:
            assert_sensible_png(out / name, min_side=200)


def test_a_file_named_attention_is_not_named_twice():
    with workdir() as tmp:
        att = make_attention(tmp / "attention.pt")
        out = tmp / "figs"
        assert_plotted(plot("--attention", att, "--out", out, "--grid", "0:all"))
        assert sorted(p.name for p in out.iterdir()) == ["attention-L0_Hall.png"]


def test_several_runs_overlay_their_curves():
    with workdir() as tmp:
        first = make_run(tmp / "a", name="seed1")
        second = make_run(tmp / "b", tasks=("sst", "sts"), name="seed1")  # same name: labelled by folder
        out = tmp / "compare"
        stdout = assert_plotted(plot(first, second, "--out", out))
        assert [p.name for p in out.iterdir()] == ["curves-comparison.png"], stdout
        assert_sensible_png(out / "curves-comparison.png")


def test_missing_tasks_and_predictions_are_skipped_with_a_line():
    with workdir() as tmp:
        run = make_run(tmp, tasks=("sst",), predictions=False)
        stdout = assert_plotted(plot(run))
        assert [p.name for p in (run / "figures").iterdir()] == ["training-curves.png"]
        skipped = [line for line in stdout.splitlines() if line.startswith("skipped ")]
        assert len(skipped) == 3, stdout
        assert any("paraphrase confusion matrix: the run has no para task" in line for line in skipped)
        assert any("STS histogram: the run has no sts task" in line for line in skipped)
        assert any("sst-dev-output.csv does not exist" in line for line in skipped)


def test_a_run_without_evaluations_yet_skips_its_curves():
    with workdir() as tmp:
        run = make_run(tmp, tasks=("sts",))
        (run / "metrics.jsonl").unlink()
        (run / "summary.json").write_text(json.dumps({"name": "run", "status": "running"}))
        stdout = assert_plotted(plot(run))
        assert "skipped training curves" in stdout and "wrote" in stdout


def test_a_torn_last_metrics_line_is_dropped_as_mtbert_does():
    with workdir() as tmp:
        run = make_run(tmp)
        with open(run / "metrics.jsonl", "a") as f:
            f.write('{"step": 50, "dev": {"ss')
        assert len(RunFolder(run).metrics) == 4
        assert_plotted(plot(run))


def test_malformed_inputs_are_one_line_and_exit_2():
    with workdir() as tmp:
        att = make_attention(tmp / "att.pt")
        assert_user_error(plot(tmp / "nowhere"), "nowhere", "is not a folder")
        (tmp / "empty").mkdir()
        assert_user_error(plot(tmp / "empty"), "empty", "config.resolved.yaml")
        assert_user_error(plot(), "nothing to draw")
        assert_user_error(plot("--unknown"), "unrecognized arguments")

        run = make_run(tmp / "r1")
        rows = (run / "metrics.jsonl").read_text().splitlines()
        (run / "metrics.jsonl").write_text("\n".join([rows[0], "{not json", *rows[1:]]) + "\n")
        assert_user_error(plot(run), "metrics.jsonl:2", "not valid JSON")
        (run / "metrics.jsonl").write_text(json.dumps({"epoch": 1}) + "\n")
        assert_user_error(plot(run), "metrics.jsonl:1", "step")

        run = make_run(tmp / "r2")
        (run / "summary.json").write_text("{")
        assert_user_error(plot(run), "summary.json", "not valid JSON")

        run = make_run(tmp / "r3")
        (run / "config.resolved.yaml").write_text("tasks: [unclosed\n")
        assert_user_error(plot(run), "config.resolved.yaml", "YAML")
        (run / "config.resolved.yaml").write_text(config_yaml({"sst": ("nli", tmp / "x.csv")}))
        assert_user_error(plot(run), "config.resolved.yaml", "tasks.sst.type", "nli")

        run = make_run(tmp / "r4")
        (run / "predictions" / "para-dev-output.csv").write_text("id \t Predicted_Sentiment \np1 , 1.0 \n")
        assert_user_error(plot(run), "para-dev-output.csv:1", "Predicted_Is_Paraphrase")
        write_predictions(run, "para", "Predicted_Is_Paraphrase", [("p1", "1.0"), ("p2", "yes")])
        assert_user_error(plot(run), "para-dev-output.csv:3")
        write_predictions(run, "para", "Predicted_Is_Paraphrase", [("p1", "1.0"), ("nope", "0.0")])
        assert_user_error(plot(run), "para-dev-output.csv", "nope", "para-dev.csv")
        write_predictions(run, "para", "Predicted_Is_Paraphrase", [("p1", "2.0")])
        assert_user_error(plot(run), "para-dev-output.csv", "2 is not a class index 0..1")
        write_predictions(run, "para", "Predicted_Is_Paraphrase", [("p1", "0.5")])
        assert_user_error(plot(run), "para-dev-output.csv", "0.5 is not a class index")
        assert not (run / "figures").exists()

        good = make_run(tmp / "r5")
        assert_user_error(plot(good, good), "--out")
        assert_user_error(plot(good, "--grid", "0:all"), "--grid", "--attention")
        assert_user_error(plot(good, "--attention", att, "--grid", "7:all"), "--grid", "outside 0..2")
        assert_user_error(plot(good, "--attention", att, "--grid", "0"), "LAYERS:HEADS")
        assert_user_error(plot(good, "--attention", att, "--grid", "0:x"), "'x' is not a head index")
        (tmp / "bad.pt").write_bytes(b"not a pickle")
        assert_user_error(plot(good, "--attention", tmp / "bad.pt"), "bad.pt", "torch.save")
        (tmp / "att.tokens.json").write_text(json.dumps({"tokens": TOKENS[:3], "layers": [], "heads": 2}))
        assert_user_error(plot(good, "--attention", att), "att.tokens.json", "tokens")
        # Nothing was drawn for a run whose inputs fail before plotting starts.
        assert not (good / "figures").exists()


def test_an_unwritable_out_folder_is_a_user_error():
    with workdir() as tmp:
        run = make_run(tmp)
        (tmp / "file").write_text("")
        assert_user_error(plot(run, "--out", tmp / "file" / "figs"), "cannot write")


if __name__ == "__main__":
    import sys
    sys.exit(run_tests(globals()))
