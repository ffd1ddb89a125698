"""A long-lived door's watch on working-tree `tasks/` (Linux inotify): while the kernel has reported
no change, the deadlines block's files are the ones read last time, with no lstat a path (kinds/
undated_fast.py: 677 of them an answer at 10k keys, ~1.8 ms; ~5,300 at 100k).

What is watched: `tasks/`, each bucket and each task file, every one by its inode — a file's own
watch reports a write through any of its names, a hard link's made elsewhere too, and a directory's
reports a name added, removed or renamed. Watches are armed before the caller reads the files, so a
change made while they are read reaches the next answer. The answer is reused only while nothing at
all was reported and `tasks/` is still the directory armed; any event (an overflow of the queue
included) ends the watch and the caller reads as before (kinds/undated.py), arming a new one.

Trusted only where every change passes through this machine's kernel: local filesystems by their
statfs magic (`_LOCAL`); NFS, SMB, FUSE, 9p or virtiofs (whose files another machine may change)
are never watched. No inotify, no /proc, a watch limit reached: no watch, and each answer stats
as before. Not seen until the file is closed: a write through a shared memory map.
"""

from __future__ import annotations

import _thread
import errno
import os

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_ONLYDIR, IN_DONT_FOLLOW = 0x01000000, 0x02000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF)

# statfs f_type of filesystems whose every change is made through this kernel: ext2/3/4, xfs, btrfs,
# tmpfs, overlayfs, zfs, f2fs, bcachefs, ramfs, jfs, reiserfs, nilfs2.
_LOCAL = frozenset({0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x794C7630, 0x2FC12FC1, 0xF2F52010,
                    0xCA451A4E, 0x858458F6, 0x3153464A, 0x52654973, 0x3434})


class Unwatchable(Exception):
    """This store's tasks/ cannot be watched here (kernel, limits, filesystem): stat it instead."""


class Watch:
    """The inotify instance armed on one `tasks/`. `quiet()` is True while the kernel has reported
    nothing since it was armed; once anything is reported it stays False (a reader that lost the
    race for the events must not take the queue's emptiness for quiet)."""

    __slots__ = ("fd", "pid", "ident", "changed", "lock")

    def __init__(self, fd: int, ident: tuple[int, int]) -> None:
        self.fd, self.pid, self.ident, self.changed = fd, os.getpid(), ident, False
        self.lock = _thread.allocate_lock()

    def quiet(self, path: str) -> bool:
        """Nothing reported, and `path` (tasks/) is still the directory armed (a store moved away and
        another put in its place is not a change inside the one watched)."""
        with self.lock:
            if self.changed or os.getpid() != self.pid:  # a fork shares the queue: the child re-arms
                return False
            try:
                os.read(self.fd, 4096)
            except BlockingIOError:
                pass
            except OSError:
                self.changed = True
                return False
            else:
                self.changed = True
                return False
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.ident

    def close(self) -> None:
        with self.lock:
            self.changed = True
            if self.pid == os.getpid():
                try:
                    os.close(self.fd)
                except OSError:
                    pass


def arm(tfd: int, path: str, wanted) -> Watch:
    """A watch on the open directory `tfd` (tasks/, at `path`), its buckets (`wanted(name)` says
    "bucket") and every name in them `wanted` accepts, armed before the caller lists and reads them.
    Raises Unwatchable when this store or this machine cannot be watched.

    tasks/ is watched through its open descriptor, so the watch is on the directory the caller reads;
    what is below it by path, with no link followed at the end (half the cost of a /proc path): a
    bucket swapped for another between the listing and its watch is a rename in tasks/, which that
    first watch reports."""
    libc = _libc()
    if not _local(libc, tfd):
        raise Unwatchable("not a local filesystem")
    st = os.fstat(tfd)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        raise Unwatchable(os.strerror(_errno()))
    add = libc.inotify_add_watch
    try:
        _add(add, fd, f"/proc/self/fd/{tfd}", IN_ONLYDIR)
        for name in os.listdir(tfd):
            kind = wanted(name)
            if kind == "bucket":
                _bucket(add, fd, f"{path}/{name}", wanted)
            elif kind:
                _add(add, fd, f"{path}/{name}", IN_DONT_FOLLOW)
    except BaseException:
        os.close(fd)
        raise
    return Watch(fd, (st.st_dev, st.st_ino))


def _bucket(add, fd: int, path: str, wanted) -> None:
    try:
        names = os.listdir(path) if _add(add, fd, path, IN_ONLYDIR | IN_DONT_FOLLOW) else ()
    except OSError:
        return  # gone, or not a directory: never read; tasks/'s watch reports its change
    for sub in names:
        if wanted(sub) is True:
            _add(add, fd, f"{path}/{sub}", IN_DONT_FOLLOW)


def _add(add, fd: int, path: str, flags: int) -> bool:
    """Watch `path`; False when it is gone or not a directory where one was asked (its directory's
    watch has reported that already); Unwatchable on anything else (a watch limit reached)."""
    if add(fd, os.fsencode(path), MASK | flags) >= 0:
        return True
    code = _errno()
    if code in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
        return False
    raise Unwatchable(os.strerror(code))


_LIBC: list = []


def _libc():
    """libc with inotify, loaded once; Unwatchable where there is none (not Linux, no ctypes)."""
    if not _LIBC:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.inotify_init1, libc.inotify_add_watch, libc.fstatfs  # noqa: B018 - present or AttributeError
            _LIBC.append((libc, ctypes))
        except (ImportError, OSError, AttributeError):
            _LIBC.append(None)
    if _LIBC[0] is None:
        raise Unwatchable("no inotify here")
    return _LIBC[0][0]


def _errno() -> int:
    return _LIBC[0][1].get_errno()


def _local(libc, fd: int) -> bool:
    """Whether the filesystem holding `fd` is one of `_LOCAL` (statfs's f_type: the first field of
    struct statfs, a C long, on Linux)."""
    ctypes = _LIBC[0][1]
    buf = ctypes.create_string_buffer(256)  # struct statfs is 120 bytes on 64-bit Linux
    if libc.fstatfs(fd, buf) != 0:
        return False
    kind = ctypes.c_ulong.from_buffer(buf).value & 0xFFFFFFFF
    return kind in _LOCAL
