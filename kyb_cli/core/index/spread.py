"""A big snapshot's records read on every core: parse, write-rule checks and secret scan per process.

HEAD's snapshot (snapshot.py) is O(live keys) of Python work, ~0.45 ms of CPU a record (the TOML
parse, the secret scan of every field, the JSON of the row; issue 39): 40 s at 100k keys on one
core. The records are independent, so they are cut into chunks read by worker processes, each
`python -m kyb_cli.core.index.spread` (a module of this room, as the filler is: never
multiprocessing, which would re-run the host program's main module), fetching its own blobs
(`git cat-file`) and returning the rows rows.version_rows makes in-process, while this process
writes the earlier chunks. The rows come back in order: the index is the same row for row.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
from pathlib import Path

SPREAD_AT = 5000  # records: below this one process is quicker than starting workers (~0.3 s)
WORKERS_MAX = 8
CHUNK = 1000  # records a task, and a write of the snapshot
_SIZE = struct.Struct("<Q")


def workers() -> int:
    """The processes a snapshot is read with: this process's CPUs, at most WORKERS_MAX."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, WORKERS_MAX))


def start(store_path: Path, records: int, shard: tuple[str, str, int] | None = None) -> list | None:
    """The workers for a snapshot of about `records` records, started before its chunks are cut (they
    import while this process sorts HEAD's keys); None (read in-process) when the records are few or
    there is one core. `shard` (path prefix, the DDL of `fts_now`, its hashsize): each worker writes
    its chunks' full-text rows into `fts_now` of a file of its own, `<prefix>-<i>` (`proc.shard`),
    instead of returning them (their full-text rows come back empty), and says when that file is
    committed and closed (`proc.shard_done`, set once `parts` has given every chunk)."""
    n = min(workers(), -(-records // CHUNK))
    if n < 2 or records < SPREAD_AT:
        return None
    try:
        return _start(store_path, n, shard)
    except OSError:  # no process to start (no python at sys.executable): read here
        return None


def parts(store_path: Path, chunks: list[list], procs: list | None = None):
    """rows.version_rows's answer for each chunk of pending versions, in order, computed by worker
    processes (`procs`, from `start`, or started here) while the caller writes the earlier ones; None
    (read in-process) when the records are few or there is one core."""
    if procs is None:
        procs = start(store_path, sum(map(len, chunks)))
    if procs is None:
        return None
    _stop(procs[len(chunks):])  # more started than there are chunks (`start` was told about HEAD's entries)
    if not chunks:
        return None
    return _parts(store_path, chunks, procs[:len(chunks)])


def _start(store_path: Path, n: int, shard: tuple[str, str, int] | None = None) -> list:
    """n workers, importing kyb_cli from where this process did; quiet: one that cannot start or
    dies leaves its chunks to this process (the same rows), never a message on a reader's terminal."""
    import subprocess

    from kyb_cli.core.canon import git

    env = git.environment()
    here = str(Path(__file__).resolve().parents[3])  # the directory holding the kyb_cli package
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    procs = []
    for i in range(n):
        extra = [f"{shard[0]}-{i}", shard[1], str(shard[2])] if shard else []
        proc = subprocess.Popen([sys.executable, "-m", __name__, str(store_path), *extra], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        proc.shard, proc.shard_done = (extra[0] if shard else None), False
        procs.append(proc)
    return procs


def _stop(procs: list) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()


def _feed(proc, chunks: list[list]) -> None:
    try:
        for chunk in chunks:
            _send(proc.stdin, chunk)
        proc.stdin.close()
    except OSError:
        pass  # the worker died: its stdout ends early, and its chunks are read here


def _parts(store_path: Path, chunks: list[list], procs: list):
    import threading

    n = len(procs)
    for i, proc in enumerate(procs):  # a thread each: a worker's full stdin never blocks this one
        threading.Thread(target=_feed, args=(proc, chunks[i::n]), daemon=True).start()
    try:
        for j in range(len(chunks)):
            part = _receive(procs[j % n].stdout)
            yield part if part is not None else _rows(store_path, chunks[j])  # a worker died: read here
        for proc in procs:  # a shard's worker says its file is committed and closed, after its last chunk
            proc.shard_done = proc.shard is not None and _receive(proc.stdout) is True
    finally:
        _stop(procs)


class Pool:
    """Workers kept for a whole build (the history replay, build.py): each flush's versions split
    among them, the rows back in order; the builder submits a batch, then writes the one before
    and reads the next commits while the workers parse (build.Builder.pool)."""

    def __init__(self, store_path: Path, n: int) -> None:
        self.store_path, self.procs = store_path, _start(store_path, n)
        self.chunks: list[list] = []
        self.sent: list[bool] = []

    def rows(self, pending: list):
        self.submit(pending)
        return self.collect()

    def submit(self, pending: list) -> None:
        """Send one batch's versions, split among the workers; `collect` takes its rows. The caller
        collects a batch before submitting the next: a worker blocked writing its rows would never
        read its next batch (a full pipe each way)."""
        size = -(-len(pending) // len(self.procs))
        self.chunks = [pending[i:i + size] for i in range(0, len(pending), size)]
        self.sent = []
        for proc, chunk in zip(self.procs, self.chunks):
            try:
                _send(proc.stdin, chunk)
                self.sent.append(True)
            except OSError:
                self.sent.append(False)

    def collect(self):
        """The submitted batch's rows, in order (a dead worker's chunks read here)."""
        out: tuple[list, ...] = ([], [], [], [], [])
        for proc, chunk, ok in zip(self.procs, self.chunks, self.sent):
            part = _receive(proc.stdout) if ok else None
            for into, rows in zip(out, part if part is not None else _rows(self.store_path, chunk)):
                into.extend(rows)
        self.chunks, self.sent = [], []
        return out

    def close(self) -> None:
        for proc in self.procs:
            try:
                proc.stdin.close()
            except OSError:
                pass
        _stop(self.procs)


def pool(store_path: Path, commits: int):
    """A Pool for a build of `commits` commits when there is more than one core, else None."""
    n = workers()
    if n < 2 or commits < SPREAD_AT:
        return None
    try:
        return Pool(store_path, n)
    except OSError:  # no process to start: the build reads in-process
        return None


def _send(stream, value) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_SIZE.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    """The next message, or None at the end of the stream (or a short one: the sender died)."""
    head = stream.read(_SIZE.size)
    if len(head) < _SIZE.size:
        return None
    size = _SIZE.unpack(head)[0]
    data = stream.read(size)
    return pickle.loads(data) if len(data) == size else None


def main(store_path: str, *shard: str) -> None:
    """A worker: chunks of pending versions from stdin, each chunk's rows to stdout, until stdin ends.
    Its blobs come from one `git cat-file --batch` kept for its whole life (Reader); a failure of it
    ends the worker, whose chunks this process's caller then reads itself (`_parts`, Pool.collect).
    With `shard` (path, DDL, hashsize: `start`), the full-text rows go into that file's `fts_now`
    (one transaction, committed at the end of stdin), and `True` follows the last chunk's rows."""
    from kyb_cli.core.index import rows

    reader = Reader(Path(store_path))
    out = Shard(*shard) if shard else None
    while (pending := _receive(sys.stdin.buffer)) is not None:
        part = rows.version_rows(pending, reader.blobs(sorted({p[4] for p in pending})))
        if out is not None:
            out.add(part[1])
            part = (part[0], [], *part[2:])
        _send(sys.stdout.buffer, part)
    reader.close()
    if out is not None:
        out.close()
        _send(sys.stdout.buffer, True)


class Shard:
    """A worker's `fts_now`, in a new file of its own (index/fts_merge.py copies it into the index):
    the index's DDL and bulk hashsize, no journal (a file nobody reads until it is closed)."""

    def __init__(self, path: str, ddl: str, hashsize: str) -> None:
        import apsw

        from kyb_cli.core.index import schema

        Path(path).unlink(missing_ok=True)
        self.conn = apsw.Connection(path)
        for pragma in ("journal_mode=OFF", "synchronous=OFF"):
            self.conn.execute(f"PRAGMA {pragma}").fetchall()
        self.conn.execute(ddl)
        schema.pool_terms(self.conn, "fts_now", int(hashsize))
        columns = [row[1] for row in self.conn.execute("PRAGMA table_info(fts_now)")]
        self.insert = f"INSERT INTO fts_now(rowid, {', '.join(columns)}) VALUES({', '.join('?' * (len(columns) + 1))})"
        self.conn.execute("BEGIN")

    def add(self, fts: list) -> None:
        self.conn.executemany(self.insert, fts)

    def close(self) -> None:
        self.conn.execute("COMMIT")
        self.conn.close()


class Reader:
    """Blobs by sha from one `git cat-file --batch` kept open: gitlog.blobs's answer without a git
    a chunk, whose cold delta-base cache re-inflated the same bases chunk after chunk (30k records
    in chunks of 1,000: git 0.65 -> 0.42 CPU s, this side 0.35 -> 0.22 s)."""

    def __init__(self, store_path: Path) -> None:
        import subprocess

        from kyb_cli.core.canon import git
        from kyb_cli.core.index import gitlog

        self.proc = subprocess.Popen(["git", "-C", str(store_path), *gitlog._BASE, "cat-file", "--batch"],
                                     cwd=str(store_path), env=git.environment(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)

    def close(self) -> None:
        """git ends at the end of its input; waited for (its CPU counted as this worker's child's)."""
        self.proc.stdin.close()
        self.proc.wait()
        self.proc.stdout.close()

    def _write(self, data: bytes) -> None:
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except OSError:
            pass  # git is gone: the reading side ends early and says so

    def blobs(self, shas: list[str]) -> dict[str, bytes]:
        """As gitlog.blobs (git.parse_batch's reading of each answer: a name git cannot resolve is
        left out); OSError when git ends before its last answer."""
        import threading

        writer = threading.Thread(target=self._write, args=("".join(f"{s}\n" for s in shas).encode(),),
                                  daemon=True)  # while this side reads: no pipe fills both ways
        writer.start()
        out, line, read = {}, self.proc.stdout.readline, self.proc.stdout.read
        for _ in shas:
            header = line()
            if not header.endswith(b"\n"):
                raise OSError("git cat-file ended early")
            parts = header[:-1].split(b" ")
            if len(parts) != 3 or not parts[2].isdigit():
                continue
            size = int(parts[2])
            data = read(size + 1)
            if len(data) != size + 1:
                raise OSError("git cat-file ended early")
            out[parts[0].decode()] = data[:-1]
        writer.join()
        return out


def _rows(store_path: Path, pending: list):
    """rows.version_rows of one chunk, its blobs in one `git cat-file --batch`."""
    from kyb_cli.core.index import gitlog, rows

    return rows.version_rows(pending, gitlog.blobs(store_path, sorted({p[4] for p in pending})))


if __name__ == "__main__":
    main(*sys.argv[1:])
