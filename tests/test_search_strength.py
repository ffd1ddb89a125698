"""How sure an answer is (docs/SEARCH.md "How sure is an answer"): per hit `strength` and `found_by`,
per answer `confident`, `--min-strength strong`, identifiers that stay exact in hybrid mode, and
snippets. Tiny model or none; the calibrated floor of the real model is in test_search_real_model.py."""

from __future__ import annotations

import pytest

from kyb_cli.core.search.snippet import LIMIT
from tests.support.index_helpers import T0, fill_in_background_now, put, remove


def search(store_path, text, **kw):
    from kyb_cli.core.search.pipeline import search as run

    if kw.get("semantic"):
        fill_in_background_now(store_path)  # queries never embed passages: the filler does
    return run(store_path, text, **kw)


def seed(store_path):
    put(store_path, "checkout-path", "Checkout write path", "Checkout writes go through svc-checkout on node-3, port 9090.", T0)
    put(store_path, "db-primary", "Database primary", "The primary database host is db-1; failover to the replica.", T0 + 1)
    put(store_path, "cache-worker", "Cache worker", "The cache worker drains the queue every minute.", T0 + 2)
    put(store_path, "team-lunch", "Team lunch", "The weekly team lunch is on Friday at the Italian place.", T0 + 3)


def test_hit_holding_every_question_word_is_strong_and_lexical(store_path):
    seed(store_path)
    r = search(store_path, "primary database host")
    top = r["hits"][0]
    assert top["key"] == "db-primary" and top["strength"] == "strong" and top["found_by"] == "lexical"
    assert r["confident"] is True


def test_hit_holding_only_a_minor_share_of_the_question_is_weak(store_path):
    seed(store_path)
    r = search(store_path, "kubernetes ingress controller replica certificates rotation")
    assert r["count"] >= 1 and {h["key"] for h in r["hits"]} == {"db-primary"}
    assert r["hits"][0]["strength"] == "weak" and r["confident"] is False


def test_question_about_nothing_stored_is_not_confident_in_any_language(store_path, tiny):
    seed(store_path)
    for text in ("kubernetes ingress controller", "рецепт борща", "Wie konfiguriere ich Jenkins?", "如何学习吉他"):
        r = search(store_path, text, semantic=True)
        assert r["semantic"] is True and r["count"] >= 1, text  # vectors always rank something
        assert r["confident"] is False and {h["strength"] for h in r["hits"]} == {"weak"}, text
        assert {h["found_by"] for h in r["hits"]} == {"semantic"}, text


def test_question_whose_only_answer_was_retracted_gets_no_strong_hit(store_path, tiny):
    seed(store_path)
    put(store_path, "vault-path", "Vault secrets path", "Credentials live in Vault under kv/prod.", T0 + 10)
    remove(store_path, "vault-path", T0 + 20)
    for semantic in (False, True):
        r = search(store_path, "vault credentials kv/prod", semantic=semantic)
        assert "vault-path" not in {h["key"] for h in r["hits"]}
        assert r["confident"] is False and all(h["strength"] == "weak" for h in r["hits"])
    assert search(store_path, "vault credentials kv/prod", mode="history")["confident"] is True


def test_min_strength_strong_keeps_only_strong_hits(store_path, tiny, cli):
    seed(store_path)
    everything = search(store_path, "cache queue lunch", semantic=True)
    strong = search(store_path, "cache queue lunch", semantic=True, min_strength="strong")
    assert everything["count"] > strong["count"] >= 1
    assert [h["key"] for h in strong["hits"]] == ["cache-worker"]
    res = cli("query", "cache queue lunch", "--min-strength", "strong")
    assert res.code == 0 and [h["key"] for h in res.json["hits"]] == ["cache-worker"]
    assert cli("query", "x", "--min-strength", "maybe").code == 2


def test_found_by_both_when_words_and_calibrated_meaning_agree(store_path, tiny, monkeypatch):
    from kyb_cli.core.search import relevance

    seed(store_path)
    monkeypatch.setattr(relevance, "calibration", lambda fp: relevance.Calibration(floor=-2.0))
    r = search(store_path, "cache worker", semantic=True)
    by_key = {h["key"]: h for h in r["hits"]}
    assert by_key["cache-worker"]["found_by"] == "both"
    assert by_key["team-lunch"]["found_by"] == "semantic" and by_key["team-lunch"]["strength"] == "strong"


def test_uncalibrated_model_never_makes_a_meaning_only_hit_strong():
    from kyb_cli.core.search import relevance

    assert relevance.calibration("no-such-fingerprint") is relevance.NONE
    hit: dict = {}
    relevance.grade(hit, lexical=False, cover=0.0, whole=False, sem_score=0.99, cal=relevance.NONE)
    assert hit == {"strength": "weak", "found_by": "semantic"}


def test_words_and_meaning_agreeing_in_part_make_a_hit_strong():
    """Rule "relevance signal", agreement: a fifth of the question's weight AND a meaning score near
    the floor is strong; either alone is weak; without a calibration there is no agreement."""
    from kyb_cli.core.search import relevance

    cal = relevance.Calibration(floor=0.226, agree_cover=0.2, agree_floor=0.18)

    def graded(**kw):
        hit: dict = {}
        relevance.grade(hit, whole=False, cal=cal, **kw)
        return hit

    assert graded(lexical=True, cover=0.25, sem_score=0.19) == {"strength": "strong", "found_by": "both"}
    assert graded(lexical=True, cover=0.15, sem_score=0.19)["strength"] == "weak"   # too few words
    assert graded(lexical=True, cover=0.45, sem_score=0.17) == {"strength": "weak", "found_by": "lexical"}
    assert graded(lexical=False, cover=0.0, sem_score=0.21)["strength"] == "weak"   # meaning alone
    assert graded(lexical=True, cover=0.5, sem_score=None) == {"strength": "strong", "found_by": "lexical"}
    hit: dict = {}
    relevance.grade(hit, lexical=True, cover=0.25, whole=False, sem_score=0.19,
                    cal=relevance.Calibration(floor=0.226))  # no agreement thresholds
    assert hit["strength"] == "weak"


def test_words_and_meaning_agree_only_on_a_subject_the_store_talks_about():
    """Issue 41: agreement also asks a quarter of the answer's candidates to hold `agree_typical` of
    the question (`usual`): an off-topic question's few words meeting in one record do not agree."""
    from kyb_cli.core.search import relevance

    cal = relevance.Calibration(floor=0.226, agree_cover=0.2, agree_floor=0.18, agree_typical=0.14)

    def strength(usual):
        hit: dict = {}
        relevance.grade(hit, lexical=True, cover=0.3, whole=False, sem_score=0.19, cal=cal, usual=usual)
        return hit["strength"]

    assert strength(0.2) == "strong"
    assert strength(0.1) == "weak"
    assert strength(None) == "weak"
    assert relevance.words_only(cal).agree_typical is None
    hit: dict = {}  # words alone or meaning alone do not ask it
    relevance.grade(hit, lexical=True, cover=0.6, whole=False, sem_score=0.1, cal=cal, usual=0.0)
    assert hit["strength"] == "strong"


def test_shipped_calibration_carries_the_agreement_thresholds():
    import json

    from kyb_cli.core.search import relevance

    for fp, entry in json.loads(open(relevance.CALIBRATION_FILE, encoding="utf-8").read()).items():
        cal = relevance.calibration(fp)
        assert cal.agree_cover == entry["agree_cover"] and 0 < cal.agree_cover < cal.lexical_cover
        assert cal.agree_floor == entry["agree_floor"] and 0 < cal.agree_floor < cal.floor
        assert cal.agree_typical == entry.get("agree_typical")


@pytest.mark.parametrize("text", ["svc-checkout", "9090", "node-3", "db-1"])
def test_identifier_question_ranks_its_exact_hit_first_in_hybrid(store_path, tiny, text):
    seed(store_path)
    lexical = search(store_path, text)["hits"][0]["key"]
    hybrid = search(store_path, text, semantic=True)
    assert hybrid["semantic"] is True and hybrid["hits"][0]["key"] == lexical
    assert hybrid["hits"][0]["strength"] == "strong"


def test_identifier_lookalikes():
    from kyb_cli.core.search.relevance import looks_like_identifier as ident

    for text in ("fs.file-nr", "system-cluster-critical", "etcdserver: no leader", "OOMKilled", "9090",
                 "--web.enable-admin-api", "kv/prod", "3f9c2a1b7d"):
        assert ident(text.split()), text
    for text in ("how do we rotate certificates", "Kubernetes", "deploy freeze"):
        assert not ident(text.split()), text


def test_listing_hits_satisfy_what_was_asked(store_path):
    seed(store_path)
    r = search(store_path, "")
    assert r["count"] == 4 and r["confident"] is True and {h["strength"] for h in r["hits"]} == {"strong"}


def test_each_hit_has_a_snippet_from_the_part_that_matched(store_path):
    tail = "To rotate the journal run journalctl --vacuum-size=500M on the node."
    body = "## Meaning\n\n" + "This alert is about disks filling up on a node. " * 40 + "\n\n## Mitigation\n\n" + tail
    put(store_path, "disk-full", "Disk almost full", body, T0)
    hit = search(store_path, "vacuum journal")["hits"][0]
    assert hit["key"] == "disk-full" and "journalctl --vacuum-size=500M" in hit["snippet"]
    assert len(hit["snippet"]) <= LIMIT


def test_terminal_table_shows_the_snippet_dims_weak_hits_and_says_when_nothing_is_strong(store_path):
    from rich.console import Console

    from kyb_cli.cli.commands.query import query_view

    seed(store_path)

    def render(response):
        c = Console(record=True, width=140, force_terminal=True, color_system="standard")
        query_view(c, response)
        return c.export_text(clear=False), c.export_text(styles=True)

    text, _styled = render(search(store_path, "team lunch"))
    assert "weekly team lunch is on Friday" in text and "no strong hit" not in text
    text, styled = render(search(store_path, "kubernetes ingress controller replica certificates rotation"))
    assert "no strong hit" in text
    assert "\x1b[1;2mdb-primary" in styled  # the weak row is dim


@pytest.mark.parametrize("also", [(), ("database failover replica",)])
def test_only_the_hits_returned_are_snipped(store_path, tiny, monkeypatch, also):
    """A hybrid answer grades every candidate of both sides; the snippet (the costly part on long
    bodies) is cut for the hits it returns only, once each, and nothing private is left on a hit."""
    from kyb_cli.core.search import answer_parts

    seed(store_path)
    calls = []
    real = answer_parts.cut
    monkeypatch.setattr(answer_parts, "cut", lambda *a: calls.append(a) or real(*a))
    r = search(store_path, "checkout writes node", semantic=True, limit=2, also=also)
    assert r["count"] == 2 and len(calls) == 2
    assert all(h["snippet"] and set(h) == set(r["hits"][0]) for h in r["hits"])
    assert not any(k.startswith("_") for h in r["hits"] for k in h)


def test_other_phrasings_vouch_together(store_path, tiny, monkeypatch):
    """Rule "several phrasings": a fused hit is strong when every phrasing grades it strong, or one
    does and every phrasing ranks it in its first AGREE_RANK; a hit one phrasing never found is weak."""
    from kyb_cli.core.search import phrasings

    def answer(*graded):  # each phrasing: [(key, strength)] best first
        return [([{"key": k, "strength": s} for k, s in hits], {"semantic": True}) for hits in graded]

    q = [("a", "weak"), ("b", "strong"), ("c", "weak")]  # b: only q found it; c: q ranks it 3rd
    r = [("c", "strong"), ("a", "weak")]
    hits, out = phrasings.fuse_answers(answer(q, r), "current", ["q", "r"])
    assert [(h["key"], h["strength"]) for h in hits] == [("a", "weak"), ("c", "weak"), ("b", "weak")]
    assert out["phrasings"] == 2
    near = [("c", "weak"), ("a", "weak")]
    hits, _ = phrasings.fuse_answers(answer(near, r), "current", ["q", "r"])
    assert hits[0]["key"] == "c" and hits[0]["strength"] == "strong"  # both rank it first, one vouches
    both = [("a", "strong"), ("b", "weak"), ("x", "weak"), ("c", "strong")]
    hits, _ = phrasings.fuse_answers(answer(both, r), "current", ["q", "r"])
    assert {h["key"]: h["strength"] for h in hits}["c"] == "strong"  # every phrasing vouches
    seed(store_path)
    asked = search(store_path, "cache worker drains the queue", semantic=True, also=("weekly plans",))
    assert asked["hits"][0]["key"] == "cache-worker" and asked["phrasings"] == 2


def test_a_phrasing_not_in_english_vouches_only_for_the_multilingual_votes_first():
    """Issue 41: when a phrasing is not in English, a fused hit is strong only when the multilingual
    vote (USE) ranks it first for that phrasing: an English rephrasing's strong hit for a record USE
    does not put first for the question as asked is weak, in either order of the phrasings."""
    from kyb_cli.core.search import phrasings

    def answer(*graded):
        return [([{"key": k, "strength": s} for k, s in hits], {"semantic": True}) for hits in graded]

    q = [("a", "weak"), ("b", "weak")]  # the question as asked (not English): USE ranks b first
    r = [("a", "strong"), ("b", "weak")]  # its English rephrasing: a strong
    hits, _ = phrasings.fuse_answers(answer(q, r), "current", ["q", "r"])
    assert hits[0]["key"] == "a" and hits[0]["strength"] == "strong"  # no vote: the phrasings agree
    for order, texts, firsts in (((q, r), ["q", "r"], ["b", None]), ((r, q), ["r", "q"], [None, "b"])):
        hits, _ = phrasings.fuse_answers(answer(*order), "current", texts, firsts)
        assert {h["key"]: h["strength"] for h in hits} == {"a": "weak", "b": "weak"}
    hits, _ = phrasings.fuse_answers(answer(q, r), "current", ["q", "r"], ["a", None])
    assert hits[0]["key"] == "a" and hits[0]["strength"] == "strong"  # USE's first: the models agree


def test_each_phrasings_first_hit_stays_near_the_top_of_the_fused_order():
    """RRF_K = 1 (issue 41): a record one phrasing ranks first and the other misses is not pushed
    under records both rank middling. With k = 60 the order was m, n, x, y: the better phrasing's
    answer fell to third, the other's to fourth (dev set `--also` paraphrase top-3 0.85 -> 0.97)."""
    from kyb_cli.core.search import phrasings

    def answer(*ranked):
        return [([{"key": k, "strength": "weak"} for k in keys], {"semantic": True}) for keys in ranked]

    q, r = ["x", "m", "n"], ["y", "m", "n"]
    for order in ((q, r), (r, q)):
        hits, _ = phrasings.fuse_answers(answer(*order), "current", ["q", "r"] if order[0] is q else ["r", "q"])
        assert [h["key"] for h in hits] == ["m", "x", "y", "n"]  # agreement first, then each one's first


def test_a_question_the_router_does_not_call_english_is_held_to_its_own_floor(store_path, tiny, monkeypatch):
    """e5 scores across languages lower: a non-English question's meaning-only hits are judged by
    `floor_other` (bench/calibrate_routes.py), an English question's by `floor`."""
    from kyb_cli.core.search import relevance

    seed(store_path)
    monkeypatch.setattr(relevance, "calibration", lambda fp: relevance.Calibration(floor=9.0, floor_other=-2.0))
    other = search(store_path, "где обедает команда", semantic=True, explain=True)
    english = search(store_path, "where does the team eat", semantic=True, explain=True)
    meaning_only = [h for h in other["hits"] if h["found_by"] == "semantic"]
    assert meaning_only and all(h["strength"] == "strong" for h in meaning_only)
    assert {h["explain"]["semantic_floor"] for h in other["hits"]} == {-2.0}
    assert not any(h["strength"] == "strong" and h["found_by"] == "semantic" for h in english["hits"])
    assert {h["explain"]["semantic_floor"] for h in english["hits"]} == {9.0}
    assert relevance.for_question(relevance.Calibration(floor=0.25), english=False).floor == 0.25  # none kept
