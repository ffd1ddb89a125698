"""A big snapshot read by worker processes (index/spread.py) is the same index, row for row, as one
read in-process: the same versions, search rows, held-out versions and what was skipped; and a
worker that dies, or cannot start, leaves its chunks to this process, never a failed read (issue 39)."""

from __future__ import annotations

import sys

from kyb_cli.core.index import gitlog, snapshot, spread
from tests.support.index_helpers import T0, dump_index, put

TABLES = ("versions", "vtext", "unreadable", "events", "keys", "meta")


def seed(store_path) -> None:
    for n in range(11):
        put(store_path, f"note-{n:02d}", f"Note {n}", f"checkout note {n} on port {9000 + n}", T0 + n,
            tags=[f"t{n % 3}"])
    put(store_path, "leaked", "Leaked", "token ghp_aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6", T0 + 20)
    put(store_path, "inc-1-outage", "Outage", "checkout down", T0 + 30, service="checkout", severity="high",
        status="open")


def dump(db) -> dict:
    return dump_index(db, TABLES)


def build(store_path, tmp_path, name: str) -> tuple[dict, dict]:
    db = tmp_path / f"{name}.sqlite"
    work = snapshot.build(store_path, db, gitlog.head(store_path))
    return dump(db), work


def two_small_workers(monkeypatch, chunk: int) -> None:
    """Spread even this small store over two workers, `chunk` records a chunk."""
    monkeypatch.setattr(spread, "SPREAD_AT", 1)
    monkeypatch.setattr(spread, "CHUNK", chunk)
    monkeypatch.setattr(spread, "workers", lambda: 2)


def test_a_snapshot_read_by_workers_is_the_snapshot_read_here(store_path, tmp_path, monkeypatch):
    seed(store_path)
    here, here_work = build(store_path, tmp_path, "here")
    two_small_workers(monkeypatch, chunk=3)
    started = []
    real = spread._parts
    monkeypatch.setattr(spread, "_parts", lambda *a: started.append(len(a[2])) or real(*a))
    spread_index, spread_work = build(store_path, tmp_path, "spread")
    assert started == [2]  # it did go to two workers
    assert spread_index == here and len(here["versions"]) == 13
    assert [r[0] for r in here["unreadable"]] == [r[0] for r in here["versions"] if r[1] == "leaked"]
    assert spread_work["skipped"] == here_work["skipped"] and len(here_work["skipped"]) == 1
    assert len(here["fts_now"]) == 12  # the held-out version is no search row


def test_a_worker_that_dies_leaves_its_chunks_to_this_process(store_path, tmp_path, monkeypatch):
    seed(store_path)
    here, _ = build(store_path, tmp_path, "here")
    two_small_workers(monkeypatch, chunk=4)
    monkeypatch.setattr(sys, "executable", "false")  # every worker exits at once, reading nothing
    assert build(store_path, tmp_path, "dead")[0] == here
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))  # no worker starts at all
    assert build(store_path, tmp_path, "none")[0] == here


def test_a_history_built_with_workers_is_the_history_built_here(store_path, tmp_path, monkeypatch):
    from kyb_cli.core.index import build as index_build
    from tests.support.index_helpers import remove

    seed(store_path)
    put(store_path, "note-03", "Note 3", "checkout note 3 moved to port 8080", T0 + 40)
    remove(store_path, "note-04", T0 + 50)
    head = gitlog.head(store_path)
    index_build.build_file(store_path, tmp_path / "here.sqlite", head, note=False)
    monkeypatch.setattr(spread, "SPREAD_AT", 1)
    monkeypatch.setattr(spread, "workers", lambda: 3)
    monkeypatch.setattr(index_build, "FLUSH_EVERY", 4)  # several flushes, each split among the workers
    pools = []
    real = spread.Pool
    monkeypatch.setattr(spread, "Pool", lambda *a: pools.append(real(*a)) or pools[-1])
    work = index_build.build_file(store_path, tmp_path / "spread.sqlite", head, note=False)
    assert len(pools) == 1 and all(p.poll() is not None for p in pools[0].procs)  # used, then stopped
    assert dump(tmp_path / "spread.sqlite") == dump(tmp_path / "here.sqlite")
    assert len(work["skipped"]) == 1 and work["versions"] == 14


def test_workers_started_for_more_chunks_than_come_are_stopped(store_path, monkeypatch):
    """A snapshot starts its workers from HEAD's listing, before its chunks are cut (spread.start):
    the ones no chunk needs stop, and the others' rows are the rows read here."""
    seed(store_path)
    monkeypatch.setattr(spread, "SPREAD_AT", 1)
    monkeypatch.setattr(spread, "workers", lambda: 3)
    procs = spread.start(store_path, 5000)
    assert procs is not None and len(procs) == 3
    entries = sorted(snapshot.entries_of(snapshot.head_tree(store_path, gitlog.head(store_path))))
    chunk = [(n, key, None, None, blob) for n, (key, blob) in enumerate(entries, 1)]
    parts = spread.parts(store_path, [chunk], procs)
    assert procs[1].wait(timeout=10) is not None and procs[2].wait(timeout=10) is not None
    assert list(parts) == [spread._rows(store_path, chunk)]
    assert procs[0].wait(timeout=10) is not None
    assert spread.parts(store_path, [], spread.start(store_path, 5000)) is None  # nothing to read: all stop


def test_a_workers_kept_git_reads_what_one_git_a_chunk_read(store_path):
    """spread.Reader (one `git cat-file --batch` for a worker's life) answers as gitlog.blobs, a
    name git cannot resolve left out, chunk after chunk; a git that is gone is an error, never a
    chunk of missing blobs (which would hold every record out)."""
    import pytest

    seed(store_path)
    entries = sorted(snapshot.entries_of(snapshot.head_tree(store_path, gitlog.head(store_path))))
    shas = sorted({blob for _key, blob in entries}) + ["0" * 40]
    reader = spread.Reader(store_path)
    for part in (shas[:3], shas, shas[5:], [shas[-1]]):
        assert reader.blobs(part) == gitlog.blobs(store_path, part)
    assert len(reader.blobs(shas)) == len(shas) - 1
    reader.close()
    assert reader.proc.returncode == 0
    reader = spread.Reader(store_path)
    reader.proc.kill()
    reader.proc.wait()
    with pytest.raises(OSError):
        reader.blobs(shas)
