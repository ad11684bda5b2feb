"""Reads a training run's folder for the figures. The layout is the one of
src/train/run_directory.h:

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
import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import UserError, one_line
from .task_types import task_type


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
