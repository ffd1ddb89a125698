"""A full build whose workers parse one batch while it writes the one before, that fills
`fts_now` once at the end and makes the indexes no build statement reads after its rows (issue 39), is the index a build gives flush by flush, keeping `fts_now`
up at every flush: the same rows, on histories with merges that take a version still being parsed,
deletions on side lines, retractions, closes and unreadable versions."""

from __future__ import annotations

import random

import pytest

from kyb_cli.core.canon.repo import init_store
from kyb_cli.core.index import build as index_build
from kyb_cli.core.index import gitlog, schema, spread, walk
from tests.support.histories import KEYS, OPS, WORDS, History
from tests.support.index_helpers import dump_index

TABLES = ("commits", "versions", "vtext", "unreadable", "events", "keys", "meta")


def dump(db) -> dict:
    out = dump_index(db, TABLES, fts_rows="rowid")
    conn = schema.connect(db)
    try:
        out["fts_now_words"] = conn.execute("SELECT count(*) FROM fts_now WHERE fts_now MATCH 'side OR hand'").fetchall()
        # the schema too: a build makes some indexes once its rows are in (schema.LATER), the same ones
        out["schema"] = sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"), key=repr)
    finally:
        conn.close()
    return out


def flush_by_flush(store, db, head) -> None:
    """The build as it was before the pipeline: in-process, `fts_now` kept up at each flush."""
    src = walk.source(store, None, head)
    conn = schema.connect(db, create=True)
    try:
        schema.create(conn)
        builder = index_build.Builder(conn, store, dict(src.first_parent_line(head) or []), src)
        with conn:
            builder.run(src.commits(head, order=src.revisions(head)))
            index_build._set_head(conn, head)
            index_build.optimize(conn)
    finally:
        conn.close()


def history(path, seed: int) -> History:
    init_store(path)
    made, rng = History(path), random.Random(seed)
    for _ in range(40):
        made.step(rng.choice(OPS), rng.choice(KEYS), rng.choice(WORDS), rng.randint(-5, 60), rng.randint(0, 9))
    return made


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_piped_build_is_the_build_flush_by_flush(tmp_path, monkeypatch, seed):
    store = tmp_path / "store"
    made = history(store, seed)
    head = gitlog.head(store)
    monkeypatch.setattr(index_build, "FLUSH_EVERY", 1)  # a batch a version: merges reach the parsing batch
    flush_by_flush(store, tmp_path / "old.sqlite", head)
    monkeypatch.setattr(spread, "SPREAD_AT", 1)
    monkeypatch.setattr(spread, "workers", lambda: 2)
    pools = []
    real = spread.Pool
    monkeypatch.setattr(spread, "Pool", lambda *a: pools.append(real(*a)) or pools[-1])
    index_build.build_file(store, tmp_path / "piped.sqlite", head, note=False)
    assert len(pools) == 1  # it did go through the workers
    old = dump(tmp_path / "old.sqlite")
    assert dump(tmp_path / "piped.sqlite") == old, made.log
    assert old["fts_now"] and any("merge" in step for step in made.log)


def test_a_build_without_workers_is_the_build_flush_by_flush(tmp_path, monkeypatch):
    store = tmp_path / "store"
    made = history(store, 5)
    head = gitlog.head(store)
    monkeypatch.setattr(index_build, "FLUSH_EVERY", 3)
    flush_by_flush(store, tmp_path / "old.sqlite", head)
    monkeypatch.setattr(spread, "pool", lambda *a: None)
    index_build.build_file(store, tmp_path / "here.sqlite", head, note=False)
    assert dump(tmp_path / "here.sqlite") == dump(tmp_path / "old.sqlite"), made.log


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_one_walk_gives_the_order_and_the_first_parent_line(tmp_path, seed):
    """build_file walks the history once (`--parents`) for what two walks gave, while git log starts."""
    store = tmp_path / "store"
    made = history(store, seed)
    head = gitlog.head(store)
    program = gitlog.Program(store)
    both = (program.revisions(head), program.first_parent_line(head))
    assert gitlog.revisions_and_line(store, head) == both, made.log
    order, line, commits = program.replay(head)
    assert [c.sha for c in commits] == [sha for sha, _when in order]
    assert (order, line) == both
    order, line, commits = walk.Walk(store).replay(head)
    assert (order, line) == both
    assert len(both[1]) < len(both[0]) and any("merge" in step for step in made.log)


def test_a_replay_left_unread_ends_its_git_log(tmp_path):
    store = tmp_path / "store"
    history(store, 1)
    for read in (0, 1):  # closed before its first commit, and after one
        _order, _line, commits = gitlog.Program(store).replay(gitlog.head(store))
        for _commit in zip(range(read), commits):
            pass
        commits.close()
        assert commits.proc.returncode is not None
