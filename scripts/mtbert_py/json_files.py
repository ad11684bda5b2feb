"""Reading and writing the small JSON files of model folders."""
import json
from pathlib import Path

from .errors import UserError, one_line


def read_json(path):
    """Parses a JSON file; UserError with the position of a syntax error."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UserError(f"cannot read {path}: {one_line(e)}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise UserError(f"{path} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None


def write_json(path, value):
    Path(path).write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
