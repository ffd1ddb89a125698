"""Property: over random histories, every read mode answers the same from the index as from a walk of Git.

Histories (tests/support/histories.py) mix kyb-shaped writes, retractions, closes, hand commits,
merges of side lines and resets. After each history the index (kyb_cli.core.index, the production
reads) and the Git walk (tests/support/oracle.py) must agree on: `get` of every key, `get --at`
every first-parent commit, `history`, `tags`, the listings of each kind, and the query modes
current, as-of (at every commit time and between them) and history.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kyb_cli.core.errors import KybError
from kyb_cli.core.index import reads
from kyb_cli.core.search.pipeline import search
from support import oracle
from support.histories import KEYS, OPS, WORDS, History

STEP = st.tuples(st.sampled_from(OPS), st.sampled_from(KEYS), st.sampled_from(WORDS),
                 st.integers(min_value=-5, max_value=40), st.integers(min_value=0, max_value=6))


def _outcome(fn, *args):
    try:
        value = fn(*args)
    except KybError as exc:
        return ("error", type(exc).__name__, exc.exit_code)
    return ("ok", value)


def _version(v) -> tuple:
    return (v.sha, v.state, v.committed_at, v.ended_sha, v.record.to_json())


def _read(fn, store, key, at=None):
    out = _outcome(fn, store, key, at)
    return out if out[0] == "error" else ("ok", _version(out[1]))


def _hits(store_path, **kwargs) -> set[tuple]:
    res = search(store_path, "", limit=100, **kwargs)
    return {(h["key"], h["sha"], h["state"]) for h in res["hits"]}


def _check(store_path, log: list[str]) -> None:
    import pygit2

    repo = pygit2.Repository(str(store_path))
    head = repo.head.peel(pygit2.Commit)
    line = []
    commit = head
    while True:
        line.append(commit)
        if not commit.parents:
            break
        commit = commit.parents[0]
    for key in KEYS:
        assert _read(reads.read, store_path, key) == _read(oracle.read, store_path, key), (key, log)
        got = _outcome(reads.history, store_path, key)
        want = _outcome(oracle.history, store_path, key)
        if got[0] == "ok" and want[0] == "ok":
            got = ("ok", sorted((r.sha, r.change) for r in got[1]))
            want = ("ok", sorted((r.sha, r.change) for r in want[1]))
        assert got == want, ("history", key, log)
        for c in line[:6]:
            assert _read(reads.read, store_path, key, str(c.id)) == _read(oracle.read, store_path, key, str(c.id)), (
                "get --at", key, str(c.id), log)
    assert reads.tags(store_path) == oracle.tags(store_path), log
    for kind in ("knowledge", "incident", "task"):
        got = {(e.record.key, e.sha, e.archived) for e in reads.catalog(store_path, kind)}
        want = {(e.record.key, e.sha, e.archived) for e in oracle.catalog(store_path, kind)}
        assert got == want, (kind, log)
    assert _hits(store_path) == oracle.current_hits(store_path), ("current", log)
    assert {(k, s) for k, s, _ in _hits(store_path, mode="history")} == oracle.history_hits(store_path), log
    times = sorted({c.commit_time for c in line} | {c.commit_time - 1 for c in line})
    for t in times[:: max(1, len(times) // 8)] + [times[-1] + 100]:
        assert _hits(store_path, mode="as_of", as_of=t) == oracle.as_of_hits(store_path, t), ("as_of", t, log)


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("KYB_PROPERTY_EXAMPLES", "25")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=14))
def test_index_answers_every_read_mode_as_the_git_walk_does(tmp_path_factory, steps):
    from kyb_cli.core.canon.repo import init_store

    path = tmp_path_factory.mktemp("prop") / "store"
    init_store(path)
    history = History(path)
    for op, key, word, dt, pick in steps:
        history.step(op, key, word, dt, pick)
    _check(path, history.log)
