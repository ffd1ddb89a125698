"""A door's new question: its vectors' cache write runs on a kept worker thread, not the answering
thread (embed._write_later), and whoever opens the cache next sees the vectors, as before; a CLI
process (not resident) writes them on its own thread, at once."""

from __future__ import annotations

import threading

import pytest


@pytest.fixture
def both(tiny, monkeypatch):
    monkeypatch.setenv("KYB_MODEL_EN", str(tiny))
    from kyb_cli.core import embed

    yield tiny
    embed.resident(False)
    embed._settle_writes()


def blocked_writes(monkeypatch):
    """VectorCache.put_each held until `release` is set; records the thread of each write."""
    from kyb_cli.core.embed.cache import VectorCache

    release, started, threads = threading.Event(), threading.Event(), []
    real = VectorCache.put_each

    def put_each(self, rows):
        threads.append(threading.get_ident())
        started.set()
        release.wait(30)
        return real(self, rows)

    monkeypatch.setattr(VectorCache, "put_each", put_each)
    return release, started, threads


def test_a_door_answers_before_its_cache_write_and_the_next_reader_sees_it(both, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import BGE, E5

    embed.resident(True)
    release, started, threads = blocked_writes(monkeypatch)
    got = embed.query_vectors("how do I rotate the deploy key", [E5, BGE])
    assert all(vector is not None for _fp, vector, _why in got)
    assert not started.is_set()  # kept until the answer's search is done ...
    embed.write_pending()  # ... (pipeline.search), then written beside
    assert started.wait(30) and threads[0] != threading.get_ident()  # the write: another thread
    assert not release.is_set()  # ... still held, and the answer came back anyway
    release.set()
    cache = embed.open_cache()  # waits for the write
    for spec, (fp, vector, _why) in zip((E5, BGE), got):
        assert cache.get(fp, embed.text_hash(spec.query_input("how do I rotate the deploy key"))) == vector
    runs = []
    monkeypatch.setattr(embed, "_embed", lambda *a: runs.append(a) or [b""])
    assert embed.query_vectors("how do I rotate the deploy key", [E5, BGE]) == got  # cached: no run
    assert runs == []


def test_a_process_that_is_not_a_door_writes_on_its_own_thread(both, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import BGE, E5

    embed.resident(False)
    release, _started, threads = blocked_writes(monkeypatch)
    release.set()
    got = embed.query_vectors("where are the backups", [E5, BGE])
    assert threads == [threading.get_ident()] and not embed._WRITES
    fp, vector, _why = got[0]
    assert embed.open_cache().get(fp, embed.text_hash(E5.query_input("where are the backups"))) == vector


def test_a_door_looks_both_up_first_and_one_model_alone_writes_later(both, monkeypatch):
    """start_query then finish_query on another thread (route.beside): the vectors query_vectors
    makes, and a door's one-model write goes to the worker too, seen by the next reader."""
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import BGE, E5

    text = "which queue holds the retries"
    embed.resident(True)
    release, started, threads = blocked_writes(monkeypatch)
    first, other = embed.start_query(text, [E5]), embed.start_query(text, [BGE])
    got = embed.finish_query(first) + embed.finish_query(other)
    embed.write_pending()
    assert started.wait(30) and threading.get_ident() not in threads  # written beside the answer
    release.set()
    cache = embed.open_cache()  # waits for the writes
    for spec, (fp, vector, _why) in zip((E5, BGE), got):
        assert vector is not None and cache.get(fp, embed.text_hash(spec.query_input(text))) == vector
    embed.resident(False)
    assert embed.query_vectors(text, [E5, BGE]) == got


def test_a_door_vector_not_handed_to_the_writer_yet_is_seen_by_the_next_reader(both):
    """A door's vectors kept for write_pending are written by whoever opens the cache next."""
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import E5

    embed.resident(True)
    fp, vector, _why = embed.query_vectors("who owns the billing cron", [E5])[0]
    assert vector is not None and embed._PENDING  # not written yet
    assert embed.open_cache().get(fp, embed.text_hash(E5.query_input("who owns the billing cron"))) == vector
    assert not embed._PENDING and not embed._WRITES
