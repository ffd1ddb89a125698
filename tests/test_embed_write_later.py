"""A door's new question: its vectors' cache write is kept until the answer's search is done
(embed._write_later, embed.write_pending at the end of pipeline.search), made in one commit for
both models, and whoever opens the cache first sees the vectors, as before; a CLI process (not
resident) writes them at once."""

from __future__ import annotations

import pytest


@pytest.fixture
def both(tiny, monkeypatch):
    monkeypatch.setenv("KYB_MODEL_EN", str(tiny))
    from kyb_cli.core import embed

    yield tiny
    embed.resident(False)
    embed.write_pending()


def counted_writes(monkeypatch) -> list:
    """Each VectorCache.put_each's rows, as they are written."""
    from kyb_cli.core.embed.cache import VectorCache

    writes = []
    real = VectorCache.put_each

    def put_each(self, rows):
        writes.append(list(rows))
        return real(self, rows)

    monkeypatch.setattr(VectorCache, "put_each", put_each)
    return writes


def test_a_door_writes_both_vectors_once_its_search_is_done(both, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import BGE, E5

    embed.resident(True)
    writes = counted_writes(monkeypatch)
    text = "how do I rotate the deploy key"
    first, other = embed.start_query(text, [E5]), embed.start_query(text, [BGE])
    got = embed.finish_query(first) + embed.finish_query(other)  # as pipeline._semantic and route.beside
    assert all(vector is not None for _fp, vector, _why in got)
    assert writes == []  # kept while the answer ranks ...
    embed.write_pending()  # ... (pipeline.search's end), then one commit for both models
    assert len(writes) == 1 and len(writes[0]) == 2
    cache = embed.open_cache()
    for spec, (fp, vector, _why) in zip((E5, BGE), got):
        assert cache.get(fp, embed.text_hash(spec.query_input(text))) == vector
    runs = []
    monkeypatch.setattr(embed, "_embed", lambda *a: runs.append(a) or [b""])
    assert embed.query_vectors(text, [E5, BGE]) == got  # cached: no run
    assert runs == []


def test_a_door_vector_not_written_yet_is_seen_by_the_next_reader(both):
    """open_cache writes what _write_later kept before anyone reads the cache."""
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import E5

    embed.resident(True)
    fp, vector, _why = embed.query_vectors("who owns the billing cron", [E5])[0]
    assert vector is not None and embed._PENDING  # not written yet
    assert embed.open_cache().get(fp, embed.text_hash(E5.query_input("who owns the billing cron"))) == vector
    assert not embed._PENDING


def test_a_door_search_writes_its_question_vector(both, store_path, monkeypatch):
    """pipeline.search's end writes the door's kept vector: nothing is left pending after an answer,
    and the question's vector is in the cache."""
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import E5
    from kyb_cli.core.search.pipeline import search
    from tests.support.index_helpers import T0, put

    put(store_path, "db-primary", "Database primary", "the primary database host", T0)
    embed.resident(True)
    writes = counted_writes(monkeypatch)
    text = "where does the primary database run"
    search(store_path, text, semantic=True)
    assert not embed._PENDING and writes
    fp, _why, _loc = embed.current_fingerprint(E5)
    assert embed.open_cache().get(fp, embed.text_hash(E5.query_input(text))) is not None


def test_a_process_that_is_not_a_door_writes_at_once(both, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import BGE, E5

    embed.resident(False)
    writes = counted_writes(monkeypatch)
    got = embed.query_vectors("where are the backups", [E5, BGE])
    assert len(writes) == 1 and not embed._PENDING
    fp, vector, _why = got[0]
    assert embed.open_cache().get(fp, embed.text_hash(E5.query_input("where are the backups"))) == vector
