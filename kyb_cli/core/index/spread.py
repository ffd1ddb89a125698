"""A big snapshot's records read on every core: parse, write-rule checks and secret scan per process.

HEAD's snapshot (snapshot.py) is O(live keys) of Python work, ~0.45 ms of CPU a record (the TOML
parse, the secret scan of every field, the JSON of the row; issue 39): 40 s at 100k keys on one
core. The records are independent, so they are cut into chunks read by worker processes, each
`python -m kyb_cli.core.index.spread` (a module of this room, as the filler is: never
multiprocessing, which would re-run the host program's main module), fetching its own blobs
(`git cat-file`) and returning the rows build.version_rows makes in-process, while this process
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


def parts(store_path: Path, chunks: list[list]):
    """build.version_rows's answer for each chunk of pending versions, in order, computed by worker
    processes while the caller writes the earlier ones; None (read in-process) when the records are
    few or there is one core."""
    n = min(workers(), len(chunks))
    if n < 2 or sum(map(len, chunks)) < SPREAD_AT:
        return None
    return _parts(store_path, chunks, n)


def _parts(store_path: Path, chunks: list[list], n: int):
    import subprocess
    import threading

    from kyb_cli.core.canon import git

    procs = [subprocess.Popen([sys.executable, "-m", __name__, str(store_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, env=git.environment()) for _ in range(n)]

    def feed(proc, mine: list[list]) -> None:  # a thread each: a worker's stdin never blocks this one
        try:
            _send(proc.stdin, mine)
            proc.stdin.close()
        except OSError:
            pass  # the worker died: its stdout ends early, and reading it says so

    for i, proc in enumerate(procs):
        threading.Thread(target=feed, args=(proc, chunks[i::n]), daemon=True).start()
    try:
        for j in range(len(chunks)):
            part = _receive(procs[j % n].stdout)
            yield part if part is not None else _rows(store_path, chunks[j])  # a worker died: read here
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stdout.close()


def _send(stream, value) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_SIZE.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    head = stream.read(_SIZE.size)
    if len(head) < _SIZE.size:
        return None
    return pickle.loads(stream.read(_SIZE.unpack(head)[0]))


def main(store_path: str) -> None:
    """A worker: its chunks from stdin, each chunk's rows to stdout in turn."""
    for pending in _receive(sys.stdin.buffer) or []:
        _send(sys.stdout.buffer, _rows(Path(store_path), pending))


def _rows(store_path: Path, pending: list):
    """build.version_rows of one chunk, its blobs in one `git cat-file --batch`."""
    from kyb_cli.core.index import build, gitlog

    return build.version_rows(pending, gitlog.blobs(store_path, sorted({p[4] for p in pending})))


if __name__ == "__main__":
    main(sys.argv[1])
