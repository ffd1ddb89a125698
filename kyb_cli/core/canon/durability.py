"""What survives a power loss: fsync of Git objects, refs, the journal and the files kyb writes.

On by default; `KYB_FSYNC=off` turns it off (benchmarks, throwaway stores). libgit2 fsyncs loose
objects, packs and refs when its ENABLE_FSYNC_GITDIR option is set (libgit2 `git_libgit2_opts`,
exposed by pygit2 as `pygit2.option(pygit2.enums.Option.ENABLE_FSYNC_GITDIR, True)`); kyb fsyncs
what it writes itself (journal, working-tree files) and their directories. The cost is measured by
bench/bench_fsync.py.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`


def enabled() -> bool:
    from kyb_cli.core.settings import env_off

    return not env_off("KYB_FSYNC")


def configure_libgit2() -> bool:
    """Set libgit2's fsync option to match KYB_FSYNC (process-wide, cheap); returns the setting."""
    import pygit2

    on = enabled()
    pygit2.option(pygit2.enums.Option.ENABLE_FSYNC_GITDIR, on)
    return on


def fsync_file(fd: int) -> None:
    if enabled():
        os.fsync(fd)


def fsync_dir(path: Path) -> None:
    """Make a rename or unlink in `path` durable (a no-op where directories cannot be opened)."""
    if not enabled():
        return
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_durably(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `path` (a temp file in the caller's hands), fsynced when durability is on."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        fsync_file(fd)
    finally:
        os.close(fd)
