"""Writes a whole folder so that readers see either the old one or the complete
new one, never a half-written one: it is filled under a temporary sibling name
and renamed into place at the end (a rename within one parent folder is atomic).
"""
import os
import shutil
import tempfile
from pathlib import Path

from .errors import UserError


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
