"""The common case of kinds/undated.py in bulk: nothing changed since the memory was made.

The memory (undated.py) is kept with one flat plan — every directory and remembered file of tasks/
with the stamp it vouches for — and the answer is one lstat per path, the stamps compared as one
list of tuples: no Python per file beyond the stat (at 10k keys, 677 paths an answer). The rule is
undated.py's, unchanged: a path is trusted only while its whole stamp (core/known.py) is the one
remembered and settled; the files the memory does not vouch for (the dated ones) are read from
disk every time. Anything else — a stamp that differs, a path gone, a dated file now undated, a
memory of another shape — returns None, and undated.py walks the directories as before.
"""

from __future__ import annotations

import os
import stat

from kyb_cli.core.known import SETTLED_NS, stamp

BUCKETS = frozenset(f"{a}{b}" for a in "0123456789abcdef" for b in "0123456789abcdef")  # tasks/<h>/
DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)  # never through a link


def plan(memo: dict):
    """(tasks/ stamp, paths under tasks/, their stamps, files not vouched for as (bucket|None, name),
    the newest time among the stamps), or None when the memory does not vouch for every directory."""
    try:
        top = memo.get("")
        if top is None or top[0] is None or len(top[1]) != len(top[2]):
            return None
        paths: list[str] = []
        stamps: list[tuple] = []
        unknown: list[tuple] = []
        files: list[tuple] = []
        for name, key in zip(top[1], top[2]):
            if name in BUCKETS:
                entry = memo.get(name)
                if entry is None or entry[0] is None or len(entry[1]) != len(entry[2]):
                    return None
                paths.append(name)
                stamps.append(tuple(entry[0]))
                files.extend((name, n, k) for n, k in zip(entry[1], entry[2]))
            else:
                files.append((None, name, key))
        for sub, name, key in files:
            if key is None:
                unknown.append((sub, name))
            else:
                paths.append(f"{sub}/{name}" if sub else name)
                stamps.append(tuple(key))
        newest = max((max(k[4], k[5]) for k in [*stamps, top[0]]), default=0)
        return tuple(top[0]), paths, stamps, unknown, newest
    except (TypeError, ValueError, IndexError, AttributeError, KeyError):
        return None


def unchanged(tfd: int, plan, undated, read, now: int) -> dict[str, bytes] | None:
    """What undated.not_undated answers (the dated files' bytes, by path, in name order) when every
    path of `plan` has its remembered stamp and every file it does not vouch for is still not
    undated; None otherwise. `read(dfd, name)` reads a file as undated.py does."""
    try:
        top, paths, stamps, unknown, newest = plan
        return _unchanged(tfd, top, paths, stamps, unknown, newest, undated, read, now)
    except (TypeError, ValueError, IndexError, AttributeError):  # no plan, or one of another shape
        return None


def _unchanged(tfd, top, paths, stamps, unknown, newest, undated, read, now):
    if newest >= now - SETTLED_NS or stamp(os.fstat(tfd)) != top:
        return None
    lstat = os.stat
    try:
        if [stamp(lstat(p, dir_fd=tfd, follow_symlinks=False)) for p in paths] != stamps:
            return None
    except OSError:  # a path gone: the walk says what is there now
        return None
    out: dict[str, bytes] = {}
    for sub, name in unknown:
        rel = f"{sub}/{name}" if sub else name
        try:
            st = lstat(rel, dir_fd=tfd, follow_symlinks=False)
        except OSError:
            continue  # as the walk: a name listed and gone is no task
        if not stat.S_ISREG(st.st_mode):
            continue
        try:
            dfd = os.open(sub, DIR_FLAGS, dir_fd=tfd) if sub else tfd  # never through a link
        except OSError:
            return None
        try:
            data, _st = read(dfd, name)
        finally:
            if dfd != tfd:
                os.close(dfd)
        if data is None:
            continue
        if undated(data):
            return None  # now undated: the walk remembers it
        out[rel] = data
    return dict(sorted(out.items()))
