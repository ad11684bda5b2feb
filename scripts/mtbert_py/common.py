"""What every script shares: the error a user can cause, and files that are
read with messages naming them and are never left half-written.

UserError is the one exception type for mistakes a user can make (bad paths,
files, configs). Scripts catch it at the top, print a single
`<script>: error: ...` line and exit with code 2; any other exception is a bug
and keeps its traceback.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path


class UserError(Exception):
    pass


def one_line(text):
    """Collapses whitespace so that a message (ours or one quoted from torch/json)
    stays on the single line the scripts promise."""
    return " ".join(str(text).split())


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are UserErrors: argparse would print the usage
    too, and the scripts promise one line and exit code 2."""

    def error(self, message):
        raise UserError(message)


def run_main(prog, body):
    """Runs body(); a UserError becomes the line `<prog>: error: ...` on
    stderr and exit code 2. Returns the exit code."""
    try:
        body()
    except UserError as e:
        print(f"{prog}: error: {one_line(e)}", file=sys.stderr)
        return 2
    return 0


# --- JSON files --------------------------------------------------------------
# Reading and writing the small JSON files of model folders.


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


# --- Whole folders, written atomically ---------------------------------------
# Readers see either the old folder or the complete new one, never a half-written
# one: it is filled under a temporary sibling name and renamed into place at the
# end (a rename within one parent folder is atomic).


def check_writable_target(out_dir, force):
    """Fails early, before any slow work, when out_dir cannot be (re)placed."""
    out_dir = Path(out_dir)
    if out_dir.exists() or out_dir.is_symlink():
        if not force:
            raise UserError(f"{out_dir} already exists; pass --force to replace it")
        if out_dir.is_symlink() or not out_dir.is_dir():
            raise UserError(f"{out_dir} exists and is not a folder; refusing to replace it")


def write_folder_atomically(out_dir, fill, force=False):
    """Calls fill(tmp_dir) to write the contents, then puts tmp_dir at out_dir.
    With force, an existing out_dir is replaced only after fill has succeeded.
    On any failure the temporary folder is removed and out_dir is untouched."""
    out_dir = Path(out_dir)
    parent = out_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.partial-", dir=parent))
    try:
        # mkdtemp makes the folder private (0700); give it the permissions a plain mkdir would.
        os.chmod(tmp, 0o777 & ~_umask())
        fill(tmp)
        check_writable_target(out_dir, force)
        if out_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=parent))
            os.rename(out_dir, old / out_dir.name)
            try:
                os.rename(tmp, out_dir)
            except OSError:
                os.rename(old / out_dir.name, out_dir)
                raise
            shutil.rmtree(old)
        else:
            os.rename(tmp, out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
