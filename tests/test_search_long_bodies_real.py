"""Issue 41 "length wins" with both real models: the two seed essays (27 kB and 7 kB, outside the
repository: ../shared/seeds/) beside ten short notes, ten English questions each answered by one
note. Measured before issue 41's changes: the right note first for 6 of 10, `payments-retry` third
behind both essays; now 8 of 10 and second, the essay above it `weak` (docs/SEARCH.md "The last
points", "Off-topic answers")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import ROOT, SHARED_MODEL
from tests.support.index_helpers import T0, fill_in_background_now, put

MODEL = Path(os.environ.get("KYB_MODEL") or SHARED_MODEL)
MODEL_EN = Path(os.environ.get("KYB_MODEL_EN") or ROOT.parent / "shared" / "models" / "bge-small-en-v1.5")
SEEDS = ROOT.parent / "shared" / "seeds"
pytestmark = [pytest.mark.slow,  # real models: the slow lane
              pytest.mark.skipif(not (MODEL / "model.onnx").is_file() or not (MODEL_EN / "model.onnx").is_file(),
                                 reason="both real models are needed"),
              pytest.mark.skipif(len(list(SEEDS.glob("0*.txt"))) < 2, reason="the seed essays are not here")]

NOTES = [
    ("payments-retry", "Payment webhook retries", "Stripe retries webhooks with exponential backoff for up to 72 hours. "
     "Our handler must be idempotent: dedupe on the event id before touching the ledger."),
    ("checkout-db", "Checkout database", "Checkout writes go to the orders_api Postgres primary on db-1; reads may use the replica db-2."),
    ("deploy-freeze", "Deploy freeze", "No production deploys on Fridays after 15:00 UTC; hotfixes need an approval from the on-call lead."),
    ("cache-ttl", "Session cache TTL", "Session tokens live in Redis with a TTL of 30 minutes, refreshed on every request."),
    ("oncall-rota", "On-call rotation", "The on-call rotation changes every Monday at 09:00; the schedule lives in PagerDuty."),
    ("log-retention", "Log retention", "Application logs are kept for 14 days in Loki, audit logs for one year in S3 Glacier."),
    ("backup-restore", "Database backups", "Nightly pg_dump backups at 02:00 UTC; a restore drill runs every quarter."),
    ("rate-limit", "Public API rate limit", "The public API allows 100 requests per minute per token; bursts get HTTP 429."),
    ("feature-flags", "Feature flags", "Feature flags live in LaunchDarkly; remove a flag within two sprints of full rollout."),
    ("tls-certs", "TLS certificates", "Certificates are issued by Let's Encrypt via cert-manager and renew 30 days before expiry."),
]
QUESTIONS = [
    ("how long does the card processor keep resending failed notifications", "payments-retry"),
    ("where do order writes end up", "checkout-db"),
    ("can I ship code to production late on a friday", "deploy-freeze"),
    ("how long before a logged in user session expires", "cache-ttl"),
    ("when does the pager duty handover happen", "oncall-rota"),
    ("how many days do we keep application logs", "log-retention"),
    ("when are database dumps taken", "backup-restore"),
    ("what happens if a client sends too many requests", "rate-limit"),
    ("how do we toggle features for a partial rollout", "feature-flags"),
    ("who renews our https certificates", "tls-certs"),
]


def test_long_essays_do_not_outrank_the_short_notes_that_answer(store_path, monkeypatch):
    from kyb_cli import api

    monkeypatch.setenv("KYB_MODEL", str(MODEL))
    monkeypatch.setenv("KYB_MODEL_EN", str(MODEL_EN))
    monkeypatch.setenv("KYB_EMBED_HELPER", "0")
    for i, f in enumerate(sorted(SEEDS.glob("0*.txt"))):
        text = f.read_text(encoding="utf-8")
        put(store_path, f"essay-{i}", text.splitlines()[0].strip(), text, T0 + i)
    for i, (key, title, body) in enumerate(NOTES):
        put(store_path, key, title, body, T0 + 10 + i)
    fill_in_background_now(store_path)
    first = 0
    for question, want in QUESTIONS:
        r = api.query(str(store_path), question, explain=True)[1]
        keys = [h["key"] for h in r["hits"]]
        assert r["pending_vectors"] == 0 and want in keys[:3], (question, keys[:4])
        first += keys[0] == want
        if keys[0].startswith("essay"):  # an essay may still be first by meaning, never by a word lead
            assert r["hits"][0]["explain"]["coverage"] < 0.67, (question, r["hits"][0]["explain"])
    payments = api.query(str(store_path), QUESTIONS[0][0])[1]["hits"]
    keys = [h["key"] for h in payments]
    above = keys[:keys.index("payments-retry")]
    # before issue 41 both essays ranked above the note by their length; now at most one, by meaning.
    # Not "second": on a machine whose CPU lacks AVX-512/VNNI the int8 models' vectors differ in
    # their last bits and `log-retention`, a short note close by meaning, may come between (third,
    # measured 2026-12-07 on AVX2, the same on b19141c): that is the model's numerics, not length.
    assert len(above) <= 2 and sum(k.startswith("essay") for k in above) <= 1, keys[:4]
    # the essay may still rank above the note, but no longer `strong` by agreement: the question's
    # words do not recur among the candidates (relevance.grade `usual`, issue 41)
    assert all(h["strength"] == "weak" for h in payments if h["key"].startswith("essay")), payments[:3]
    assert first >= 8
