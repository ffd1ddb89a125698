"""The dev set's "vectors only" column (bench/eval_devset.py) asks the real pipeline with
KYB_SEARCH_RANKING=vectors: the porcelain hands the pipeline the vector side's own order
(pipeline.VECTORS) and the answer says so; the pipeline itself reads no environment, and without
the hook nothing changes."""

from __future__ import annotations

import pytest

from tests.support.index_helpers import T0, fill_in_background_now, put


def seeded(store_path):
    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 3", T0)
    put(store_path, "db-primary", "Database primary", "the primary database host", T0 + 10)
    put(store_path, "old-cache", "Cache", "cache worker queue checkout", T0 + 20)
    fill_in_background_now(store_path)  # queries never embed passages


def ask(store_path, text):
    from kyb_cli import api

    return api.query(str(store_path), text, semantic=True, explain=True)[1]


def in_vector_order(r) -> bool:
    ranks = [h["explain"]["vector_rank"] for h in r["hits"]]
    return (ranks == sorted(ranks) and None not in ranks
            and all(h["explain"]["lexical_rank"] is None for h in r["hits"]))


def test_vectors_ranking_hook_orders_hits_by_the_vector_side_alone(store_path, tiny, monkeypatch):
    seeded(store_path)
    assert "ranking" not in ask(store_path, "checkout database")
    monkeypatch.setenv("KYB_SEARCH_RANKING", "vectors")
    r = ask(store_path, "checkout database")
    assert r["ranking"] == "vectors" and r["count"] == 3
    assert in_vector_order(r)


def test_the_pipeline_orders_as_the_caller_passes_in_and_reads_no_hook(store_path, tiny, monkeypatch):
    from kyb_cli.core.search.pipeline import VECTORS, search

    seeded(store_path)
    monkeypatch.setenv("KYB_SEARCH_RANKING", "vectors")
    assert "ranking" not in search(store_path, "checkout database", semantic=True, explain=True)
    r = search(store_path, "checkout database", semantic=True, explain=True, ordering=VECTORS)
    assert r["ranking"] == "vectors" and in_vector_order(r)


def test_a_bad_ranking_hook_value_is_a_usage_error(store_path, monkeypatch):
    from kyb_cli.api import UsageError

    monkeypatch.setenv("KYB_SEARCH_RANKING", "vector")
    with pytest.raises(UsageError, match="KYB_SEARCH_RANKING='vector' is not one of: vectors"):
        ask(store_path, "checkout")
