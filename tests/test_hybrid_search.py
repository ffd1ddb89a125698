"""Hybrid search on the tiny model: every time mode keeps its slice on the vector side, filters apply to
semantic candidates, pending vectors (filled in the background, never by a query), cache refill,
fingerprints, fallback, `kyb index`, `kyb doctor`."""

from __future__ import annotations

import subprocess
import json

from tests.support.index_helpers import T0, fill_in_background_now, keys, put, remove
from tests.support.tiny_model import build_tiny_model

# Words of the tiny model's vocabulary that no record below contains: only meaning can match them.
NO_SHARED_WORD = "куда пишет оформление заказа"
DAY = 86_400


def search(store_path, text, filled=True, **kw):
    """A query once the background filler has given every version its vector (`filled`)."""
    from kyb_cli.core.search.pipeline import search as run

    if filled:
        fill_in_background_now(store_path)
    kw.setdefault("semantic", True)
    return run(store_path, text, **kw)


def shas(response):
    return {(h["key"], h["sha"]) for h in response["hits"]}


def seed(store_path):
    """Two keys with two versions each, a retracted key and an archived incident."""
    v = {}
    v["a1"] = put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 3", T0)
    v["b1"] = put(store_path, "db-primary", "Database primary", "the primary database host", T0 + 10)
    v["a2"] = put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 4", T0 + DAY)
    v["gone"] = put(store_path, "old-cache", "Cache", "cache worker queue", T0 + DAY + 10)
    remove(store_path, "old-cache", T0 + DAY + 20)
    v["inc"] = put(store_path, "inc-2026-01-02-latency", "Latency", "timeout on the replica", T0 + DAY + 30,
                   service="svc-checkout", hosts=["node-3"], severity="high")
    v["b2"] = put(store_path, "db-primary", "Database primary", "failover to the replica host", T0 + 2 * DAY)
    return v


def test_semantic_only_candidates_enter_current_mode(store_path, tiny):
    v = seed(store_path)
    r = search(store_path, NO_SHARED_WORD, limit=10, explain=True)
    assert r["semantic"] is True and r["pending_vectors"] == 0
    assert search(store_path, NO_SHARED_WORD, semantic=False)["count"] == 0
    # Current slice: heads of live keys and the archived incident; never the retracted key.
    assert shas(r) == {("checkout-path", v["a2"]), ("db-primary", v["b2"]),
                       ("inc-2026-01-02-latency", v["inc"])}
    assert all(h["explain"]["lexical_rank"] is None and h["explain"]["vector_rank"] for h in r["hits"])


def test_as_of_vector_side_sees_only_the_version_at_t(store_path, tiny):
    v = seed(store_path)
    r = search(store_path, NO_SHARED_WORD, mode="as_of", as_of=T0 + 100)
    assert r["semantic"] is True
    assert shas(r) == {("checkout-path", v["a1"]), ("db-primary", v["b1"])}  # no newer meaning
    r = search(store_path, NO_SHARED_WORD, mode="as_of", as_of=T0 + DAY + 25)
    assert ("old-cache", v["gone"]) not in shas(r)  # retracted by then


def test_changed_between_vector_side_stays_in_the_window(store_path, tiny):
    v = seed(store_path)
    r = search(store_path, NO_SHARED_WORD, mode="changed_between", window=(T0 + DAY, T0 + DAY + 40))
    assert r["semantic"] is True
    assert shas(r) == {("checkout-path", v["a2"]), ("old-cache", v["gone"]), ("inc-2026-01-02-latency", v["inc"])}


def test_history_searches_every_version_by_meaning(store_path, tiny):
    v = seed(store_path)
    r = search(store_path, NO_SHARED_WORD, mode="history", limit=20)
    assert r["semantic"] is True and r["pending_vectors"] == 0
    assert shas(r) == {(k, v[n]) for k, n in (("checkout-path", "a1"), ("checkout-path", "a2"),
                                              ("db-primary", "b1"), ("db-primary", "b2"),
                                              ("old-cache", "gone"), ("inc-2026-01-02-latency", "inc"))}


def test_filters_apply_to_semantic_candidates(store_path, tiny):
    from kyb_cli.core.index.slice import Filters

    seed(store_path)
    put(store_path, "tagged", "Tagged", "deploy rollback", T0 + 3 * DAY, tags=["infra"])
    assert keys(search(store_path, NO_SHARED_WORD, filters=Filters(tags=["INFRA"]))) == ["tagged"]
    assert keys(search(store_path, NO_SHARED_WORD, filters=Filters(kind="incident"))) == ["inc-2026-01-02-latency"]
    assert keys(search(store_path, NO_SHARED_WORD, filters=Filters(service="SVC-CHECKOUT"))) == [
        "inc-2026-01-02-latency"]
    assert search(store_path, NO_SHARED_WORD, filters=Filters(status="nope"))["count"] == 0


def test_agreed_hit_first_and_score_is_cosine(store_path, tiny):
    seed(store_path)
    r = search(store_path, "replica failover", explain=True)
    top = r["hits"][0]
    assert top["key"] == "db-primary" and top["explain"]["lexical_rank"] == 1 and top["explain"]["vector_rank"]
    assert top["score"] == top["explain"]["cosine"]


def test_pending_vectors_until_index_embed_fills(store_path, tiny, cli):
    seed(store_path)
    r = search(store_path, NO_SHARED_WORD, mode="history", filled=False)
    assert r["semantic"] is True and r["pending_vectors"] == 6 and r["count"] == 0
    res = cli("index", "--embed")
    assert res.code == 0 and res.json["embedded"] == 6 and res.json["pending_vectors"] == 0
    assert search(store_path, NO_SHARED_WORD, mode="history", filled=False)["pending_vectors"] == 0


def test_a_query_embeds_only_its_own_text_and_ranks_what_is_embedded(store_path, tiny, monkeypatch):
    from kyb_cli.core import embed

    seed(store_path)
    fill_in_background_now(store_path)
    put(store_path, "late-note", "Late", "service worker", T0 + 5 * DAY)  # no vector yet
    real = embed._embed
    asked: list[str] = []

    def only_queries(location, fp, inputs):
        asked.extend(inputs)
        assert not any(i.startswith("passage: ") for i in inputs), "a query embedded a passage"
        return real(location, fp, inputs)

    monkeypatch.setattr(embed, "_embed", only_queries)
    r = search(store_path, NO_SHARED_WORD, filled=False)
    assert r["semantic"] is True and r["pending_vectors"] == 1
    assert "late-note" not in keys(r) and len(keys(r)) == 3  # hybrid over what is embedded
    assert asked and all(i.startswith("query: ") for i in asked)


def test_rebuilt_index_refills_from_cache_without_loading_the_model(store_path, tiny, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.index.fresh import rebuild

    seed(store_path)
    first = search(store_path, NO_SHARED_WORD, mode="history", limit=20)
    rebuild(store_path)
    embed._EMBEDDERS.clear()
    real = embed._embed

    def no_passages(location, fp, inputs):
        assert not any(i.startswith("passage: ") for i in inputs), "the model embedded a passage"
        return real(location, fp, inputs)

    monkeypatch.setattr(embed, "_embed", no_passages)
    again = search(store_path, NO_SHARED_WORD, mode="history", limit=20)  # the filler: cache only
    assert again["semantic"] is True and again["pending_vectors"] == 0
    assert [h["sha"] for h in again["hits"]] == [h["sha"] for h in first["hits"]]


def test_fingerprint_change_never_serves_old_vectors(store_path, tiny, tmp_path, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.index.vectors import counts

    seed(store_path)
    search(store_path, NO_SHARED_WORD, mode="history")
    old_fp = embed.current_fingerprint()[0]
    other = build_tiny_model(tmp_path / "other", seed=11)
    monkeypatch.setenv("KYB_MODEL", str(other))
    embed._EMBEDDERS.clear()
    r = search(store_path, NO_SHARED_WORD, mode="history", filled=False)
    assert r["semantic"] is True and r["count"] == 0 and r["pending_vectors"] == 6  # nothing old served
    r = search(store_path, NO_SHARED_WORD, mode="history")
    assert r["pending_vectors"] == 0 and r["count"] == 6
    f = fresh(store_path)
    assert old_fp not in counts(f.conn)["vectors"]  # the first fill under the new model dropped them
    f.conn.close()


def test_recipe_change_changes_fingerprint_and_index_schema(monkeypatch, tiny):
    from kyb_cli.core.embed import files, recipe
    from kyb_cli.core.index import schema

    digests = {"model.onnx": "a", "tokenizer.json": "b"}
    before = files.fingerprint_of(digests)
    monkeypatch.setitem(recipe.RECIPE, "version", 99)
    assert files.fingerprint_of(digests) != before
    assert schema.SCHEMA_VERSION.endswith(f"r{recipe.RECIPE_VERSION}")


def test_no_model_goes_lexical_with_one_stderr_line(kyb, store_path, tmp_path):
    put(store_path, "svc", "Svc", "port 8080", T0)
    res = kyb("query", "8080", env={"KYB_MODEL": str(tmp_path / "none")})
    assert res.code == 0 and res.json["semantic"] is False and keys(res.json) == ["svc"]
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "semantic search off" in lines[0] and "KYB_MODEL" in lines[0]
    assert "Traceback" not in res.stderr


def test_broken_model_goes_lexical_with_one_stderr_line(kyb, store_path, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not an onnx model")
    (broken / "tokenizer.json").write_text("{}")
    put(store_path, "svc", "Svc", "port 8080", T0)
    res = kyb("query", "8080", env={"KYB_MODEL": str(broken), "KYB_EMBED_HELPER": "0"})
    assert res.code == 0 and res.json["semantic"] is False and keys(res.json) == ["svc"]
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("kyb: semantic search off:"), res.stderr


def test_no_semantic_is_lexical_and_silent(kyb, store_path, tmp_path):
    put(store_path, "svc", "Svc", "port 8080", T0)
    res = kyb("query", "8080", "--no-semantic", env={"KYB_MODEL": str(tmp_path / "none")})
    assert res.code == 0 and res.json["semantic"] is False and res.stderr == ""


def test_query_cli_hybrid_with_explain(cli, store_path, tiny):
    seed(store_path)
    fill_in_background_now(store_path)
    res = cli("query", NO_SHARED_WORD, "--explain")
    assert res.code == 0
    d = res.json
    assert d["semantic"] is True and d["pending_vectors"] == 0 and d["count"] == 3
    assert set(d["hits"][0]["explain"]) == {"lexical_rank", "vector_rank", "cosine", "bm25", "fused", "coverage",
                                            "semantic_score", "semantic_floor", "passage"}


def test_doctor_healthy_then_broken_model_exits_4(cli, store_path, tiny, tmp_path, monkeypatch):
    seed(store_path)
    # seed() commits without a working tree; doctor now checks record files against HEAD
    subprocess.run(["git", "-C", str(store_path), "reset", "-q", "--hard"], check=True)
    res = cli("doctor")
    assert res.code == 0, res.stdout
    d = res.json
    assert d["healthy"] and d["store"]["ok"] and d["git"]["available"] and d["model"]["loads"]
    assert d["index"]["versions"] == 6 and any("kyb index --embed" in w for w in d["warnings"])
    cli("index", "--embed")
    warnings = cli("doctor").json["warnings"]
    # only the optional English model is missing, and doctor says what that costs and how to fix it
    assert len(warnings) == 1 and warnings[0].startswith("model bge-small-en-v1.5: not found")
    assert "kyb model import DIR --name bge-small-en-v1.5" in warnings[0]
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"junk")
    (broken / "tokenizer.json").write_text("{}")
    monkeypatch.setenv("KYB_MODEL", str(broken))
    res = cli("doctor")
    assert res.code == 4 and not res.json["healthy"]
    assert any(p.startswith("model:") for p in res.json["problems"])


def test_doctor_reports_old_fingerprint_vectors_in_index(cli, store_path, tiny, tmp_path, monkeypatch):
    from kyb_cli.core.index.fresh import fresh

    seed(store_path)
    cli("index", "--embed")
    f = fresh(store_path)
    with f.conn:
        f.conn.execute("INSERT INTO vectors VALUES('x', 'stale-fp', zeroblob(128))")
    f.conn.close()
    res = cli("doctor")
    assert res.code == 4 and any("stale-fp" in p for p in res.json["problems"])
    assert json.loads(cli("index").stdout)["vectors"]["stale-fp"] == 1
