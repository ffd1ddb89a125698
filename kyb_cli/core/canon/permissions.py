"""A store this user cannot write is a clear store error (exit 4) that names the path and the fix.

A write needs `.git` (index.lock), `.git/objects`, `.git/refs`, `.git/kyb` (lock, journal) and the
record directories. `refuse_unwritable` checks them before the writer lock is even taken, so a
read-only directory refuses the write with nothing written — instead of a raw "Permission denied"
halfway, or a commit whose files cannot reach the working tree. `permission_error` words any
EACCES/EPERM/EROFS met later (a read-only subdirectory of objects/, say) the same way. Reads need
none of this: they answer from Git, and the index falls back to the user cache (index/fresh.py).
"""

from __future__ import annotations

import errno
import os
import re
import shlex
from pathlib import Path

from kyb_cli.core.errors import StoreError
from kyb_cli.core.records.keys import RECORD_DIRS

_DENIED = (errno.EACCES, errno.EPERM, errno.EROFS)
_DENIED_WORDS = ("permission denied", "read-only file system", "operation not permitted")
_QUOTED_PATH = re.compile(r"'(/[^']+)'")


def refuse_unwritable(store_path: Path, git_dir: Path) -> None:
    """StoreError naming the first directory a write creates files in that this process cannot
    write (one access(2) each, ~10 in all; a missing record directory: the store root instead)."""
    git, root = os.fspath(git_dir), os.fspath(store_path)
    writable = lambda path: os.access(path, os.W_OK | os.X_OK)  # noqa: E731
    for path in (git, f"{git}/objects", f"{git}/refs", f"{git}/refs/heads", f"{git}/logs", f"{git}/kyb"):
        if not writable(path) and os.path.isdir(path):
            raise permission_error(store_path, Path(path))
    for path in (f"{root}/{name}" for name in RECORD_DIRS):
        if writable(path):
            continue
        if os.path.isdir(path):
            raise permission_error(store_path, Path(path))
        if not os.path.lexists(path) and not writable(root):
            raise permission_error(store_path, Path(root))  # the record directory must be created there


def denied_path(exc: BaseException) -> Path | None:
    """The path an OS or libgit2 error says permission was denied on, or None (not such an error)."""
    if isinstance(exc, OSError) and exc.errno in _DENIED:
        return Path(exc.filename) if exc.filename else Path()
    text = str(exc)
    if not any(word in text.lower() for word in _DENIED_WORDS):
        return None
    found = _QUOTED_PATH.search(text)
    return Path(found.group(1)) if found else Path()


def permission_error(store_path: Path, path: Path) -> StoreError:
    """`the store S cannot be written: P is not writable by U — nothing was written; fix: …`."""
    store_path = Path(store_path)
    path = _named(store_path, path)
    return StoreError(f"the store {store_path} cannot be written: {path} {_why(path)} — nothing was written; "
                      f"fix: {_fix(path)}, then write again (reads keep answering meanwhile)",
                      path=os.fspath(path))


def io_error(exc: OSError) -> StoreError:
    """The store error any door gives for an OSError that reached it: a permission error names the
    path and the fix (no store is known here, so nothing is claimed about what was written)."""
    denied = denied_path(exc)
    if denied is None or not denied.is_absolute():
        return StoreError(f"I/O error: {exc}")
    path = _named(Path(denied.anchor), denied)
    return StoreError(f"cannot write {path}: it {_why(path)}; fix: {_fix(path)}, then run the command again",
                      path=os.fspath(path))


def denied_reason(store_path: Path, path: Path) -> str:
    """`P is not writable by U; fix: …`: the cause in a warning after the branch moved."""
    path = _named(Path(store_path), path)
    return f"{path} {_why(path)}; fix: {_fix(path)}"


def _named(store_path: Path, path: Path) -> Path:
    """The directory to name: `path`'s own when it is a file or not there (a temp file's); the
    store when the OS said no path or a relative one."""
    path = Path(path) if Path(path).is_absolute() else store_path
    if path.is_file() or not path.exists():
        path = path.parent if path.parent.is_dir() else store_path
    return path


def _user(uid: int) -> str:
    try:
        import pwd

        return pwd.getpwuid(uid).pw_name
    except (ImportError, KeyError):
        return f"uid {uid}"


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _why(path: Path) -> str:
    if _read_only_mount(path):
        return "is on a filesystem mounted read-only"
    return f"is not writable by {_user(os.geteuid())}"


def _fix(path: Path) -> str:
    if _read_only_mount(path):
        return "remount that filesystem read-write, or clone the store elsewhere (kyb init --clone)"
    try:
        owner = path.stat().st_uid
    except OSError:
        owner = os.geteuid()
    if owner != os.geteuid():
        return (f"run kyb as {_user(owner)}, who owns {shlex.quote(str(path))}, or have them give you "
                f"write access to it")
    return f"chmod u+w {shlex.quote(str(path))}"
