"""With the real multilingual-e5-small (KYB_MODEL): the shipped calibration belongs to the current
model + recipe, and `confident` tells a real answer from noise (docs/SEARCH.md "How sure is an answer")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import SHARED_MODEL
from tests.support.index_helpers import T0, fill_in_background_now, put, remove

MODEL = Path(os.environ.get("KYB_MODEL") or SHARED_MODEL)
pytestmark = [pytest.mark.slow,  # a real model: the slow lane (the fast lane needs no model)
              pytest.mark.skipif(not (MODEL / "model.onnx").is_file(), reason="real model not present")]

RECORDS = [
    ("checkout-write-path", "Checkout write path", "Checkout writes go through svc-checkout on node-3, port 9090."),
    ("orders-db-primary", "Orders database primary", "The orders Postgres primary is pg-orders-1; replicas are read-only."),
    ("deploy-freeze", "Deploy freeze", "No production deploys on Fridays after 15:00 UTC and during the last week of December."),
    ("password-hashing", "Storing user passwords", "Passwords are hashed with argon2id; parameters m=64MB, t=3, p=1."),
    ("log-retention", "How long logs are kept", "Application logs are kept 14 days in Loki; audit logs 400 days in cold storage."),
    ("tls-cert-rotation", "Certificate renewal", "TLS certificates are renewed by cert-manager 30 days before expiry."),
]


@pytest.fixture
def real(monkeypatch):
    monkeypatch.setenv("KYB_MODEL", str(MODEL))
    monkeypatch.setenv("KYB_EMBED_HELPER", "0")


def search(store_path, text, **kw):
    from kyb_cli.core.search.pipeline import search as run

    fill_in_background_now(store_path)  # queries never embed passages: the filler does
    return run(store_path, text, semantic=True, **kw)


def test_shipped_calibration_is_for_the_current_model_and_recipe(real):
    from kyb_cli.core import embed
    from kyb_cli.core.search import relevance

    fp = embed.current_fingerprint()[0]
    cal = relevance.calibration(fp)
    assert cal is not relevance.NONE, f"no calibration for {fp}: run bench/calibrate_search.py (docs/SEARCH.md)"
    assert cal.floor is not None and cal.center_q is not None and cal.center_p is not None


def test_confident_tells_an_answer_from_a_question_about_nothing_stored(store_path, real):
    for i, (key, title, body) in enumerate(RECORDS):
        put(store_path, key, title, body, T0 + i)
    on_topic = ["when are we not allowed to ship to prod", "Wie lange werden Logs aufbewahrt?",
                "comment sont renouvelés les certificats", "svc-checkout"]
    off_topic = ["how to bake sourdough bread", "рецепт борща", "who won the world cup in 2018",
                 "如何学习吉他", "configurar un servidor de correo postfix"]
    for text in on_topic:
        assert search(store_path, text)["confident"] is True, text
    for text in off_topic:
        r = search(store_path, text)
        assert r["count"] >= 1 and r["confident"] is False, (text, [(h["key"], h.get("strength")) for h in r["hits"]])


def test_question_whose_only_answer_was_retracted_is_not_confident(store_path, real):
    for i, (key, title, body) in enumerate(RECORDS):
        put(store_path, key, title, body, T0 + i)
    questions = ["which hash function protects user passwords", "Wie werden Passwörter gespeichert?"]
    for question in questions:
        r = search(store_path, question)
        assert r["hits"][0]["key"] == "password-hashing" and r["confident"] is True
    remove(store_path, "password-hashing", T0 + 100)
    for question in questions:
        r = search(store_path, question)
        assert "password-hashing" not in {h["key"] for h in r["hits"]}
        assert r["confident"] is False and all(h["strength"] == "weak" for h in r["hits"]), question
