"""Issue 41's three failures, in-process through `kyb_cli.api` on the tiny model (hermetic): a fresh
record whose vector is pending keeps its rare word's lead and no hit is strong by a partial vector
side; several phrasings fuse the same in any order; a long body's many passages and words do not
outrank the short record that answers (docs/SEARCH.md "The last points")."""

from __future__ import annotations

from kyb_cli import api
from tests.support.index_helpers import T0, fill_in_background_now, put


def ask(store_path, text, **kw):
    kw.setdefault("semantic", True)
    return api.query(str(store_path), text, explain=True, **kw)[1]


def _every_meaning_strong(monkeypatch):
    """A calibration under which any meaning is strong: what a partial side must not be allowed."""
    from kyb_cli.core.search import relevance

    monkeypatch.setattr(relevance, "calibration", lambda fp: relevance.Calibration(floor=-2.0, floor_other=-2.0))


def test_a_fresh_record_with_a_pending_vector_keeps_its_rare_word_on_top(store_path, tiny, monkeypatch):
    """Issue 41: `add` "The sprocketR job runs nightly at 02:00." then at once "when does the
    sprocketR job run": the only record holding `sprocketR` comes first although the filler has not
    embedded it, and no hit is strong by its meaning while the vector side is partial."""
    _every_meaning_strong(monkeypatch)
    for n, (what, when) in enumerate((("build", "hourly"), ("deploy", "on merge"), ("backup", "weekly"),
                                      ("cleanup", "monthly"))):
        put(store_path, f"sprocket-{what}", f"Sprocket {what} job", f"The sprocket {what} job runs {when}.", T0 + n)
    fill_in_background_now(store_path)
    put(store_path, "sprocketr-schedule", "Nightly job", "The sprocketR job runs nightly at 02:00.", T0 + 10)
    r = ask(store_path, "when does the sprocketR job run")
    assert r["pending_vectors"] >= 1 and r["semantic"] is True
    assert r["hits"][0]["key"] == "sprocketr-schedule", [h["key"] for h in r["hits"]]
    assert not any(h["strength"] == "strong" and h["found_by"] != "lexical" for h in r["hits"]), r["hits"]
    fill_in_background_now(store_path)  # once embedded, the meaning side counts again
    after = ask(store_path, "when does the sprocketR job run")
    assert after["pending_vectors"] == 0 and after["hits"][0]["key"] == "sprocketr-schedule"
    assert any(h["found_by"] == "both" and h["strength"] == "strong" for h in after["hits"])


def _seed_phrasings(store_path):
    put(store_path, "checkout-path", "Checkout write path", "Checkout writes go through svc-checkout on node-3, port 9090.", T0)
    put(store_path, "db-primary", "Database primary", "The primary database host is db-1; failover to the replica.", T0 + 1)
    put(store_path, "cache-worker", "Cache worker", "The cache worker drains the queue every minute.", T0 + 2)
    put(store_path, "team-lunch", "Team lunch", "The weekly team lunch is on Friday at the Italian place.", T0 + 3)
    fill_in_background_now(store_path)


def _answer(r):
    return [(h["key"], h["strength"], h["found_by"]) for h in r["hits"]], r["confident"]


def test_phrasings_fuse_the_same_in_any_order(store_path, tiny):
    """Q --also R == R --also Q: the same hits, strengths and `confident` (issue 41: one order gave
    `weak` and not confident, the other `strong` and confident, for the same record)."""
    _seed_phrasings(store_path)
    pairs = [("weekly plans", "cache worker drains the queue"), ("primary database host", "team lunch friday"),
             ("where do checkout writes go", "svc-checkout port")]
    for q, other in pairs:
        one, two = ask(store_path, q, also=[other]), ask(store_path, other, also=[q])
        assert _answer(one) == _answer(two), (q, other)
        assert one["phrasings"] == two["phrasings"] == 2
    three = [ask(store_path, a, also=[b, c]) for a, b, c in (("weekly plans", "cache worker", "queue drains"),
                                                          ("queue drains", "weekly plans", "cache worker"))]
    assert _answer(three[0]) == _answer(three[1])


def _essay(words: list[str], paragraphs: int = 40) -> str:
    """A long body (many passages) holding each of `words` once, far from the others."""
    filler = ("The team wrote about agents, memory, versions and the shape of a store in plain prose "
              "that goes on for a while without saying anything a search would want. ")
    out = []
    at = {round(i * (paragraphs - 1) / max(len(words) - 1, 1)): w for i, w in enumerate(words)}
    for p in range(paragraphs):
        out.append(filler * 2 + (f"Once it mentioned {at[p]} in passing. " if p in at else ""))
    return "\n\n".join(out)


def test_a_long_body_is_judged_by_its_best_passage(store_path, tiny, monkeypatch):
    """Issue 41 "length wins": a 27 kB essay held a few of any question's words somewhere in its 24
    passages and came first, `strong`. Its words now count where they meet, in one passage: the
    essay is weak and does not lead; the short note holding them together is strong and first."""
    words = ["webhooks", "retries", "backoff", "hours"]
    put(store_path, "essay", "Notes on agent memory", _essay(words), T0)
    put(store_path, "payments-retry", "Payment webhook retries",
        "Stripe retries webhooks with exponential backoff for up to 72 hours.", T0 + 1)
    put(store_path, "deploy-freeze", "Deploy freeze", "No production deploys on Fridays after 15:00 UTC.", T0 + 2)
    fill_in_background_now(store_path)
    for semantic in (False, True):
        r = ask(store_path, "webhooks retries backoff hours", semantic=semantic)
        by = {h["key"]: h for h in r["hits"]}
        assert r["hits"][0]["key"] == "payments-retry" and by["payments-retry"]["strength"] == "strong"
        assert by["essay"]["strength"] == "weak", by["essay"]
        assert by["payments-retry"]["explain"]["coverage"] == 1.0 and by["essay"]["explain"]["coverage"] < 0.5
