"""A door's new question: its vectors' cache write is kept until the answer's search is done
(embed._write_later, embed.write_pending at the end of pipeline.search), made in one commit for
both models and, in a door, for several answers (WRITE_BATCH rows, or the oldest WRITE_AFTER_S
old); a question asked again meanwhile reads its vector from memory; whoever opens the cache first
sees the vectors, as before; the door's exit writes what is left; a CLI process (not resident)
writes them at once."""

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


def test_a_door_search_writes_its_question_vectors_in_batches(both, store_path, monkeypatch):
    """pipeline.search's end writes the door's kept vectors once WRITE_BATCH rows wait: one commit
    for several answers, none on the answers in between; every vector then is in the cache."""
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import E5
    from kyb_cli.core.search.pipeline import search
    from tests.support.index_helpers import T0, put

    put(store_path, "db-primary", "Database primary", "the primary database host", T0)
    embed.resident(True)
    monkeypatch.setattr(embed, "WRITE_BATCH", 4)  # an English question: a row per model, so two answers
    writes = counted_writes(monkeypatch)
    texts = ["where does the primary database run", "which host is the primary", "who runs the database"]
    search(store_path, texts[0], semantic=True)
    assert writes == [] and sum(len(rows) for _c, rows in embed._PENDING) == 2  # kept: a row per model
    search(store_path, texts[1], semantic=True)
    assert len(writes) == 1 and len(writes[0]) == 4 and not embed._PENDING  # two answers, one commit
    search(store_path, texts[2], semantic=True)
    assert len(writes) == 1 and embed._PENDING
    fp, _why, _loc = embed.current_fingerprint(E5)
    cache = embed.open_cache()  # a reader of the cache: the last answer's vectors are written first
    assert len(writes) == 2 and not embed._PENDING
    assert all(cache.get(fp, embed.text_hash(E5.query_input(t))) is not None for t in texts)


def test_a_door_writes_a_lone_vector_once_it_waited_WRITE_AFTER_S(both, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import E5

    embed.resident(True)
    writes = counted_writes(monkeypatch)
    embed.query_vectors("when does the cert expire", [E5])
    embed.write_pending(batched=True)
    assert writes == [] and embed._PENDING  # one row, just made: kept
    monkeypatch.setattr(embed, "_SINCE", [embed._SINCE[0] - embed.WRITE_AFTER_S])
    embed.write_pending(batched=True)
    assert len(writes) == 1 and not embed._PENDING


def test_a_door_question_asked_again_reads_its_kept_vector_without_a_run_or_a_write(both, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import BGE, E5

    embed.resident(True)
    writes = counted_writes(monkeypatch)
    got = embed.query_vectors("who rotates the tls cert", [E5, BGE])
    runs = []
    monkeypatch.setattr(embed, "_embed", lambda *a: runs.append(a) or [b""])
    assert embed.query_vectors("who rotates the tls cert", [E5, BGE]) == got
    assert runs == [] and writes == [] and embed._PENDING  # read from memory, still kept


def test_a_door_exit_writes_the_vectors_it_kept(tiny_dir, tmp_path):
    """The process boundary is the contract: a door that ends normally leaves no vector unwritten."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "KYB_MODEL": str(tiny_dir), "KYB_EMBED_HELPER": "0", "XDG_CACHE_HOME": str(tmp_path / "c")}
    code = ("from kyb_cli.core import embed\n"
            "from kyb_cli.core.embed.models import E5\n"
            "embed.resident(True)\n"
            "fp, vector, why = embed.query_vectors('who owns the pager', [E5])[0]\n"
            "assert vector is not None and embed._PENDING, why\n"
            "print(fp)\n")
    fp = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()
    from kyb_cli.core.embed.cache import VectorCache
    from kyb_cli.core.embed.models import E5
    from kyb_cli.core.embed.recipe import text_hash

    cache = VectorCache(tmp_path / "c" / "kyb" / "embeddings.sqlite3")
    try:
        assert cache.get(fp, text_hash(E5.query_input("who owns the pager"))) is not None
    finally:
        cache.close()


def test_a_process_that_is_not_a_door_writes_at_once(both, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import BGE, E5

    embed.resident(False)
    writes = counted_writes(monkeypatch)
    got = embed.query_vectors("where are the backups", [E5, BGE])
    assert len(writes) == 1 and not embed._PENDING
    fp, vector, _why = got[0]
    assert embed.open_cache().get(fp, embed.text_hash(E5.query_input("where are the backups"))) == vector
