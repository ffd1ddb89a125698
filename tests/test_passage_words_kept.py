"""A long body's passages are kept between answers (search/passage_words.py), keyed by the version's
key and Git blob: an edit is judged by its new passages at once, a kept table that fills up is emptied
without changing an answer, and a long-lived door answers as a one-shot process does."""

from __future__ import annotations

import subprocess
import sys

from kyb_cli import api
from kyb_cli.core.search import passage_words
from tests.support.index_helpers import T0, put
from tests.test_search_last_points import _essay

WORDS = ["webhooks", "retries", "backoff", "hours"]
QUESTION = "webhooks retries backoff hours"


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


def test_an_edit_from_another_process_is_judged_by_its_new_passages(store_path):
    _store(store_path)
    assert _by_key(store_path)["essay"][0] == "weak"  # its passages are kept now
    kept = passage_words._kept(0)
    assert kept.size > 1
    code = ("import sys; from tests.support.index_helpers import put, T0; "
            f"put(sys.argv[1], 'essay', 'Notes on agent memory', {_essay_together()!r}, T0 + 5)")
    subprocess.run([sys.executable, "-c", code, str(store_path)], check=True)
    assert _by_key(store_path)["essay"][0] == "strong"  # the new text: its own passages, one holds all four
    put(store_path, "essay", "Notes on agent memory", _essay(WORDS), T0 + 9)  # and back
    assert _by_key(store_path)["essay"][0] == "weak"


def test_a_full_table_is_emptied_and_answers_stay_the_same(store_path, monkeypatch):
    _store(store_path)
    first = _by_key(store_path)
    monkeypatch.setattr(passage_words, "KEEP_ROWS", 1)  # every answer empties the table first
    for _ in range(3):
        assert _by_key(store_path) == first
    assert passage_words._kept(0).size == 0  # emptied again: nothing is kept past the budget


def test_kept_passages_answer_as_a_fresh_table_does(store_path):
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
