"""Reads prediction files in the CS224N leaderboard layout that mtbert writes
(src/data/prediction_file.h):

    id \t Predicted_Sentiment \n
    a7d575c9ed86ea9633660c67e , 3 \n
"""
from .errors import UserError, one_line


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
