"""A long body's passages are kept between answers (search/passage_words.py), keyed by the version's
key and Git blob: an edit is judged by its new passages at once, a kept table that fills up is emptied
without changing an answer, and a long-lived door answers as a one-shot process does. Each test runs
twice: as a door (the in-memory table) and as a one-shot process (the file of search/passage_file.py)."""

from __future__ import annotations

import subprocess
import sys

import apsw
import pytest

from kyb_cli import api
from kyb_cli.core.search import passage_file, passage_words
from tests.support.index_helpers import T0, put
from tests.test_search_last_points import _essay

WORDS = ["webhooks", "retries", "backoff", "hours"]
QUESTION = "webhooks retries backoff hours"


@pytest.fixture(params=["door", "one-shot"])
def where(request, monkeypatch) -> str:
    if request.param == "door":
        monkeypatch.setattr(passage_words, "_door", lambda: True)
    return request.param


def _held(store_path, where: str) -> int:
    """The passages kept: the in-memory table's for a door, the file's for a one-shot process."""
    if where == "door":
        return passage_words._kept(0).size
    conn = apsw.Connection(str(store_path / ".git" / "kyb" / passage_file.NAME))
    try:
        return conn.execute("SELECT held FROM meta").fetchone()[0]
    finally:
        conn.close()


def _store(store_path) -> None:
    put(store_path, "essay", "Notes on agent memory", _essay(WORDS), T0)
    put(store_path, "payments-retry", "Payment webhook retries",
        "Stripe retries webhooks with exponential backoff for up to 72 hours.", T0 + 1)


def _by_key(store_path) -> dict:
    hits = api.query(str(store_path), QUESTION, semantic=False, explain=True)[1]["hits"]
    return {h["key"]: (h["strength"], h["explain"]["coverage"]) for h in hits}


def _essay_together() -> str:
    """The essay rewritten: its four words now meet in one paragraph."""
    return _essay(["x"]) + "\n\nFinally: webhooks retries use backoff for hours."


def test_an_edit_from_another_process_is_judged_by_its_new_passages(store_path, where):
    _store(store_path)
    assert _by_key(store_path)["essay"][0] == "weak"  # its passages are kept now
    assert _held(store_path, where) > 1
    code = ("import sys; from tests.support.index_helpers import put, T0; "
            f"put(sys.argv[1], 'essay', 'Notes on agent memory', {_essay_together()!r}, T0 + 5)")
    subprocess.run([sys.executable, "-c", code, str(store_path)], check=True)
    assert _by_key(store_path)["essay"][0] == "strong"  # the new text: its own passages, one holds all four
    put(store_path, "essay", "Notes on agent memory", _essay(WORDS), T0 + 9)  # and back
    assert _by_key(store_path)["essay"][0] == "weak"


def test_a_full_table_is_emptied_and_answers_stay_the_same(store_path, monkeypatch, where):
    _store(store_path)
    first = _by_key(store_path)
    monkeypatch.setattr(passage_words, "KEEP_ROWS", 1)  # every answer empties the table first
    monkeypatch.setattr(passage_file, "KEEP_ROWS", 1)
    for _ in range(3):
        assert _by_key(store_path) == first
    if where == "door":
        assert _held(store_path, where) == 0  # emptied again: nothing is kept past the budget
    else:  # emptied, then this answer's own passages (the file keeps what the answer used)
        assert 1 < _held(store_path, where) <= 2 * 24


def test_kept_passages_answer_as_a_fresh_table_does(store_path, where):
    """The same answers from a thread that has kept the passages and from one that starts empty."""
    import threading

    _store(store_path)
    put(store_path, "essay-2", "More notes", _essay(["webhooks", "hours"], 30), T0 + 2)
    warm = [_by_key(store_path), _by_key(store_path)]
    fresh: list = []
    t = threading.Thread(target=lambda: fresh.append(_by_key(store_path)))
    t.start()
    t.join()
    assert warm[0] == warm[1] == fresh[0]
