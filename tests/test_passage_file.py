"""A one-shot process keeps long bodies' passages in a file next to the index (search/passage_file.py):
another process's passages are read, not cut again; a full file, a file made by another recipe, a
file that cannot be used all give the answer the in-memory table gives."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kyb_cli import api
from kyb_cli.core.search import passage_file, passage_words
from tests.support.index_helpers import T0, put
from tests.test_search_last_points import _essay

QUESTION = "webhooks retries backoff hours"


@pytest.fixture(autouse=True)
def _fresh_files(monkeypatch):
    monkeypatch.setattr(passage_file, "_OPEN", {})


def _store(store_path) -> None:
    put(store_path, "essay", "Notes on agent memory", _essay(["webhooks", "retries", "backoff", "hours"]), T0)
    put(store_path, "essay-2", "More notes", _essay(["webhooks", "hours"], 30), T0 + 1)
    put(store_path, "payments-retry", "Payment webhook retries",
        "Stripe retries webhooks with exponential backoff for up to 72 hours.", T0 + 2)


def _answer(store_path) -> list:
    hits = api.query(str(store_path), QUESTION, semantic=False, explain=True)[1]["hits"]
    return [(h["key"], h["strength"], h["explain"]["coverage"]) for h in hits]


def _as_a_door(store_path, monkeypatch) -> list:
    with monkeypatch.context() as m:
        m.setattr(passage_words, "_door", lambda: True)
        return _answer(store_path)


def _file(store_path):
    return store_path / ".git" / "kyb" / passage_file.NAME


def test_another_processes_passages_are_read_not_cut_again(store_path, monkeypatch):
    _store(store_path)
    code = ("import sys; from kyb_cli import api; "
            f"api.query(sys.argv[1], {QUESTION!r}, semantic=False)")
    subprocess.run([sys.executable, "-c", code, str(store_path)], check=True)
    assert _file(store_path).exists()

    def no_cut(*_a):
        raise AssertionError("cut again")

    monkeypatch.setattr(passage_words, "_cut", no_cut)
    got = _answer(store_path)
    monkeypatch.undo()
    assert got == _as_a_door(store_path, monkeypatch)
    assert any(s == "weak" for k, s, _c in got if k == "essay")  # judged by its passages


def test_a_full_file_is_emptied_and_refilled_with_the_answers_versions(store_path, monkeypatch):
    _store(store_path)
    door = _as_a_door(store_path, monkeypatch)
    assert _answer(store_path) == door
    monkeypatch.setattr(passage_file, "KEEP_ROWS", 1)
    put(store_path, "essay-3", "Third notes", _essay(["webhooks", "retries"], 20), T0 + 3)  # a new blob to cut
    door = _as_a_door(store_path, monkeypatch)
    assert _answer(store_path) == door  # the file was emptied, then refilled with every version asked
    assert _answer(store_path) == door  # and read back


def test_a_file_made_by_another_recipe_is_emptied(store_path, monkeypatch):
    _store(store_path)
    monkeypatch.setattr(passage_file, "_made_by", lambda: "another recipe")
    first = _answer(store_path)
    monkeypatch.undo()
    monkeypatch.setattr(passage_file, "_OPEN", {})  # a new process of the current recipe
    calls = []
    cut = passage_words._cut
    monkeypatch.setattr(passage_words, "_cut", lambda *a: calls.append(a) or cut(*a))
    assert _answer(store_path) == first == _as_a_door(store_path, monkeypatch)
    assert calls  # its passages were cut again, not read from the other recipe's


def test_a_file_that_cannot_be_used_falls_back_to_memory(store_path, monkeypatch):
    _store(store_path)
    _file(store_path).mkdir(parents=True)  # not a database
    door = _as_a_door(store_path, monkeypatch)
    assert _answer(store_path) == door
    assert passage_file._OPEN  # tried once
    assert all(v is False for v in passage_file._OPEN.values())


def test_term_counts_are_kept_on_disk_and_recounted_after_a_write_from_another_process(store_path, monkeypatch):
    """search/df_file.py: a one-shot process reads the counts another one kept for the same index
    state; a write elsewhere (a new version: a new state) makes the next answer count afresh."""
    from kyb_cli.core.search import relevance

    _store(store_path)
    first = _answer(store_path)
    counted = []
    df = relevance._df
    monkeypatch.setattr(relevance, "_df", lambda *a: counted.append(a[1]) or df(*a))
    monkeypatch.setattr(relevance, "_DF", [(None, {})])  # what a new process keeps in memory
    assert _answer(store_path) == first and counted == []  # read from the file
    code = ("import sys; from tests.support.index_helpers import put, T0; "
            "put(sys.argv[1], 'hooks', 'Webhooks', 'Webhooks retry with backoff.', T0 + 7)")
    subprocess.run([sys.executable, "-c", code, str(store_path)], check=True)
    monkeypatch.setattr(relevance, "_DF", [(None, {})])
    got = _answer(store_path)
    assert counted  # the new state's counts were made, not the old ones read
    monkeypatch.undo()
    monkeypatch.setattr(relevance, "_DF", [(None, {})])
    assert got == _as_a_door(store_path, monkeypatch)
    assert "hooks" in [k for k, _s, _c in got]
