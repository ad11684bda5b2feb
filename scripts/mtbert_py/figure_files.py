"""matplotlib set up for files only (the Agg backend, no display needed), and
PNGs written atomically: under a temporary name beside the target, then
renamed over it, so that a reader never sees half a figure."""
import os
import warnings
from pathlib import Path

import matplotlib

from .errors import UserError, one_line

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

DPI = 120

# Tokens and texts may hold characters DejaVu Sans lacks; matplotlib draws a
# box for them, and its warning about each would drown the script's output.
warnings.filterwarnings("ignore", message="Glyph .* missing from")


def plain(text):
    """Text shown as is: matplotlib reads a pair of `$` as mathtext."""
    return str(text).replace("$", r"\$")


def save_png(fig, path):
    """Writes fig to path (creating its folder) and closes it."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            fig.savefig(tmp, format="png", dpi=DPI)
            os.replace(tmp, path)
        finally:
            if tmp.exists():
                tmp.unlink()
    except OSError as e:
        raise UserError(f"cannot write {path}: {one_line(e)}") from None
    finally:
        plt.close(fig)
    return path
