"""Which task files carry no date, remembered by their stat: the deadlines block after every query
reads the files that may carry one, not all 461 tasks of a 10k store (~4 ms of a query, issue 38).

A file is skipped only when its lstat — device, inode, mode, size, mtime and ctime, all to the
nanosecond — equals the one taken from the open file when it was last read and found undated; a
directory's names are reused only when its stat equals the one taken from the directory fd they
were listed through. Any write to a file changes its ctime (no system call sets it back), and adding,
removing or renaming a name changes its directory's: a write from another process, a `git pull`, a
sync, a hand edit are all seen by the next answer. Nothing that changed within the last seconds is
ever remembered (core/known.py `settled`: git's racy-clean rule, and its one assumption, a clock
never set back past a recorded ctime); it is read again until it is older. The memory lives in `.git/kyb` (where the index
lives; no link followed); a store without it, or anything unusual (a link, an unreadable directory),
returns None and the caller reads every file as before. The memory only skips: what a file says is
always read from the file itself.
"""

from __future__ import annotations

import errno
import marshal
import os
import stat
import time

from kyb_cli.core.kinds.undated_fast import BUCKETS, plan, unchanged
from kyb_cli.core.kinds.undated_fast import DIR_FLAGS as _DIR
from kyb_cli.core.known import remember, settled, stamp

MEMO = "tasks-undated.v2"  # (2, plan, the memory marshalled): v1 held the memory alone
_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
# A long-lived door's last (memory or None, its plan, the memory marshalled or None) per store path:
# only ever a hint checked against every stat (as the saved one is), so keeping it saves reading
# .git/kyb's copy on every answer. The file holds the plan (undated_fast.py) beside the memory, so a
# one-shot process whose tasks did not change reads the plan alone and never builds the memory.
_KEPT: dict = {}
# A door's watch per store path and the answer it vouches for (tasks_watch.py); the stores it cannot
# watch (filesystem, kernel, limits), which are statted as before for the rest of the process.
_WATCHED: dict = {}
_UNWATCHABLE: set = set()


def not_undated(root, keep, undated) -> dict[str, bytes] | None:
    """The bytes of the regular files of working-tree `tasks/` (and its two-hex-character buckets,
    named `<h>/<name>`) that `keep(name)` accepts and `undated(data)` does not, in name order — what
    canon/nofollow.read_files would return, less the undated files — or None when the memory cannot
    be used (read every file then). `keep` and `undated` must be the same functions on every call.
    In a long-lived door the same dict comes back while the kernel reports no change to tasks/
    (kinds/tasks_watch.py): a caller only reads it."""
    key = os.fspath(root)
    held = _WATCHED.get(key)
    arming = _Arming()
    if held is not None:
        if held[0].quiet(os.path.join(key, "tasks"), held[1]):
            return held[2]
        if _WATCHED.get(key) is held:  # another reader meanwhile reads for itself
            _WATCHED.pop(key, None)
        arming.watch = held[0]  # renewed rather than armed anew, before tasks/ is read (_arm)
    try:
        out = _not_undated(root, keep, undated, arming)
    except BaseException:
        arming.close()
        raise
    if arming.gen is not None:
        _hold(key, arming.watch, arming.gen, out)
    else:
        arming.close()  # not renewed: no door, or tasks/ gone
    return out


class _Arming:
    """One read's watch in a door: before _arm, the watch held for the last answer (to renew) or
    None; after it, the watch this read is vouched by and its generation (None: no watch)."""

    __slots__ = ("watch", "gen")

    def __init__(self) -> None:
        self.watch, self.gen = None, None

    def close(self) -> None:
        if self.watch is not None:
            self.watch.close()
        self.watch, self.gen = None, None


def _not_undated(root, keep, undated, arming: _Arming) -> dict[str, bytes] | None:
    """not_undated's read through the memory; a door's watch is armed (`arming`) before anything is read."""
    now = time.time_ns()
    try:
        rfd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    try:
        try:  # tasks/ first: a store without tasks answers {} after one open (3 opens and closes fewer)
            tfd = os.open("tasks", _DIR, dir_fd=rfd)
        except OSError as exc:  # absent or a link: no task (as read_files); else read_files says
            return {} if exc.errno in (errno.ENOENT, errno.ELOOP, errno.ENOTDIR) else None
        try:
            gfd = os.open(".git", _DIR, dir_fd=rfd)
            try:
                kfd = os.open("kyb", _DIR, dir_fd=gfd)
            finally:
                os.close(gfd)
        except OSError:
            os.close(tfd)
            return None  # no memory to keep: not a store with its index here
        try:
            try:
                _arm(os.fspath(root), tfd, keep, arming)
                kept = _KEPT.get(os.fspath(root)) or (None, *_load(kfd))
                found = unchanged(tfd, kept[1], undated, _read, now)
                if found is not None:  # every stat the memory vouches for is the same: nothing to save
                    remember(_KEPT, os.fspath(root), kept, 8)
                    return found
                old = kept[0] if kept[0] is not None else _memory(kept[2])
                new: dict = {}
                try:
                    out = _walk(tfd, keep, undated, old, new, now)
                except (TypeError, ValueError, IndexError, AttributeError):  # a memory of another shape
                    old, new = {}, {}
                    out = _walk(tfd, keep, undated, old, new, now)
            finally:
                os.close(tfd)
            made = plan(new)
            if new != old:
                _save(kfd, new, made)
            remember(_KEPT, os.fspath(root), (new, made, None), 8)
            return dict(sorted(out.items()))
        finally:
            os.close(kfd)
    except OSError:
        return None
    finally:
        os.close(rfd)


def _arm(key: str, tfd: int, keep, arming: _Arming) -> None:
    """In a long-lived door (index/warm.keeping), its watch on tasks/ before it is read: the watch
    last held is renewed, else one is armed anew; `arming` then holds it and its generation."""
    from kyb_cli.core.index import warm

    if not warm.keeping() or key in _UNWATCHABLE:
        return
    from kyb_cli.core.kinds.tasks_watch import Unwatchable, arm

    def wanted(name: str):
        return "bucket" if name in BUCKETS else bool(keep(name))

    path = os.path.join(key, "tasks")
    try:
        if arming.watch is not None:
            gen = arming.watch.renew(tfd, path, wanted)
            if gen is not None:
                arming.gen = gen
                return
            arming.close()
        arming.watch, arming.gen = arm(tfd, path, wanted), 0
    except Unwatchable:
        _UNWATCHABLE.add(key)
    except OSError:
        pass  # this answer is read without one; the next tries again


def _hold(key: str, watch, gen: int, out) -> None:
    if out is None:
        watch.close()
        return
    old = _WATCHED.get(key)
    _WATCHED[key] = (watch, gen, out)
    if old is not None and old[0] is not watch:
        old[0].close()


def _walk(tfd: int, keep, undated, old: dict, new: dict, now: int) -> dict[str, bytes]:
    """The memory is one entry per directory, "" for tasks/ itself and "<h>" for a bucket: (its
    stat, its wanted names in order, per name the stat it was found undated with, or None)."""
    def wanted(name: str) -> bool:  # asked only of a directory listed again: imported then (~0.5 ms)
        from kyb_cli.core.records.keys import unsafe_component

        return bool(keep(name)) and unsafe_component(name) is None

    out: dict[str, bytes] = {}
    top = _dir(tfd, None, old, new, now, lambda n: n in BUCKETS or wanted(n))
    buckets = [n for n in top[1] if n in BUCKETS]
    _files(tfd, None, top, undated, new, now, out)
    for name in buckets:
        entry = _dir(tfd, name, old, new, now, wanted)
        if entry is not None:
            _files(tfd, name, entry, undated, new, now, out)
    return out


def _dir(tfd: int, sub: str | None, old: dict, new: dict, now: int, wanted):
    """[stat key, names, remembered keys] of directory `sub` of tasks/ (tasks/ itself: None), from
    the memory when its stat is the remembered one, else listed; None when `sub` is not a plain
    directory (a link, a file named like a bucket: left out, as read_files leaves it)."""
    rel = sub or ""
    seen = old.get(rel)
    if sub is not None:
        try:
            st = os.stat(sub, dir_fd=tfd, follow_symlinks=False)
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode):
            return None
        key = stamp(st)
        if seen is not None and seen[0] == key and settled(st, now):
            entry = new[rel] = [key, seen[1], list(seen[2])]
            return entry
        try:
            fd = os.open(sub, _DIR, dir_fd=tfd)
        except OSError:
            return None
    else:
        fd = tfd
    try:
        st = os.fstat(fd)  # of the directory listed: the names below are this inode's
        key = stamp(st)
        if seen is not None and seen[0] == key and settled(st, now):
            names, keys = seen[1], list(seen[2])
        else:
            names = sorted(n for n in os.listdir(fd) if wanted(n))
            known = dict(zip(seen[1], seen[2])) if seen is not None else {}
            keys = [known.get(n) for n in names]  # a file's own stat still says whether it changed
        entry = [key if settled(st, now) else None, names, keys]
        new[rel] = entry
        return entry
    finally:
        if fd != tfd:
            os.close(fd)


def _files(tfd: int, sub: str | None, entry: list, undated, new: dict, now: int, out: dict) -> None:
    """Put in `out` the bytes of each file of `entry` (in `sub`) not remembered or found undated,
    and keep in `entry` the stat of each found undated (None for the others)."""
    prefix = f"{sub}/" if sub else ""
    names, keys = entry[1], entry[2]
    dfd = None
    try:
        for i, name in enumerate(names):
            if not sub and name in BUCKETS:
                keys[i] = None
                continue  # a bucket: _walk reads it
            try:
                st = os.stat(prefix + name, dir_fd=tfd, follow_symlinks=False)
            except OSError:
                keys[i] = None
                continue
            if keys[i] == stamp(st) and settled(st, now):
                continue  # the very file found undated (a regular one: its mode is in the key)
            keys[i] = None
            if not stat.S_ISREG(st.st_mode):
                continue  # a link, a FIFO, a directory: read_files leaves it out too
            if dfd is None:
                dfd = os.open(sub, _DIR, dir_fd=tfd) if sub else tfd  # never through a link
            data, st = _read(dfd, name)
            if data is None:
                continue
            if not undated(data):
                out[prefix + name] = data
            elif settled(st, now):
                keys[i] = stamp(st)
    finally:
        if dfd is not None and dfd != tfd:
            os.close(dfd)
    if entry[0] is None:
        new.pop(sub or "", None)  # a directory changed within the margin: listed again next time
    else:
        new[sub or ""] = (entry[0], tuple(names), tuple(keys))


def _read(dfd: int, name: str):
    """(bytes, the stat taken before reading them) of regular file `name`, as read_files reads it."""
    try:
        fd = os.open(name, _FILE, dir_fd=dfd)
    except OSError:
        return None, None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, None
        chunks = [os.read(fd, st.st_size + 1)]
        while len(chunks[-1]) and sum(map(len, chunks)) > st.st_size:  # it grew meanwhile
            chunks.append(os.read(fd, 65536))
        return b"".join(chunks), st
    except OSError:
        return None, None
    finally:
        os.close(fd)


def _load(kfd: int) -> tuple:
    """(plan, the memory marshalled) as last saved; (None, None) when there is none or it does not
    read (it is only ever a hint checked against every file's stat, and .git/kyb is trusted as the
    index beside it is)."""
    try:
        fd = os.open(MEMO, _FILE, dir_fd=kfd)
    except OSError:
        return None, None
    try:
        size = os.fstat(fd).st_size
        saved = marshal.loads(os.read(fd, size + 1))
        if type(saved) is tuple and len(saved) == 3 and saved[0] == 2 and type(saved[2]) is bytes:
            return saved[1], saved[2]
        return None, None
    except Exception:  # noqa: BLE001 - torn, foreign, another Python's format: start afresh
        return None, None
    finally:
        os.close(fd)


def _memory(blob) -> dict:
    """The memory of a saved file; {} when there is none or it does not read."""
    try:
        memo = marshal.loads(blob) if blob else {}
    except Exception:  # noqa: BLE001 - as _load
        return {}
    return memo if type(memo) is dict else {}


def _save(kfd: int, memo: dict, made) -> None:
    """Replace the memory and its plan in one rename; never fails the answer (a read-only .git/kyb:
    no memory)."""
    from kyb_cli.core.canon.nofollow import write_replace

    try:
        data = marshal.dumps((2, made, marshal.dumps(memo)))
        write_replace(kfd, f".{MEMO}.{os.getpid()}.tmp", MEMO, data, False, durable=False)
    except (OSError, ValueError):
        return
    _sweep(kfd)


def _sweep(kfd: int) -> None:
    """Temp files of a process killed while saving go on the next save (a save is rare: a change)."""
    try:
        names = os.listdir(kfd)
        if "tasks-undated.v1" in names:  # the memory alone, before its plan was kept with it
            os.unlink("tasks-undated.v1", dir_fd=kfd)
        names = [n for n in names if n.startswith(f".{MEMO}.") and n.endswith(".tmp")]
        for name in names:
            if os.stat(name, dir_fd=kfd, follow_symlinks=False).st_mtime_ns < time.time_ns() - 600 * 10**9:
                os.unlink(name, dir_fd=kfd)
    except OSError:
        pass
