"""Two vector sides (issue 26) on the tiny model: the registry, the router, the fused meaning, each
model embedded, keyed and reported on its own, a store with e5 alone saying what it lacks, and
several phrasings fused into one answer."""

from __future__ import annotations

import subprocess
import pytest

from tests.support.index_helpers import T0, fill_in_background_now, put


@pytest.fixture
def both(tiny, monkeypatch):
    """The tiny model as e5 and as the English side (CLS pooling: another fingerprint, other vectors)."""
    monkeypatch.setenv("KYB_MODEL_EN", str(tiny))
    return tiny


def seed(store_path):
    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 3", T0)
    put(store_path, "db-primary", "Database primary", "the primary database host", T0 + 10)


def test_registry_declares_each_model_once_e5_first_and_e5_fingerprint_unchanged():
    from kyb_cli.core.embed import recipe
    from kyb_cli.core.embed.models import BGE, E5, MODELS, by_name

    assert MODELS[0] is E5 and len({m.name for m in MODELS}) == len(MODELS) == len({m.env for m in MODELS})
    assert E5.recipe() == recipe.RECIPE  # vectors and calibration of before stay valid
    assert BGE.recipe()["pooling"] == "cls" and BGE.recipe()["passage_prefix"] == ""
    assert BGE.query_input("x").startswith("Represent this sentence") and by_name("nope") is None


@pytest.mark.parametrize("text, english", [
    ("how do I restart the checkout service", True),
    ("my cron task finishes in seconds, how do its numbers get collected", True),
    ("Wie starte ich einen Lasttest mit vielen virtuellen Nutzern?", False),
    ("comment purger une page du cache Fastly", False),
    ("receta de paella valenciana tradicional", False),
    ("куда пишет оформление заказа", False),
    ("如何从快照恢复 etcd 集群", False),
])
def test_router_sends_english_questions_only_to_the_english_side(text, english):
    from kyb_cli.core.search.route import is_english

    assert is_english(text) is english


def test_fused_meaning_is_on_e5_scale_and_a_missing_side_counts_as_its_weakest():
    from kyb_cli.core.search.route import fused_meaning

    base = {"a": 0.80, "b": 0.82, "c": 0.84}
    english = {"a": 0.70, "b": 0.50}  # c has no English vector yet
    fused = fused_meaning(base, english, ["a", "b", "c"])
    assert min(fused.values()) >= 0.7 and max(fused.values()) <= 0.9  # e5's scale, not z units
    assert fused["a"] > fused["b"]  # the English side outweighs e5's small lead of b
    assert fused_meaning(base, {}, ["a", "b", "c"]) == base
    # one side with no vector at all yet: the other stands alone, for the idents it has
    assert fused_meaning(base, {}, ["a", "new"]) == {"a": 0.80}
    assert fused_meaning({}, english, ["a", "c"]) == {"a": 0.70}


def test_a_write_then_a_query_at_once_with_both_models_answers_while_the_english_side_is_pending(
        store_path, both, cli, monkeypatch):
    """Issue 37.1: with e5's vectors complete and the English model's all pending (a fresh store right
    after a write), a lexical hit with no vector on either side crashed `combine` (KeyError)."""
    from kyb_cli.core import embed
    from kyb_cli.core.canon import headfile
    from kyb_cli.core.embed.models import BGE, E5
    from kyb_cli.core.index import vectors
    from kyb_cli.core.index.fresh import fresh

    seed(store_path)
    monkeypatch.setattr(vectors, "BACKGROUND_BATCH", 1)
    fp_e5 = embed.current_fingerprint(E5)[0]
    fp_en = embed.current_fingerprint(BGE)[0]
    f = fresh(store_path)
    try:  # the filler embeds e5 first: stop once e5 is complete, before any English vector
        count = lambda fp: f.conn.execute("SELECT count(*) FROM vectors WHERE fingerprint = ?", (fp,)).fetchone()[0]
        while count(fp_e5) < 2 and vectors.fill_background(f.conn, headfile.git_dir(store_path)):
            pass
        assert count(fp_e5) == 2 and count(fp_en) == 0
    finally:
        f.conn.close()
    added = cli("add", "--key", "sprocket-job", "--title", "Sprocket job", "--body", "the sprocketR job runs nightly")
    assert added.code == 0, added.stderr
    res = cli("query", "when does the sprocketR job run")
    assert res.code == 0, res.stderr
    r = res.json
    assert r["semantic"] is True and "sprocket-job" in [h["key"] for h in r["hits"]], r["hits"]
    assert r["pending_vectors"] >= 3  # the new version on both sides, the two old ones on the English side


def test_store_with_e5_alone_answers_and_says_what_it_lacks(store_path, tiny, cli):
    seed(store_path)
    fill_in_background_now(store_path)
    res = cli("query", "checkout node")
    assert res.code == 0 and res.json["semantic"] is True and res.json["count"] >= 1
    assert "bge-small-en-v1.5" in res.json["semantic_missing"]
    assert "multilingual-e5-small alone" in res.stderr and "KYB_MODEL_EN" in res.stderr
    other = cli("query", "куда пишет оформление заказа")  # not English: e5 is all it needs
    assert "semantic_missing" not in other.json and "bge" not in other.stderr


def test_each_model_is_embedded_keyed_and_reported_on_its_own(store_path, both, cli):
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import BGE, E5

    seed(store_path)
    # seed() commits without a working tree; doctor checks record files against HEAD
    subprocess.run(["git", "-C", str(store_path), "reset", "-q", "--hard"], check=True)
    fp_e5, fp_en = embed.current_fingerprint(E5)[0], embed.current_fingerprint(BGE)[0]
    assert fp_e5 != fp_en  # same files, other pooling and prefixes: never each other's vectors
    done = cli("index", "--embed").json
    assert done["models"][E5.name]["pending_vectors"] == 0 and done["models"][BGE.name]["pending_vectors"] == 0
    status = cli("index").json
    assert set(status["vectors"]) == {fp_e5, fp_en} and status["models"][BGE.name]["fingerprint"] == fp_en
    assert set(embed.open_cache().fingerprints()) >= {fp_e5, fp_en}  # the user cache keys each model
    doctor = cli("doctor").json
    assert doctor["healthy"] and not any("another model" in p for p in doctor["problems"])
    assert doctor["model"]["models"][BGE.name]["loads"] and doctor["warnings"] == []
    res = cli("query", "checkout node", "--explain")
    assert res.code == 0, res.stderr
    r = res.json
    assert "semantic_missing" not in r and r["hits"][0]["key"] == "checkout-path"


def test_filler_embeds_current_versions_under_e5_before_the_english_side(store_path, both, monkeypatch):
    from kyb_cli.core import embed
    from kyb_cli.core.canon import headfile
    from kyb_cli.core.embed.models import BGE, E5
    from kyb_cli.core.index.fresh import fresh
    from kyb_cli.core.index import vectors

    seed(store_path)
    monkeypatch.setattr(vectors, "BACKGROUND_BATCH", 1)
    f = fresh(store_path)
    try:
        fps = [embed.current_fingerprint(E5)[0], embed.current_fingerprint(BGE)[0]]
        order = []
        while vectors.fill_background(f.conn, headfile.git_dir(store_path)):
            order.append(tuple(f.conn.execute("SELECT count(*) FROM vectors WHERE fingerprint = ?", (fp,))
                               .fetchone()[0] for fp in fps))
    finally:
        f.conn.close()
    assert order[0] == (1, 0) and order[1] == (2, 0) and order[-1] == (2, 2)


def test_several_phrasings_are_fused_into_one_answer(store_path, both, cli):
    seed(store_path)
    fill_in_background_now(store_path)
    alone = cli("query", "zzz unknown words").json
    fused = cli("query", "zzz unknown words", "--also", "checkout node", "--also", "primary database").json
    assert "phrasings" not in alone and fused["phrasings"] == 3
    keys = [h["key"] for h in fused["hits"]]
    assert {"checkout-path", "db-primary"} <= set(keys) and isinstance(fused["confident"], bool)
    assert alone["confident"] is False
    # the phrasings vouch together: the same answer in any order (search/phrasings.py)
    turned = cli("query", "primary database", "--also", "zzz unknown words", "--also", "checkout node").json
    assert [(h["key"], h["strength"]) for h in turned["hits"]] == [(h["key"], h["strength"]) for h in fused["hits"]]
    assert turned["confident"] == fused["confident"]


def test_too_many_phrasings_is_a_usage_error(store_path, tiny, cli):
    args = ["query", "checkout"] + [x for i in range(8) for x in ("--also", f"phrasing {i}")]
    res = cli(*args)
    assert res.code == 2 and "at most 7" in res.stderr and res.stdout == ""


def test_http_also_is_repeated_and_keeps_commas():
    from kyb_cli.api.operations import OPERATIONS
    from kyb_cli.serve.params import from_json, parse_query

    specs = OPERATIONS["query"].http_fields()
    args = parse_query(specs, [("q", "checkout"), ("also", "where, exactly, do writes go"), ("also", "node 3")])
    assert args["also"] == ["where, exactly, do writes go", "node 3"]
    assert parse_query(specs, [("q", "x")])["also"] == []
    also = next(s for s in specs if s.name == "also")
    assert from_json(also, ["a, b"]) == ["a, b"] and also.schema()["type"] == "array"


def test_model_import_names_or_detects_the_model(tiny, cli, tmp_path):
    from kyb_cli.core.config.dirs import data_dir

    res = cli("model", "import", str(tiny), "--name", "bge-small-en-v1.5")
    assert res.code == 0, res.stderr
    assert res.json["name"] == "bge-small-en-v1.5"
    assert res.json["path"] == str(data_dir() / "models" / "bge-small-en-v1.5")
    assert cli("model", "import", str(tiny), "--name", "nope").code == 2
    detected = cli("model", "import", str(tiny), "--dir", str(tmp_path / "m")).json
    assert detected["name"] == "multilingual-e5-small"  # not a WordPiece vocabulary: the base model
