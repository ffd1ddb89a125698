"""Rule "known answers": a long-lived door answers a words-only question it was asked before at the
same index state from the answer it kept (core/search/known.py), and that answer is exactly what
searching again gives; a write, a removal or any other move of the index state is searched again;
an answer by meaning, a snapshot's answer and a one-shot process's answer are never kept."""

from __future__ import annotations

import pytest

from kyb_cli.core.index import warm
from kyb_cli.core.index.slice import Filters
from kyb_cli.core.search import known, pipeline
from kyb_cli.core.search.pipeline import Ask
from tests.support.index_helpers import T0, keys, put, query, remove


@pytest.fixture
def door():
    warm.keep(True)
    yield
    warm.keep(False)


@pytest.fixture
def searched(monkeypatch):
    """How many phrasings the pipeline searched (a kept answer searches none)."""
    calls = []
    real = pipeline._phrasing
    monkeypatch.setattr(pipeline, "_phrasing", lambda *a: calls.append(a[1]) or real(*a))
    return calls


def _store(store_path) -> None:
    put(store_path, "pg", "Postgres failover", "promote the replica when the primary is down", T0)
    put(store_path, "disk", "Disk full", "the database host ran out of disk; rotate the logs", T0 + 1)
    put(store_path, "helm", "Helm rollback", "roll back the release with helm rollback", T0 + 2, tags=["k8s"])


QUESTIONS = [("replica primary", {}), ("disk", {"limit": 1}), ("rollback", {"filters": Filters(tags=["k8s"])}),
             ('"database host"', {}), ("replica -disk", {"mode": "history"}), ("", {}), ("helm", {"explain": True}),
             ("replica", {"annotate": True}), ("disk", {"recent": True})]


def test_known_question_is_answered_from_the_kept_answer_the_same_as_searching(store_path, door, searched,
                                                                               monkeypatch):
    _store(store_path)
    first = [query(store_path, q, **kw) for q, kw in QUESTIONS]
    asked = len(searched)
    again = [query(store_path, q, **kw) for q, kw in QUESTIONS]
    assert len(searched) == asked  # every one answered from what was kept
    monkeypatch.setattr(known, "key", lambda *a: None)
    assert [query(store_path, q, **kw) for q, kw in QUESTIONS] == again == first
    assert len(searched) == 2 * asked


def test_a_kept_answer_is_new_objects_every_time(store_path, door):
    _store(store_path)
    first = query(store_path, "replica")
    first["hits"][0]["title"] = "changed by the caller"
    first["hits"].clear()
    assert keys(query(store_path, "replica")) == ["pg"]
    assert query(store_path, "replica")["hits"][0]["title"] == "Postgres failover"


def test_a_write_or_a_removal_makes_a_known_question_searched_again(store_path, door, searched):
    _store(store_path)
    assert keys(query(store_path, "replica")) == ["pg"]
    put(store_path, "pg2", "Replica lag", "the replica is behind", T0 + 10)
    assert sorted(keys(query(store_path, "replica"))) == ["pg", "pg2"]
    remove(store_path, "pg", when=T0 + 20)
    assert keys(query(store_path, "replica")) == ["pg2"]
    assert len(searched) == 3


def test_one_shot_process_and_answers_by_meaning_keep_nothing(store_path):
    assert known.key(["replica"], Ask()) is None  # no warm.keep(): a one-shot process
    warm.keep(True)
    try:
        assert known.key(["replica"], Ask(semantic=True)) is None  # vectors arrive without a new state
        assert known.key(["replica"], Ask(ordering=pipeline.VECTORS)) is None
        assert known.key(["replica"], Ask()) is not None
    finally:
        warm.keep(False)


def test_a_snapshots_answer_is_never_kept():
    class Snapshot:
        history_complete = False

    assert known.answers(Snapshot()) is None
    known.keep(None, "q", {"hits": []})  # nothing to keep it in: no error
    assert known.kept(None, "q") is None


def test_kept_answers_are_bounded_in_bytes(monkeypatch):
    answers: dict = {}
    big = {"hits": [{"body": "x" * 600}]}
    monkeypatch.setattr(known, "KEPT_BYTES", 1500)  # two answers of ~630 bytes, not three
    monkeypatch.setattr(known, "ANSWER_MAX", 1000)
    known.keep(answers, "a", big)
    known.keep(answers, "b", big)
    assert known.kept(answers, "a") == big and known.kept(answers, "b") == big
    known.keep(answers, "c", big)  # past the bytes: the state's answers start over
    assert known.kept(answers, "a") is None and known.kept(answers, "c") == big
    known.keep(answers, "d", {"hits": [{"body": "x" * 1200}]})  # larger than one answer may be: not kept
    assert known.kept(answers, "d") is None and known.kept(answers, "c") == big
