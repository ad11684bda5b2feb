"""The built-in task types as the figures need them, mirroring
src/data/task_spec.cpp: the label column of their data files, the header of
their prediction files, their target and metric, and names for their classes."""
from dataclasses import dataclass

from .errors import UserError


@dataclass(frozen=True)
class TaskType:
    name: str
    label_column: str
    prediction_column: str  # the leaderboard header of predictions/<task>-<split>-output.csv
    target: str             # "classes", "binary" or "regression"
    metric: str             # "accuracy" or "pearson"
    class_names: tuple = ()  # index -> name; empty for regression
    score_range: tuple = ()  # (low, high) of regression labels


TASK_TYPES = {
    t.name: t
    for t in (
        TaskType("sst", "sentiment", "Predicted_Sentiment", "classes", "accuracy",
                 ("negative", "somewhat negative", "neutral", "somewhat positive", "positive")),
        # "Similiarity" is the starter code's spelling, which the leaderboard expects.
        TaskType("para", "is_duplicate", "Predicted_Is_Paraphrase", "binary", "accuracy",
                 ("not paraphrase", "paraphrase")),
        TaskType("sts", "similarity", "Predicted_Similiarity", "regression", "pearson", score_range=(0.0, 5.0)),
        TaskType("cfimdb", "sentiment", "Predicted_Sentiment", "binary", "accuracy", ("negative", "positive")),
    )
}


def task_type(name, where):
    """The built-in type `name`; UserError naming `where` otherwise."""
    try:
        return TASK_TYPES[name]
    except KeyError:
        raise UserError(f"{where}: unknown task type {name!r} (the built-in types are "
                        f"{', '.join(TASK_TYPES)})") from None
