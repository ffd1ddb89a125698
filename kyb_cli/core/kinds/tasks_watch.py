"""A long-lived door's watch on working-tree `tasks/` (Linux inotify): while the kernel has reported
no change, the deadlines block's files are the ones read last time, with no lstat a path (kinds/
undated_fast.py: 677 of them an answer at 10k keys, ~1.8 ms; ~5,300 at 100k).

What is watched: `tasks/`, each bucket and each task file, every one by its inode — a file's own
watch reports a write through any of its names, a hard link's made elsewhere too, and a directory's
reports a name added, removed or renamed. Watches are armed before the caller reads the files, so a
change made while they are read reaches the next answer. The answer is reused only while nothing at
all was reported and `tasks/` is still the directory armed; after any event the caller reads as
before (kinds/undated.py) once the watch is renewed: what was created or moved in is watched too
(~8 ms to arm anew at 10k keys, ~0.1 ms to renew), and a watch that cannot be renewed (its queue
overflowed, tasks/ itself moved or removed, a fork) is armed anew.

Trusted only where every change passes through this machine's kernel: local filesystems by their
statfs magic (`_LOCAL`); NFS, SMB, FUSE, 9p or virtiofs (whose files another machine may change)
are never watched. No inotify, no /proc, a watch limit reached: no watch, and each answer stats
as before. Not seen until the file is closed: a write through a shared memory map.
"""

from __future__ import annotations

import _thread
import errno
import os
import struct

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_ONLYDIR, IN_DONT_FOLLOW = 0x01000000, 0x02000000
IN_Q_OVERFLOW, IN_IGNORED = 0x4000, 0x8000
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then len bytes of name)
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
        | IN_DELETE_SELF | IN_MOVE_SELF)

# statfs f_type of filesystems whose every change is made through this kernel: ext2/3/4, xfs, btrfs,
# tmpfs, overlayfs, zfs, f2fs, bcachefs, ramfs, jfs, reiserfs, nilfs2.
_LOCAL = frozenset({0xEF53, 0x58465342, 0x9123683E, 0x01021994, 0x794C7630, 0x2FC12FC1, 0xF2F52010,
                    0xCA451A4E, 0x858458F6, 0x3153464A, 0x52654973, 0x3434})


class Unwatchable(Exception):
    """This store's tasks/ cannot be watched here (kernel, limits, filesystem): stat it instead."""


class Watch:
    """The inotify instance armed on one `tasks/`. `quiet(path, gen)` is True while the kernel has
    reported nothing since generation `gen` of the watch began (arm, or the renew that returned it);
    once anything is reported it stays False until `renew` — a reader that lost the race for the
    events must not take the queue's emptiness for quiet, nor a reader of an older generation the
    renewed watch's silence."""

    __slots__ = ("fd", "pid", "ident", "changed", "lock", "gen", "events", "top", "dirs")

    def __init__(self, fd: int, ident: tuple[int, int]) -> None:
        self.fd, self.pid, self.ident, self.changed, self.gen = fd, os.getpid(), ident, False, 0
        self.lock = _thread.allocate_lock()
        self.events: list[tuple[int, int, str]] = []  # (wd, mask, name) read, not yet renewed over
        self.top = -1  # tasks/'s watch descriptor
        self.dirs: dict[int, str] = {}  # a bucket's watch descriptor -> its path

    def quiet(self, path: str, gen: int) -> bool:
        """Nothing reported since generation `gen`, and `path` (tasks/) is still the directory armed
        (a store moved away and another put in its place is not a change inside the one watched)."""
        with self.lock:
            if self.changed or gen != self.gen or os.getpid() != self.pid:  # a fork shares the queue
                return False
            if self._drain():
                self.changed = True
                return False
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self.ident

    def renew(self, tfd: int, path: str, wanted) -> int | None:
        """Watch what the events since the last generation created or moved into tasks/ (the open
        directory `tfd`, at `path`) and start a new generation, before the caller reads tasks/ again:
        its number, or None when this watch cannot go on (arm anew). Unwatchable as arm."""
        with self.lock:
            if os.getpid() != self.pid:
                return None
            self._drain()
            st = os.fstat(tfd)
            if (st.st_dev, st.st_ino) != self.ident:
                return None
            add = _libc().inotify_add_watch
            for wd, mask, name in self.events:
                if mask & IN_Q_OVERFLOW or (wd == self.top and mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)):
                    return None
                if mask & IN_IGNORED:
                    self.dirs.pop(wd, None)
                elif mask & (IN_CREATE | IN_MOVED_TO) and name:
                    if wd == self.top:
                        self._name(add, path, name, wanted)
                    elif wd in self.dirs and wanted(name) is True:
                        _add(add, self.fd, f"{self.dirs[wd]}/{name}", IN_DONT_FOLLOW)
            self.events.clear()
            self.changed = False
            self.gen += 1
            return self.gen

    def _name(self, add, path: str, name: str, wanted) -> None:
        """Watch entry `name` of tasks/: a bucket and what it holds, or a task file."""
        kind = wanted(name)
        if kind == "bucket":
            bucket = f"{path}/{name}"
            wd = _add(add, self.fd, bucket, IN_ONLYDIR | IN_DONT_FOLLOW)
            if wd is None:
                return  # gone, or not a directory: never read; tasks/'s watch reports its change
            self.dirs[wd] = bucket
            try:
                names = os.listdir(bucket)
            except OSError:
                return
            for sub in names:
                if wanted(sub) is True:
                    _add(add, self.fd, f"{bucket}/{sub}", IN_DONT_FOLLOW)
        elif kind:
            _add(add, self.fd, f"{path}/{name}", IN_DONT_FOLLOW)

    def _drain(self) -> bool:
        """Read every event queued into `events`; whether there was any."""
        got = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                return got
            except OSError:
                self.events.append((self.top, IN_Q_OVERFLOW, ""))  # unreadable: arm anew
                return True
            got = True
            at = 0
            while at + 16 <= len(data):
                wd, mask, _cookie, size = _EVENT.unpack_from(data, at)
                name = data[at + 16:at + 16 + size].split(b"\0", 1)[0]
                self.events.append((wd, mask, os.fsdecode(name)))
                at += 16 + size

    def close(self) -> None:
        with self.lock:
            self.changed = True
            if self.pid == os.getpid() and self.fd >= 0:
                try:
                    os.close(self.fd)
                except OSError:
                    pass
                self.fd = -1


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
    watch = Watch(fd, (st.st_dev, st.st_ino))
    add = libc.inotify_add_watch
    try:
        top = _add(add, fd, f"/proc/self/fd/{tfd}", IN_ONLYDIR)
        if top is None:
            raise Unwatchable("no /proc/self/fd here")
        watch.top = top
        for name in os.listdir(tfd):
            watch._name(add, path, name, wanted)
    except BaseException:
        watch.close()
        raise
    return watch


def _add(add, fd: int, path: str, flags: int) -> int | None:
    """Watch `path`: its watch descriptor, or None when it is gone or not a directory where one was
    asked (its directory's watch has reported that already); Unwatchable on anything else (a watch
    limit reached)."""
    wd = add(fd, os.fsencode(path), MASK | flags)
    if wd >= 0:
        return wd
    code = _errno()
    if code in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
        return None
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
