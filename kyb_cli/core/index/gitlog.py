"""Read commits and blobs through the `git` program: `git log --raw` and `git cat-file --batch`.

A full rebuild needs one tree diff per commit (streamed, see `commits`); git's diff of large trees out of a packfile is ~10x
faster than pygit2's, and the catch-up path then needs no pygit2 import at all (70-110 ms). A process that
has pygit2 loaded already (a write) catches up a few commits in-process instead: walk.py, same answers.
"""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from kyb_cli.core.canon import git
from kyb_cli.core.errors import StoreError
from kyb_cli.core.records.keys import key_of_path
from kyb_cli.core.timestamps import clamp_epoch

_BASE = ["-c", "core.quotepath=off", "-c", "log.showSignature=false", "-c", "diff.renames=false"]


@dataclass
class Commit:
    sha: str
    when: int
    parents: list[str]
    changes: dict[str, str | None] = field(default_factory=dict)  # path -> blob (None: absent)


def key_memo() -> Callable[[str], str | None]:
    """key_of_path memoized for one history read: a path comes back at each of its versions, asked
    for by the reader (`_logged`, walk.py) and by the builder (build.py), which share the source's memo."""
    return functools.lru_cache(maxsize=None)(key_of_path)


def available() -> bool:
    return git.available()


def _git(store_path: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    """Local plumbing through the one git runner (canon/git.py): scrubbed environment, a deadline."""
    return git.run(["-C", str(store_path), *_BASE, *args], cwd=Path(store_path), input=input)


def head(store_path: Path) -> str | None:
    res = _git(store_path, "rev-parse", "--verify", "-q", "HEAD^{commit}")
    out = res.stdout.decode().strip()
    return out if res.returncode == 0 and out else None


def is_ancestor(store_path: Path, old: str, new: str) -> bool:
    return _git(store_path, "merge-base", "--is-ancestor", old, new).returncode == 0


def _popen(store_path: Path, *args: str) -> subprocess.Popen:
    """A streaming git process with the one runner's environment (canon/git.py): `git log` of a
    long history runs for seconds and is read while it runs, so it cannot go through `git.run`."""
    try:
        return subprocess.Popen(["git", "-C", str(store_path), *_BASE, *args], cwd=str(store_path),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=git.environment())
    except FileNotFoundError:
        raise StoreError("the search index needs the `git` command, and it is not on PATH") from None


def _lines(proc: subprocess.Popen) -> Iterator[bytes]:
    """The lines of `proc`'s stdout, read ahead by a thread so git keeps running while we parse.

    A pipe holds 64 KiB: without the read-ahead git would stop whenever the caller is busy
    parsing records or writing SQLite, and the two could never use both cores.
    """
    import queue
    import threading

    chunks: queue.SimpleQueue = queue.SimpleQueue()
    stream = proc.stdout
    assert stream is not None

    def pump() -> None:
        try:
            while True:
                chunk = stream.read1(1 << 20)
                chunks.put(chunk)
                if not chunk:
                    return
        except BaseException:  # noqa: BLE001 - the reader sees the end of the stream either way
            chunks.put(b"")

    threading.Thread(target=pump, daemon=True).start()
    rest = b""
    while True:
        chunk = chunks.get()
        if not chunk:
            break
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        yield from lines
    if rest:
        yield rest


def _range(head_sha: str, since: str | None) -> list[str]:
    """The commits reachable from `head_sha` and not from `since`, as a revision range."""
    return [head_sha] if since is None else [f"{since}..{head_sha}"]


def _rev_list(store_path: Path, *args: str) -> str:
    """What `git rev-list <args>` printed; StoreError when it failed."""
    res = _git(store_path, "rev-list", *args)
    if res.returncode != 0:
        raise StoreError(f"git rev-list failed: {res.stderr.decode(errors='replace').strip()}")
    return res.stdout.decode()


def _timed(store_path: Path, *args: str) -> tuple[list[tuple[str, int]], dict[str, str]]:
    """`git rev-list --timestamp <args>`: (sha, commit time) per line in git's order, and with
    `--parents` each commit's first parent (a root: none). The one parser of these lines; partition,
    not split: without `--parents` as cheap as a two-field split (382k lines ~0.2 s), with them cheaper."""
    order: list[tuple[str, int]] = []
    first: dict[str, str] = {}
    add = order.append
    for line in _rev_list(store_path, "--timestamp", *args).splitlines():
        when, _sp, rest = line.partition(" ")
        sha, _sp, parents = rest.partition(" ")
        add((sha, clamp_epoch(int(when))))  # any commit time: clamped (timestamps.py)
        if parents:
            first[sha] = parents.partition(" ")[0]
    return order, first


def revisions(store_path: Path, head_sha: str, since: str | None = None) -> list[tuple[str, int]]:
    """(sha, commit time) of the commits `commits()` yields, in that order."""
    return _timed(store_path, "--topo-order", "--reverse", *_range(head_sha, since))[0]


def revisions_and_line(store_path: Path, head_sha: str) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """`revisions(head)` and `first_parent_line(head)` from one walk (`--parents`): each walk is
    ~2 s of git at 382k commits, before a build reads its first commit."""
    order, first = _timed(store_path, "--topo-order", "--reverse", "--parents", head_sha)
    times = dict(order)
    line, at = [], order[-1][0] if order else None  # the head: the one commit with no child, listed last
    while at is not None:
        line.append((at, times[at]))
        at = first.get(at)
    line.reverse()
    return order, line


def count(store_path: Path, head_sha: str, since: str | None = None, most: int | None = None) -> int:
    """How many commits `commits()` would yield (one cheap `git rev-list --count`), or `most` when
    there are more (`--max-count`: the walk stops there; a full count of a 100k-key clone's 382k
    commits was 2.4 s, issue 39)."""
    limit = () if most is None else (f"--max-count={most}",)
    return int(_rev_list(store_path, "--count", *limit, *_range(head_sha, since)).strip() or 0)


def object_count(store_path: Path) -> int:
    """Objects in the repository, loose and packed (`git count-objects -v`: index headers, no walk)."""
    res = _git(store_path, "count-objects", "-v")
    if res.returncode != 0:
        return 0
    fields = dict(line.split(": ", 1) for line in res.stdout.decode().splitlines() if ": " in line)
    return sum(int(fields.get(name, "0") or 0) for name in ("count", "in-pack"))


def commits(store_path: Path, head_sha: str, since: str | None = None,
            order: list[tuple[str, int]] | None = None, key_of=None) -> Iterator[Commit]:
    """Commits reachable from `head_sha` and not from `since`, parents first, with record changes.

    A merge's changes are the paths that differ from any of its parents, with the merged blob.
    Streamed: commits are yielded while `git log` is still diffing later ones. No pathspec on
    purpose: with `-- knowledge incidents tasks` git matches every entry of every tree it diffs
    against the pathspec, which made the log 3-4x slower (20 s vs 6 s at 10k keys); other paths are
    dropped here instead. `git rev-list` gives the order and the commits a diff would not show.
    """
    proc = _log(store_path, _range(head_sha, since))
    try:
        order = revisions(store_path, head_sha, since) if order is None else order
    except BaseException:
        _end(proc)
        raise
    yield from _read(proc, order, key_of or key_memo())


def replay(store_path: Path, head_sha: str,
           key_of=None) -> tuple[list[tuple[str, int]], list[tuple[str, int]], Iterator[Commit]]:
    """`revisions_and_line(head)` and `commits(head)`, the log started first: git log walks the whole
    history before its first line (~2.4 s at 382k commits) while rev-list walks it for the order."""
    proc = _log(store_path, [head_sha])
    try:
        order, line = revisions_and_line(store_path, head_sha)
    except BaseException:
        _end(proc)
        raise
    return order, line, _Read(proc, order, key_of or key_memo())


class _Read:
    """The commits of a running `git log`; `close` ends the process, read or not."""

    def __init__(self, proc: subprocess.Popen, order: list[tuple[str, int]], key_of) -> None:
        self.proc, self.read = proc, _read(proc, order, key_of)

    def __iter__(self) -> Iterator[Commit]:
        return self.read

    def close(self) -> None:
        self.read.close()
        _end(self.proc)


def _log(store_path: Path, rng: list[str]) -> subprocess.Popen:
    return _popen(store_path, "log", "--raw", "--no-renames", "--no-abbrev", "--root", "--topo-order",
                  "--reverse", "--diff-merges=separate", "--no-ext-diff", "--format=C %H %P", *rng)


def _end(proc: subprocess.Popen) -> str:
    """Stop `proc` if it still runs; what it said on stderr."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    err = ""
    if proc.stderr and not proc.stderr.closed:
        err = proc.stderr.read().decode(errors="replace").strip()
        proc.stderr.close()
    return err


def _read(proc: subprocess.Popen, order: list[tuple[str, int]], key_of) -> Iterator[Commit]:
    """The log's commits in `order` (rev-list's): a merge's diffs against each parent merged."""
    try:
        pending: tuple[str, list[str], dict[str, str | None]] | None = None
        logged = _logged(_lines(proc), key_of)
        want = iter(order)
        for sha, parents, changes in logged:
            if pending is not None and pending[0] == sha:  # the same merge, diffed against its next parent
                pending[2].update(changes)
                continue
            if pending is not None:
                yield from _emit(want, pending)
            pending = (sha, parents, changes)
        if pending is not None:
            yield from _emit(want, pending)
        for sha, when in want:  # commits git log did not list (none expected)
            yield Commit(sha, when, [], {})
    finally:
        err = _end(proc)
    if proc.returncode not in (0, -9):
        raise StoreError(f"git log failed: {err}")


def _emit(want: Iterator[tuple[str, int]], pending) -> Iterator[Commit]:
    sha, parents, changes = pending
    for expected, when in want:
        if expected == sha:
            yield Commit(sha, when, parents, changes)
            return
        yield Commit(expected, when, [], {})  # listed by rev-list only: it changed nothing git shows
    raise StoreError(f"git log listed a commit rev-list did not: {sha}")


def _logged(lines: Iterator[bytes], key_of) -> Iterator[tuple[str, list[str], dict[str, str | None]]]:
    """(sha, parents, record path -> blob or None) per `C` header of `git log --raw`; `key_of`: key_memo's."""
    sha: str | None = None
    parents: list[str] = []
    changes: dict[str, str | None] = {}
    for raw in lines:
        if raw.startswith(b"C "):
            if sha is not None:
                yield sha, parents, changes
            fields = raw.decode().split()
            sha, parents, changes = fields[1], fields[2:], {}
        elif raw.startswith(b":") and sha is not None:
            meta, _tab, path_b = raw.partition(b"\t")
            path = path_b.decode("utf-8", errors="replace")
            if key_of(path) is None:
                continue
            parts = meta.split()
            changes[path] = None if parts[4].startswith(b"D") else parts[3].decode()
    if sha is not None:
        yield sha, parents, changes


def first_parent_line(store_path: Path, head_sha: str, since: str | None = None) -> list[tuple[str, int]] | None:
    """(sha, commit time) of HEAD's first-parent line, oldest first (only the part after `since`).

    as-of-first-parent (docs/ARCHITECTURE.md): these commits, each with its net change against its
    first parent at its own commit time (clamped to what datetime holds), are what this clone's
    branch showed. None when `since` is not on the line (the caller rebuilds).
    """
    order, first = _timed(store_path, "--first-parent", "--parents", head_sha,
                          *([] if since is None else ["--not", since]))
    if since is not None and order and first.get(order[-1][0]) != since:  # the oldest's parent
        return None
    return order[::-1]


def blobs(store_path: Path, shas: list[str]) -> dict[str, bytes]:
    """Blob contents by sha, in one `git cat-file --batch` call."""
    if not shas:
        return {}
    res = _git(store_path, "cat-file", "--batch", input=("\n".join(shas) + "\n").encode())
    if res.returncode != 0:
        raise StoreError(f"git cat-file failed: {res.stderr.decode(errors='replace').strip()}")
    return {obj[0]: obj[2] for obj in git.parse_batch(res.stdout, len(shas)) if obj is not None}


class Program:
    """This module's catch-up questions bound to one store: the `git` program's side of walk.source."""

    def __init__(self, store_path: Path) -> None:
        self.store_path = store_path
        self.key_of = key_memo()  # shared with the Builder reading these commits

    def is_ancestor(self, old: str, new: str) -> bool:
        return is_ancestor(self.store_path, old, new)

    def revisions(self, head: str, since: str | None = None) -> list[tuple[str, int]]:
        return revisions(self.store_path, head, since)

    def first_parent_line(self, head: str, since: str | None = None) -> list[tuple[str, int]] | None:
        return first_parent_line(self.store_path, head, since)

    def replay(self, head: str) -> tuple[list[tuple[str, int]], list[tuple[str, int]], Iterator[Commit]]:
        return replay(self.store_path, head, self.key_of)

    def commits(self, head: str, since: str | None = None,
                order: list[tuple[str, int]] | None = None) -> Iterator[Commit]:
        return commits(self.store_path, head, since, order, self.key_of)

    def blobs(self, shas: list[str]) -> dict[str, bytes]:
        return blobs(self.store_path, shas)
