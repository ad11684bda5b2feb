"""Reads the gold labels of a CS224N data file: tab-separated, UTF-8, a header
row whose first column is an unnamed row index, fields optionally quoted with
`"` (Python's csv.reader with delimiter '\\t', the way the starter code and
mtbert's own reader take them; see src/data/tsv_reader.h)."""
import csv

from .errors import UserError, one_line


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

