"""The embedding pipeline on a tiny model the tests build: recipe, pooling, locating, cache, fallback."""

from __future__ import annotations

import math
import struct

import pytest

from tests.support.tiny_model import build_tiny_model


def test_passage_text_is_title_then_body_head():
    from kyb_cli.core.embed import passage_text

    body = "Checkout writes go through svc-checkout on node-3, port 9090."
    assert passage_text({"key": "checkout-write-path", "title": "Checkout write path", "body": body}) == (
        "Checkout write path. " + body)


def test_long_body_becomes_overlapping_passages_each_with_the_title():
    from kyb_cli.core.embed.recipe import CHUNK_UNITS, passages

    sentences = [f"Sentence number {i} says where step {i} of the runbook happens." for i in range(120)]
    parts = passages({"key": "runbook", "title": "Long runbook", "body": " ".join(sentences)})
    assert len(parts) > 3 and all(p.startswith("Long runbook. ") for p in parts)
    assert all(len(p) - len("Long runbook. ") <= CHUNK_UNITS * 4 for p in parts)
    assert "step 119 of the runbook" in parts[-1]          # the end of a long body is embedded too
    for a, b in zip(parts, parts[1:]):                      # neighbours overlap by whole sentences
        tail = a.rsplit("Sentence number ", 1)[1]
        assert "Sentence number " + tail in b


def test_cjk_bodies_are_cut_into_fewer_characters_per_passage():
    from kyb_cli.core.embed.recipe import chunks

    assert len(chunks("数据库备份策略。" * 100)) > 1       # 800 characters, ~800 tokens
    assert len(chunks("database backup policy. " * 33)) == 1  # 800 characters, ~200 tokens


def test_incident_passage_text_adds_service_and_hosts():
    from kyb_cli.core.embed import passage_text
    from kyb_cli.core.records.model import Record

    rec = Record(key="inc-2026-05-14-timeouts", title="Timeouts", body="Latency past 5 s.",
                 service="svc-checkout", hosts=["node-3", "node-4"])
    assert passage_text(rec) == "Timeouts. Incident on svc-checkout (node-3, node-4). Latency past 5 s."


def test_prefixes_are_part_of_the_hashed_text():
    from kyb_cli.core.embed import passage_input, query_input, text_hash

    assert query_input("q") == "query: q" and passage_input("p") == "passage: p"
    assert text_hash(query_input("same")) != text_hash(passage_input("same"))


def test_vectors_are_l2_normalised_and_padding_free(tiny):
    from kyb_cli.core.embed.embedder import Embedder

    emb = Embedder(tiny)
    alone = emb.embed(["passage: checkout"])[0]
    batch = emb.embed(["passage: checkout writes go through svc checkout on node 3 port 9090 " * 5,
                       "passage: checkout"])
    assert abs(float((batch ** 2).sum(axis=1)[0]) - 1.0) < 1e-5
    assert abs(float((batch[1] - alone).max())) < 1e-5  # manual padding + mask: no effect on a short text


def test_truncation_at_512_tokens(tiny):
    from kyb_cli.core.embed.embedder import Embedder

    emb = Embedder(tiny)
    assert len(emb.tokenizer.encode("passage: " + "checkout " * 2000).ids) == 512
    assert emb.embed(["passage: " + "checkout " * 2000]).shape == (1, 32)


def test_token_type_ids_only_when_declared(tmp_path):
    from kyb_cli.core.embed.embedder import Embedder

    without = Embedder(build_tiny_model(tmp_path / "no_tt", token_types=False))
    with_tt = Embedder(build_tiny_model(tmp_path / "tt", token_types=True))
    assert (without.wants_token_types, with_tt.wants_token_types) == (False, True)
    assert without.embed(["query: a"]).shape == with_tt.embed(["query: a"]).shape == (1, 32)


def test_locate_model_env_then_config_then_default(tmp_path, monkeypatch, tiny_dir):
    from kyb_cli.core.embed import locate_model
    from kyb_cli.core.embed.files import default_model_dir
    from kyb_cli.core.embed.pull import import_model

    monkeypatch.delenv("KYB_MODEL", raising=False)
    assert "no model" in locate_model()
    import_model(tiny_dir)
    assert locate_model().source == "default" and locate_model().path == default_model_dir()
    config = tmp_path / "config.toml"
    config.write_text(f'model = "{tiny_dir}"\n')
    monkeypatch.setenv("KYB_CONFIG", str(config))
    assert (locate_model().source, locate_model().path) == ("config", tiny_dir)
    monkeypatch.setenv("KYB_MODEL", str(tmp_path))
    assert locate_model() == f"no model.onnx/tokenizer.json in {tmp_path} (from KYB_MODEL)"


def test_no_model_is_a_reason_not_a_traceback(tmp_path, monkeypatch):
    from kyb_cli.core import embed

    monkeypatch.setenv("KYB_MODEL", str(tmp_path / "nothing"))
    vector, reason = embed.query_vector("where does checkout write")
    assert vector is None and "model.onnx" in reason
    assert embed.off_message(reason).startswith("semantic search off: ")
    assert embed.off_message(reason).endswith("— fix: " + embed.MODEL_FIX)
    assert "kyb model import DIR" in embed.MODEL_FIX  # the offline way is named first
    result = embed.passage_vectors(["a", "b"])
    assert (result.vectors, result.pending, result.reason) == ({}, 2, reason)


@pytest.mark.parametrize("helper", ["0", "1"])
def test_broken_model_is_a_reason_not_a_traceback(tmp_path, monkeypatch, helper):
    from kyb_cli.core import embed

    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not an onnx file")
    (broken / "tokenizer.json").write_text("{}")
    monkeypatch.setenv("KYB_MODEL", str(broken))
    monkeypatch.setenv("KYB_EMBED_HELPER", helper)
    vector, reason = embed.query_vector("anything")
    assert vector is None and reason.startswith(f"model at {broken} does not load")


def test_cache_hit_costs_no_model_load(tiny, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.embed import embedder

    first, _ = embed.query_vector("where does checkout write")
    passages = embed.passage_vectors(["Checkout. writes go to node 3", "Binance. rate limits"])
    embed._EMBEDDERS.clear()

    def no_load(*_a, **_k):
        raise AssertionError("model loaded on a cache hit")

    monkeypatch.setattr(embedder.Embedder, "__init__", no_load)
    again, reason = embed.query_vector("where does checkout write")
    cached = embed.passage_vectors(["Checkout. writes go to node 3", "Binance. rate limits"])
    assert again == first and reason is None
    assert cached.vectors == passages.vectors and cached.pending == 0


def test_changed_model_never_serves_an_old_vector(tmp_path, monkeypatch):
    from kyb_cli.core import embed

    model = build_tiny_model(tmp_path / "m", seed=1)
    monkeypatch.setenv("KYB_MODEL", str(model))
    monkeypatch.setenv("KYB_EMBED_HELPER", "0")
    old_fp = embed.current_fingerprint()[0]
    old, _ = embed.query_vector("checkout")
    build_tiny_model(model, seed=2)  # same path, same sizes, new weights
    new_fp = embed.current_fingerprint()[0]
    new, _ = embed.query_vector("checkout")
    assert new_fp != old_fp and new != old
    assert embed.open_cache().fingerprints() == {old_fp: 1, new_fp: 1}


def test_changed_recipe_changes_the_fingerprint(monkeypatch):
    from kyb_cli.core.embed import files, recipe

    digests = {"model.onnx": "a" * 64, "tokenizer.json": "b" * 64}
    before = files.fingerprint_of(digests)
    for name, value in (("version", 99), ("query_prefix", "q: "), ("max_tokens", 256), ("pooling", "cls")):
        monkeypatch.setitem(recipe.RECIPE, name, value)
        assert files.fingerprint_of(digests) != before
        monkeypatch.undo()


def test_semantic_budget_leaves_pending_then_fills(tiny):
    from kyb_cli.core import embed

    texts = [f"Entry {i}. checkout node {i} port 90{i}" for i in range(40)]
    starved = embed.passage_vectors(texts, budget_s=0)
    assert (len(starved.vectors), starved.pending) == (0, 40)
    seen = []
    full = embed.passage_vectors(texts, progress=lambda done, total: seen.append((done, total)))
    assert (len(full.vectors), full.pending) == (40, 0)
    assert seen == [(16, 40), (32, 40), (40, 40)]  # batches of 16
    assert set(full.vectors) == {embed.text_hash(embed.passage_input(t)) for t in texts}
    vec = struct.unpack("<32f", next(iter(full.vectors.values())))
    assert math.isclose(sum(x * x for x in vec), 1.0, rel_tol=1e-5)


def test_runs_cap_texts_and_padded_tokens():
    from kyb_cli.core.embed.embedder import runs

    assert runs([29] * 3) == [[0], [1], [2]]                                  # the recipe: each text alone
    assert runs([29] * 20, batch=16) == [list(range(16)), [16, 17, 18, 19]]  # at most `batch` texts
    assert runs([300, 300, 310], batch=16) == [[0], [1], [2]]                # long ones alone
    assert runs([100, 200, 250, 250], batch=16) == [[0, 1], [2, 3]]          # width x texts <= 512
    assert runs([900]) == [[0]]                                               # never an empty run


def test_run_shape_is_part_of_the_fingerprint():
    from kyb_cli.core.embed.files import fingerprint_of
    from kyb_cli.core.embed import recipe

    digests = {"model.onnx": "a", "tokenizer.json": "b"}
    before = fingerprint_of(digests)
    recipe.RECIPE["runs"] = {**recipe.RECIPE["runs"], "padded_tokens": 1024}
    try:
        assert fingerprint_of(digests) != before
    finally:
        recipe.RECIPE["runs"] = {**recipe.RECIPE["runs"], "padded_tokens": recipe.BATCH_TOKENS}
