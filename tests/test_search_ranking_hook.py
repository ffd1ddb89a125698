"""The dev set's "vectors only" column (bench/eval_devset.py) asks the real pipeline with
KYB_SEARCH_RANKING=vectors: hits come in the vector side's own order and the answer says so;
without it nothing changes."""

from __future__ import annotations

from tests.support.index_helpers import T0, fill_in_background_now, put


def search(store_path, text, **kw):
    """A query once the background filler has embedded every version (queries never embed passages)."""
    from kyb_cli.core.search.pipeline import search as run

    fill_in_background_now(store_path)
    return run(store_path, text, semantic=True, explain=True, **kw)


def test_vectors_ranking_hook_orders_hits_by_the_vector_side_alone(store_path, tiny, monkeypatch):
    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 3", T0)
    put(store_path, "db-primary", "Database primary", "the primary database host", T0 + 10)
    put(store_path, "old-cache", "Cache", "cache worker queue checkout", T0 + 20)
    plain = search(store_path, "checkout database")
    assert "ranking" not in plain
    monkeypatch.setenv("KYB_SEARCH_RANKING", "vectors")
    r = search(store_path, "checkout database")
    assert r["ranking"] == "vectors" and r["count"] == 3
    ranks = [h["explain"]["vector_rank"] for h in r["hits"]]
    assert ranks == sorted(ranks) and None not in ranks
    assert all(h["explain"]["lexical_rank"] is None for h in r["hits"])
