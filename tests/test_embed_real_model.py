"""With the real multilingual-e5-small (KYB_MODEL or ../shared/models/...): meaning across languages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import SHARED_MODEL

MODEL = Path(os.environ.get("KYB_MODEL") or SHARED_MODEL)
pytestmark = pytest.mark.skipif(not (MODEL / "model.onnx").is_file(), reason="real model not present")


def test_model_understands_cross_language_question(monkeypatch):
    from kyb_cli.core import embed

    monkeypatch.setenv("KYB_MODEL", str(MODEL))
    monkeypatch.setenv("KYB_EMBED_HELPER", "0")
    checkout = "Checkout write path. Checkout writes go through svc-checkout on node-3, port 9090."
    unrelated = "Team lunch. The weekly team lunch is on Friday at the Italian place."
    query, reason = embed.query_vector("куда пишет оформление заказа")
    assert reason is None
    got = embed.passage_vectors([checkout, unrelated]).vectors
    q = embed.vector_from_bytes(query)

    def cos(text):
        v = embed.vector_from_bytes(got[embed.text_hash(embed.passage_input(text))])
        return sum(a * b for a, b in zip(q, v))

    assert len(q) == 384
    assert cos(checkout) > cos(unrelated) + 0.05
