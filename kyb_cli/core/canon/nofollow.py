"""Never outside, never through a link: working-tree file access without following symlinks.

Every path is checked by the key authority's `unsafe_path` (no `..`, no `.git` component in any
spelling, so no file under `.git` is ever written from a tree) and opened component by component
from the store's root with O_NOFOLLOW (O_DIRECTORY for directories), so a symlink anywhere below the
root — whoever put it there — stops the write or read with a clear error (LinkInTheWay, exit 4)
instead of being followed. The root itself may be a link: where a user keeps the store is their
choice. No pygit2 here: the deadlines block after every query reads tasks through this module.
"""

from __future__ import annotations

import errno
import os
import stat

from kyb_cli.core.errors import StoreError
from kyb_cli.core.records.keys import unsafe_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # no effect on a regular file; a FIFO is refused, not waited on


class LinkInTheWay(StoreError):
    """A working-tree path passes through a symlink, or a directory is not one (exit 4)."""


def _parts(path: str) -> list[str]:
    reason = unsafe_path(path)
    if reason is not None:
        raise StoreError(f"refusing the working-tree path {path!r}: {reason}")
    return path.split("/")


def _link_error(root: Path, rel: str) -> LinkInTheWay:
    from pathlib import Path  # only for the message: a `kyb query` imports no pathlib (issue 38)

    return LinkInTheWay(
        f"{rel} in the store is a symbolic link or not a plain directory/file; kyb never writes or "
        f"reads through links — replace it with a plain one (rm {Path(root) / rel}) and try again")


def _open_dir(root: Path, parts: list[str], *, create: bool) -> int:
    """A directory fd for `parts` (a list of components) below `root`, each opened with O_NOFOLLOW."""
    fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    try:
        for n, part in enumerate(parts):
            try:
                nfd = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o777, dir_fd=fd)
                nfd = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _link_error(root, "/".join(parts[:n + 1])) from None
                raise
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


def read_file(root: Path, path: str) -> bytes | None:
    """The bytes of working-tree `path`, None when absent; LinkInTheWay when a link is in the way."""
    parts = _parts(path)
    try:
        dfd = _open_dir(root, parts[:-1], create=False)
    except FileNotFoundError:
        return None
    try:
        try:
            fd = os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=dfd)  # a FIFO never blocks
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
                raise _link_error(root, path) from None
            raise
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise _link_error(root, path)
            return fh.read()
    finally:
        os.close(dfd)


def names_in(root: Path, directory: str) -> set[str] | None:
    """The names in working-tree `directory` (no link followed): an empty set when it does not
    exist, None when that cannot be told (a link or a file in the way, unreadable): ask per path."""
    try:
        dfd = _open_dir(root, _parts(directory) if directory else [], create=False)
    except FileNotFoundError:
        return set()
    except (OSError, StoreError):
        return None
    try:
        return set(os.listdir(dfd))
    except OSError:
        return None
    finally:
        os.close(dfd)


def read_files(root: Path, directory: str, keep, *, buckets: bool = False) -> dict[str, bytes]:
    """The bytes of the regular files directly in working-tree `directory` whose name `keep(name)`
    accepts, in name order, read through one directory fd (the deadlines block after every query
    reads every task: one open each, no separate stat). Links (O_NOFOLLOW), FIFOs, anything not a
    regular file, unreadable files and names the key authority refuses are left out. `buckets`: the
    files of its two-hex-character bucket directories too (records/keys.py), named `<h>/<name>`."""
    try:
        dfd = _open_dir(root, _parts(directory), create=False)
    except (FileNotFoundError, LinkInTheWay):
        return {}
    out: dict[str, bytes] = {}
    try:
        _read_dir(dfd, keep, "", out, buckets)
    finally:
        os.close(dfd)
    return dict(sorted(out.items()))


_HEX = frozenset("0123456789abcdef")


def _read_dir(dfd: int, keep, prefix: str, out: dict[str, bytes], buckets: bool) -> None:
    from kyb_cli.core.records.keys import unsafe_component

    for name in sorted(os.listdir(dfd)):
        if buckets and len(name) == 2 and set(name) <= _HEX:
            try:
                sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=dfd)
            except OSError:
                continue  # a link, a file named like a bucket, unreadable: left out
            try:
                _read_dir(sub, keep, f"{name}/", out, False)
            finally:
                os.close(sub)
            continue
        if not keep(name) or unsafe_component(name) is not None:
            continue
        try:
            fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK, dir_fd=dfd)
        except OSError:
            continue
        try:
            size = os.fstat(fd)
            if not stat.S_ISREG(size.st_mode):
                continue
            chunks = [os.read(fd, size.st_size + 1)]
            while len(chunks[-1]) and sum(map(len, chunks)) > size.st_size:  # it grew meanwhile
                chunks.append(os.read(fd, 65536))
            out[prefix + name] = b"".join(chunks)
        except OSError:
            continue
        finally:
            os.close(fd)


def write_replace(dfd: int, tmp: str, name: str, data: bytes, executable: bool, *, durable: bool) -> None:
    """Write `data` to `tmp` in directory `dfd`, then rename it over `name`; a failure (a full disk)
    leaves no half-written temp file. `durable`: fsync the file and the directory (KYB_FSYNC)."""
    from kyb_cli.core.canon import durability

    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o777 if executable else 0o666,
                     dir_fd=dfd)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                durability.fsync_file(fh.fileno())
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except OSError:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        raise
    if durable:
        durability.fsync_file(dfd)


def remove_file(root: Path, path: str) -> None:
    """Remove working-tree `path` (a link there is removed, never followed) and directories it empties."""
    parts = _parts(path)
    try:
        dfd = _open_dir(root, parts[:-1], create=False)
    except (FileNotFoundError, LinkInTheWay):
        return
    try:
        os.unlink(parts[-1], dir_fd=dfd)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        pass
    finally:
        os.close(dfd)
    for depth in range(len(parts) - 1, 0, -1):
        try:
            pfd = _open_dir(root, parts[:depth - 1], create=False)
        except (FileNotFoundError, LinkInTheWay):
            return
        try:
            os.rmdir(parts[depth - 1], dir_fd=pfd)
        except OSError:
            return
        finally:
            os.close(pfd)


class Dirs:
    """Directory fds opened once each (no-follow, as `_open_dir`) for many writes in one call:
    a sync that brings 50,000 files along opens each directory once, not once per file."""

    def __init__(self, root: Path) -> None:
        from pathlib import Path

        self.root = Path(root)
        self.fds: dict[tuple[str, ...], int] = {}

    def __enter__(self) -> "Dirs":
        return self

    def __exit__(self, *exc) -> None:
        from kyb_cli.core.canon import durability

        for fd in self.fds.values():
            try:
                durability.fsync_file(fd)
            except OSError:
                pass
            os.close(fd)
        self.fds.clear()

    def _dir(self, parts: tuple[str, ...]) -> int:
        fd = self.fds.get(parts)
        if fd is None:
            fd = _open_dir(self.root, list(parts), create=True)
            self.fds[parts] = fd
        return fd

    def write(self, path: str, data: bytes, *, executable: bool = False) -> None:
        parts = _parts(path)
        dfd = self._dir(tuple(parts[:-1]))
        tmp = f".{parts[-1]}.kyb-{os.getpid()}.tmp"
        # Many files in one call (a sync): no fsync per file; the directories are fsynced on exit.
        # The working tree is not the canon: what a power loss takes, HEAD and the journal restore.
        write_replace(dfd, tmp, parts[-1], data, executable, durable=False)
