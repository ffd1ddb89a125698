"""A full disk is a clear store error (exit 4) that names the store and what to free."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from kyb_cli.core.errors import StoreError

_FULL_WORDS = ("no space left", "disk is full", "disk quota exceeded")


LOW_SPACE = 1024 * 1024  # below this, a failed write is taken for a full disk


def low_space(path: Path) -> bool:
    try:
        return shutil.disk_usage(path).free < LOW_SPACE
    except OSError:
        return False


def is_disk_full(exc: BaseException, path: Path | None = None) -> bool:
    """ENOSPC/EDQUOT from the OS, libgit2 or SQLite (apsw.FullError), or any write failure while the
    filesystem of `path` has (almost) no room left: libgit2 can report a full disk with a stale
    error text from an earlier call (seen: "index does not contain …")."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if getattr(exc, "disk_full", False):  # our own disk_full_error, raised further down
        return True
    if type(exc).__name__ == "FullError":
        return True
    if any(word in str(exc).lower() for word in _FULL_WORDS):
        return True
    return path is not None and low_space(Path(path))


def _free(path: Path) -> str:
    for candidate in (path, *path.parents):
        try:
            return f"{shutil.disk_usage(candidate).free / 1024:,.0f} KiB free"
        except OSError:
            continue
    return "no space free"


def disk_full_error(store_path: Path, *, written: bool = False) -> StoreError:
    """The message for a write (or an index update) that the disk had no room for."""
    store_path = Path(store_path)
    what = ("the write is committed, but the store's files could not all be updated"
            if written else "nothing was written")
    index = Path(store_path) / ".git" / "kyb" / "index.sqlite"
    err = StoreError(
        f"the disk holding the store {store_path} is full ({_free(store_path)}): {what} — free some "
        f"space on that filesystem (deleting {index} frees the search index, kyb rebuilds it) and try again",
        path=os.fspath(store_path))
    err.disk_full = True
    return err
