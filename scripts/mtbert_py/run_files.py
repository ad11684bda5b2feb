"""Reads what mtbert writes, for the figures: a training run's folder, with its
dev predictions set beside the gold labels of the data file they came from, and
the attention maps of `mtbert attention`.

A run folder's layout is the one of src/train/run_directory.h:

    config.resolved.yaml   every key of the experiment (tasks, their types and data files)
    metrics.jsonl          one JSON object per evaluation: step, epoch, lr,
                           train_loss {task: mean loss since the previous row},
                           dev {task: {metric, value, loss, examples}}, overall
    summary.json           best {step, epoch, dev, overall}, test, timing, sizes
    predictions/<task>-<split>-output.csv

Only config.resolved.yaml must exist (mtbert writes it first); the other files
appear as the run goes on. A file that exists but cannot be read as mtbert
writes it is a UserError naming the file (and the line).
"""
import csv
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import yaml

from .common import UserError, one_line, read_json


# --- Task types --------------------------------------------------------------
# The built-in task types as the figures need them, mirroring
# src/data/task_spec.cpp: the label column of their data files, the header of
# their prediction files, their target and names for their classes.


@dataclass(frozen=True)
class TaskType:
    name: str
    label_column: str
    prediction_column: str  # the leaderboard header of predictions/<task>-<split>-output.csv
    target: str             # "classes", "binary" or "regression"
    class_names: tuple = ()  # index -> name; empty for regression
    score_range: tuple = ()  # (low, high) of regression labels


TASK_TYPES = {
    t.name: t
    for t in (
        TaskType("sst", "sentiment", "Predicted_Sentiment", "classes",
                 ("negative", "somewhat negative", "neutral", "somewhat positive", "positive")),
        # "Similiarity" is the starter code's spelling, which the leaderboard expects.
        TaskType("para", "is_duplicate", "Predicted_Is_Paraphrase", "binary",
                 ("not paraphrase", "paraphrase")),
        TaskType("sts", "similarity", "Predicted_Similiarity", "regression", score_range=(0.0, 5.0)),
        TaskType("cfimdb", "sentiment", "Predicted_Sentiment", "binary", ("negative", "positive")),
    )
}


def task_type(name, where):
    """The built-in type `name`; UserError naming `where` otherwise."""
    try:
        return TASK_TYPES[name]
    except KeyError:
        raise UserError(f"{where}: unknown task type {name!r} (the built-in types are "
                        f"{', '.join(TASK_TYPES)})") from None


# --- The run folder ----------------------------------------------------------
# Its layout is the one at the top of this file.


@dataclass(frozen=True)
class RunTask:
    name: str      # the key under `tasks:`, which names its prediction files
    type: object   # TaskType
    dev: str       # the dev data file as the config spells it ("" for none)


class RunFolder:
    def __init__(self, root):
        self.root = Path(root)
        if not self.root.is_dir():
            raise UserError(f"{self.root} is not a folder")
        self.config_path = self.root / "config.resolved.yaml"
        self.metrics_path = self.root / "metrics.jsonl"
        self.summary_path = self.root / "summary.json"
        if not self.config_path.is_file():
            raise UserError(f"{self.root} is not a run folder (yet?): it has no config.resolved.yaml")
        self.config = _read_yaml(self.config_path)
        self.tasks = _read_tasks(self.config, self.config_path)
        self.metrics = _read_metrics(self.metrics_path) if self.metrics_path.exists() else []
        self.summary = _read_summary(self.summary_path) if self.summary_path.exists() else {}

    @property
    def name(self):
        """The run's name: summary.json's, else the config's, else the folder's."""
        for source in (self.summary, self.config):
            if isinstance(source.get("name"), str) and source["name"]:
                return source["name"]
        return self.root.resolve().name

    def prediction_file(self, task, split):
        return self.root / "predictions" / f"{task}-{split}-output.csv"

    def best_step(self):
        """The step of the best dev evaluation: summary.json's, else (a run
        still going) the first row with the highest overall score, as the
        trainer picks it; None without an overall score."""
        best = self.summary.get("best")
        if isinstance(best, dict) and isinstance(best.get("step"), int):
            return best["step"]
        scored = [row for row in self.metrics if "overall" in row]
        if not scored:
            return None
        return max(scored, key=lambda row: row["overall"])["step"]

    def task_names(self):
        """Tasks in the config's order, then any that only metrics.jsonl names."""
        names = [t.name for t in self.tasks]
        for row in self.metrics:
            for key in ("dev", "train_loss"):
                names += [n for n in row[key] if n not in names]
        return names


def _read_text(path):
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read {path}: {one_line(e)}") from None


def _read_yaml(path):
    try:
        config = yaml.safe_load(_read_text(path))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise UserError(f"{where}: not valid YAML: {one_line(getattr(e, 'problem', None) or e)}") from None
    if not isinstance(config, dict):
        raise UserError(f"{path}: not an experiment config (expected a map of keys)")
    return config


def _config_string(value):
    # resolved_yaml doubles every `$` so that reading it back expands nothing.
    return value.replace("$$", "$") if isinstance(value, str) else value


def _read_tasks(config, path):
    tasks = config.get("tasks")
    if not isinstance(tasks, dict) or not tasks:
        raise UserError(f"{path}: no `tasks` map")
    result = []
    for name, task in tasks.items():
        if not isinstance(task, dict):
            raise UserError(f"{path}: tasks.{name} is not a map")
        type_name = task.get("type", name)
        dev = _config_string(task.get("dev", ""))
        if not isinstance(type_name, str) or not isinstance(dev, str):
            raise UserError(f"{path}: tasks.{name}.type and .dev must be strings")
        result.append(RunTask(str(name), task_type(type_name, f"{path}: tasks.{name}.type"), dev))
    return result


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_metrics_row(row, where):
    if not isinstance(row, dict):
        raise UserError(f"{where}: not a JSON object")
    if not isinstance(row.get("step"), int) or isinstance(row.get("step"), bool):
        raise UserError(f"{where}: no integer `step`")
    row.setdefault("train_loss", {})
    row.setdefault("dev", {})
    if not isinstance(row["train_loss"], dict) or not all(_is_number(v) for v in row["train_loss"].values()):
        raise UserError(f"{where}: `train_loss` is not a map of task -> number")
    if not isinstance(row["dev"], dict):
        raise UserError(f"{where}: `dev` is not a map of task -> result")
    for task, result in row["dev"].items():
        if not isinstance(result, dict) or not _is_number(result.get("value")) or \
                not isinstance(result.get("metric"), str):
            raise UserError(f"{where}: dev.{task} has no numeric `value` and `metric`")
    if "overall" in row and not _is_number(row["overall"]):
        raise UserError(f"{where}: `overall` is not a number")


def _read_metrics(path):
    """The rows of metrics.jsonl. A last line without its newline that does
    not parse was torn by a crash and is dropped, as mtbert itself does."""
    text = _read_text(path)
    lines = text.split("\n")
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            if number == len(lines):  # no newline after it: torn
                break
            raise UserError(f"{path}:{number}: not valid JSON: {e.msg}") from None
        _check_metrics_row(row, f"{path}:{number}")
        rows.append(row)
    return rows


def _read_summary(path):
    try:
        summary = json.loads(_read_text(path))
    except json.JSONDecodeError as e:
        raise UserError(f"{path}: not valid JSON: {e.msg} at line {e.lineno}") from None
    if not isinstance(summary, dict):
        raise UserError(f"{path}: not a JSON object")
    best = summary.get("best")
    if best is not None and not isinstance(best, dict):
        raise UserError(f"{path}: `best` is not an object")
    return summary


# --- Prediction files --------------------------------------------------------
# The CS224N leaderboard layout that mtbert writes (src/data/prediction_file.h):
#
#     id \t Predicted_Sentiment \n
#     a7d575c9ed86ea9633660c67e , 3 \n


def read_predictions(path, task_type):
    """{id: prediction} of the file, in its order; UserError naming the file
    and line for a wrong header, a malformed row or a repeated id."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read {path}: {one_line(e)}") from None
    header = [field.strip() for field in lines[0].split("\t")]
    if header != ["id", task_type.prediction_column]:
        raise UserError(f"{path}:1: header {lines[0].strip()!r} is not 'id <tab> {task_type.prediction_column}'")
    predictions = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        example_id, comma, value = line.rpartition(",")
        example_id = example_id.strip()
        try:
            if not comma or not example_id:
                raise ValueError
            prediction = float(value)
        except ValueError:
            raise UserError(f"{path}:{number}: {line.strip()!r} is not 'id , prediction'") from None
        if example_id in predictions:
            raise UserError(f"{path}:{number}: id {example_id} appears twice")
        predictions[example_id] = prediction
    return predictions


# --- Gold labels of a data file ----------------------------------------------
# CS224N data files: tab-separated, UTF-8, a header row whose first column is an
# unnamed row index, fields optionally quoted with `"` (Python's csv.reader with
# delimiter '\t', the way the starter code and mtbert's own reader take them;
# see src/data/tsv_reader.h).


def read_gold_labels(path, task_type):
    """{id: label} of `path`, in its order; None when the file has no label
    column (a test split). Rows without a numeric label are left out: mtbert
    either skipped them (on_bad_row: skip) or refused the file, so no
    prediction refers to them. UserError when the file cannot be read or has
    no id column."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            records = [r for r in csv.reader(f, delimiter="\t") if any(field.strip() for field in r)]
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise UserError(f"cannot read {path}: {one_line(e)}") from None
    if not records:
        raise UserError(f"{path}: empty file, no header row")
    names = [name.strip() for name in records[0]]
    if "id" not in names:
        raise UserError(f"{path}: no `id` column in its header row")
    if task_type.label_column not in names:
        return None
    id_at, label_at = names.index("id"), names.index(task_type.label_column)
    labels = {}
    for record in records[1:]:
        try:
            labels[record[id_at].strip()] = float(record[label_at])
        except (IndexError, ValueError):
            continue
    return labels


# --- Dev outcomes ------------------------------------------------------------
# A task's dev predictions beside its gold labels: the run's prediction file
# joined by id with the dev data file that config.resolved.yaml names.


@dataclass
class DevOutcome:
    task: object          # RunTask
    gold: np.ndarray      # float64, one per predicted example, in the prediction file's order
    predicted: np.ndarray


def join_by_id(gold, predictions, predictions_path, gold_path):
    """(gold, predicted) arrays over the ids of `predictions`, in its order.
    Gold ids without a prediction are left out (a run may use the first
    limit_dev rows only); a predicted id missing from the gold labels means the
    files do not belong together: UserError."""
    missing = [i for i in predictions if i not in gold]
    if missing:
        raise UserError(f"{predictions_path}: {len(missing)} id(s) are not in {gold_path} (e.g. {missing[0]}); "
                        f"was the dev file changed after the run?")
    ids = list(predictions)
    return (np.array([gold[i] for i in ids], dtype=np.float64),
            np.array([predictions[i] for i in ids], dtype=np.float64))


def load_dev_outcome(run, task):
    """(DevOutcome, None), or (None, why not) when the run lacks what it needs."""
    predictions_path = run.prediction_file(task.name, "dev")
    if not task.dev:
        return None, f"task {task.name} has no dev data in {run.config_path}"
    if not predictions_path.is_file():
        return None, f"{predictions_path} does not exist (has the run finished?)"
    # Relative data paths are read from the current directory, as mtbert reads them.
    dev_path = Path(task.dev)
    if not dev_path.is_file():
        return None, f"the dev file of task {task.name}, {dev_path}, is not here (relative paths are read " \
                     f"from the current directory, as mtbert does)"
    predictions = read_predictions(predictions_path, task.type)
    gold = read_gold_labels(dev_path, task.type)
    if gold is None:
        return None, f"{dev_path} has no {task.type.label_column} column"
    gold_values, predicted = join_by_id(gold, predictions, predictions_path, dev_path)
    if len(predicted) == 0:
        return None, f"{predictions_path} has no predictions"
    not_finite = int(np.sum(~np.isfinite(predicted)))
    if not_finite:
        return None, f"{predictions_path} holds {not_finite} prediction(s) that are not finite (a diverged run?)"
    if task.type.class_names:
        _check_classes(predicted, len(task.type.class_names), predictions_path)
        _check_classes(gold_values, len(task.type.class_names), dev_path)
    return DevOutcome(task, gold_values, predicted), None


def _check_classes(values, count, path):
    bad = values[(values != np.rint(values)) | (values < 0) | (values >= count)]
    if bad.size:
        raise UserError(f"{path}: {bad[0]:g} is not a class index 0..{count - 1}")


# --- Attention maps ----------------------------------------------------------
# What `mtbert attention` writes (src/cli/attention_command.cpp):
#
#     OUT.pt            torch.save dict: attentions float32 [layers, heads, N, N]
#                       (row i: how query token i spreads over the keys), input_ids [N]
#     OUT.tokens.json   {"tokens": [N], "layers": ["layer.0", ..., "emd.0"], "heads": H,
#                        "model": DIR, "text": ..., "text2": ... or null}


@dataclass
class AttentionMaps:
    path: Path
    attentions: np.ndarray  # [layers, heads, N, N]
    tokens: list
    layers: list            # layer names, one per attentions[i]
    model: str
    text: str
    text2: object           # str or None


def tokens_path(path):
    """OUT.pt -> OUT.tokens.json, as mtbert attention names it."""
    path = Path(path)
    stem = path.with_suffix("") if path.suffix == ".pt" else path
    return stem.with_name(stem.name + ".tokens.json")


def read_attention_maps(path):
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path} does not exist")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for a file that is not its own
        raise UserError(f"{path}: not a torch.save file of tensors: {one_line(e)}") from None
    attentions = data.get("attentions") if isinstance(data, dict) else None
    if not isinstance(attentions, torch.Tensor) or attentions.dim() != 4 or \
            attentions.shape[2] != attentions.shape[3] or not attentions.is_floating_point():
        raise UserError(f"{path}: no `attentions` float tensor [layers, heads, N, N] (written by mtbert attention?)")
    sidecar_path = tokens_path(path)
    sidecar = read_json(sidecar_path)
    layers_n, heads_n, n = attentions.shape[:3]
    if not isinstance(sidecar, dict):
        raise UserError(f"{sidecar_path}: not a JSON object")
    tokens, layers = sidecar.get("tokens"), sidecar.get("layers")
    if not isinstance(tokens, list) or len(tokens) != n or not all(isinstance(t, str) for t in tokens):
        raise UserError(f"{sidecar_path}: `tokens` is not a list of {n} strings, one per token of {path}")
    if not isinstance(layers, list) or len(layers) != layers_n or sidecar.get("heads") != heads_n:
        raise UserError(f"{sidecar_path}: `layers` and `heads` do not match the {layers_n} x {heads_n} maps of {path}")
    return AttentionMaps(path, attentions.float().numpy(), tokens, [str(x) for x in layers],
                         str(sidecar.get("model", "")), str(sidecar.get("text", "")), sidecar.get("text2"))
