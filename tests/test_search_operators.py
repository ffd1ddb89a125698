"""Query operators end to end (docs/SEARCH.md "Query syntax"): each operator in each of the four time
modes, on the lexical side alone and hybrid (tiny model: the vector side is filtered too, so an
excluded word never appears in any hit)."""

from __future__ import annotations

import re

import pytest

from tests.support.index_helpers import T0, fill_in_background_now, put

DAY = 86_400
MODES = {
    "current": {},
    "history": {"mode": "history"},
    "as_of": {"mode": "as_of", "as_of": T0 + DAY // 2},
    "changed_between": {"mode": "changed_between", "window": (T0, T0 + 2 * DAY)},
}


def search(store_path, text, **kw):
    from kyb_cli.core.search.pipeline import search as run

    if kw.get("semantic"):
        fill_in_background_now(store_path)  # queries never embed passages: the filler does
    return run(store_path, text, limit=20, **kw)


def seed(store_path):
    put(store_path, "redis-cache", "Redis cache", "Sessions live in redis; kafka consumers read them.", T0)
    put(store_path, "kafka-bus", "Kafka bus", "Events go through kafka topics on node 3.", T0 + 10)
    put(store_path, "bridge", "Redis to Kafka bridge", "The bridge copies redis keys into kafka.", T0 + 20)
    put(store_path, "deploy-guide", "Deployment guide", "Deploying to production needs an approval.", T0 + 30)
    put(store_path, "cache-notes", "Cache notes", "The checkout cache has a short timeout.", T0 + 40)
    put(store_path, "redis-sentinel", "Redis failover", "Sentinel watches the redis primary; timeout 5 s.", T0 + 50)
    # a later version drops kafka: current and as-of-later see it without, history sees both
    put(store_path, "redis-cache", "Redis cache", "Sessions live in redis with a timeout.", T0 + DAY)


def words_of(hit) -> set[str]:
    text = " ".join([hit["key"], hit["title"], hit["body"], *hit.get("tags", [])]).lower()
    return set(re.findall(r"[^\W_]+", text))


@pytest.fixture(params=[False, True], ids=["lexical", "hybrid"])
def semantic(request, tiny):
    return request.param


@pytest.mark.parametrize("mode", MODES)
def test_minus_excludes_a_word_from_every_hit(store_path, semantic, mode):
    seed(store_path)
    r = search(store_path, "redis -kafka", semantic=semantic, **MODES[mode])
    assert r["hits"], r
    assert all("kafka" not in words_of(h) for h in r["hits"])
    assert r["semantic"] is semantic


@pytest.mark.parametrize("mode", MODES)
def test_upper_case_not_excludes_like_minus(store_path, semantic, mode):
    seed(store_path)
    r = search(store_path, "redis NOT kafka", semantic=semantic, **MODES[mode])
    assert r["hits"] and all("kafka" not in words_of(h) for h in r["hits"])


@pytest.mark.parametrize("mode", MODES)
def test_only_excluded_words_lists_everything_else(store_path, semantic, mode):
    seed(store_path)
    r = search(store_path, "NOT kafka", semantic=semantic, **MODES[mode])
    assert r["hits"] and all("kafka" not in words_of(h) for h in r["hits"])
    assert {"deploy-guide", "cache-notes"} <= {h["key"] for h in r["hits"]}


@pytest.mark.parametrize("mode", MODES)
def test_plus_requires_a_word_in_every_hit(store_path, semantic, mode):
    seed(store_path)
    r = search(store_path, "+redis timeout", semantic=semantic, **MODES[mode])
    assert r["hits"] and all("redis" in words_of(h) for h in r["hits"])


@pytest.mark.parametrize("mode", MODES)
def test_and_requires_both_words(store_path, semantic, mode):
    seed(store_path)
    r = search(store_path, "redis AND kafka", semantic=semantic, **MODES[mode])
    assert r["hits"] and all({"redis", "kafka"} <= words_of(h) for h in r["hits"])
    assert "bridge" in {h["key"] for h in r["hits"]}


@pytest.mark.parametrize("mode", MODES)
def test_quoted_phrase_is_required_in_order(store_path, semantic, mode):
    seed(store_path)
    r = search(store_path, '"kafka topics"', semantic=semantic, **MODES[mode])
    assert [h["key"] for h in r["hits"]] == ["kafka-bus"]
    assert search(store_path, '"topics kafka"', semantic=semantic, **MODES[mode])["count"] == 0


@pytest.mark.parametrize("mode", MODES)
def test_prefix_star_matches_word_starts(store_path, semantic, mode):
    seed(store_path)
    assert search(store_path, "deploy", semantic=False, **MODES[mode])["hits"][0]["key"] == "deploy-guide"
    r = search(store_path, "+deplo*", semantic=semantic, **MODES[mode])
    assert [h["key"] for h in r["hits"]] == ["deploy-guide"]


def test_excluded_word_in_an_old_version_only_keeps_the_key_now(store_path, tiny):
    seed(store_path)
    now = {h["key"] for h in search(store_path, "redis -kafka", semantic=True)["hits"]}
    then = {h["key"] for h in search(store_path, "redis -kafka", semantic=True, **MODES["as_of"])["hits"]}
    assert "redis-cache" in now and "redis-cache" not in then  # at T its text still said kafka


@pytest.mark.parametrize("text", ['"unclosed kafka', "kafka AND", "NOT", "- -", "+", "redis*", '"" kafka'])
def test_bad_syntax_degrades_to_words(store_path, tiny, text):
    seed(store_path)
    for mode in MODES.values():
        r = search(store_path, text, semantic=True, **mode)
        assert isinstance(r["hits"], list)
    assert search(store_path, '"unclosed kafka', semantic=False)["count"] >= 1
