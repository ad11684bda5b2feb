"""A task's dev predictions beside its gold labels: the run's prediction file
joined by id with the dev data file that config.resolved.yaml names."""
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import UserError
from .labeled_data import read_gold_labels
from .prediction_files import read_predictions


@dataclass
class DevOutcome:
    task: object          # RunTask
    gold: np.ndarray      # float64, one per predicted example, in the prediction file's order
    predicted: np.ndarray
    predictions_path: Path
    dev_path: Path


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
    return DevOutcome(task, gold_values, predicted, predictions_path, dev_path), None


def _check_classes(values, count, path):
    bad = values[(values != np.rint(values)) | (values < 0) | (values >= count)]
    if bad.size:
        raise UserError(f"{path}: {bad[0]:g} is not a class index 0..{count - 1}")
