"""With the real multilingual-e5-small (KYB_MODEL or ../shared/models/...): meaning across languages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import SHARED_MODEL

MODEL = Path(os.environ.get("KYB_MODEL") or SHARED_MODEL)
pytestmark = [pytest.mark.slow,  # a real model: the slow lane (the fast lane needs no model)
              pytest.mark.skipif(not (MODEL / "model.onnx").is_file(), reason="real model not present")]


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


def _plain_reference():
    """The model with no graph optimisation, one thread, one text per run, pooled in numpy."""
    import numpy as np
    import onnxruntime as ort

    from kyb_cli.core.embed.embedder import Embedder

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    plain = ort.InferenceSession(str(MODEL / "model.onnx"), options, providers=["CPUExecutionProvider"])
    tokenizer = Embedder(MODEL).tokenizer

    def embed(text):
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        vec = plain.run(None, feed)[0][0].mean(axis=0)
        return vec / np.linalg.norm(vec)

    return embed


TEXTS = ["query: куда пишет оформление заказа", "query: 9090",
         "passage: Checkout write path. Checkout writes go through svc-checkout on node-3, port 9090.",
         "passage: Деплой. " + "Все стримы настроены в терраформе, реестр образов в докере. " * 12,
         "passage: Backups. " + "Postgres base backups run daily with WAL archiving; restores are tested. " * 16]


def test_tuned_pipeline_matches_plain_reference_vectors():
    """Session options, fusions, runs and padding keep the maths: cosine >= 0.999 with the plain
    reference for every text, embedded alone or among others (each text runs alone)."""
    from kyb_cli.core.embed.embedder import Embedder

    emb = Embedder(MODEL)
    reference = _plain_reference()
    batched = emb.embed(TEXTS)
    for text, vec in zip(TEXTS, batched):
        ref = reference(text)
        assert float(emb.embed([text])[0] @ ref) >= 0.999, text[:40]
        assert float(vec @ ref) >= 0.999, text[:40]


def test_a_passage_vector_does_not_depend_on_who_it_is_embedded_with():
    """The int8 model picks one activation scale per run; every text runs alone, so a passage gets
    the same vector from the filler, `kyb index --embed` or the cache of another store (short texts
    that shared a run had moved to cosine 0.997 of themselves)."""
    from kyb_cli.core.embed.embedder import Embedder

    emb = Embedder(MODEL)
    together = emb.embed(TEXTS)
    for i, text in enumerate(TEXTS):
        assert float(emb.embed([text])[0] @ together[i]) >= 0.99999, text[:40]
    short = "passage: Checkout writes go through svc-checkout."
    assert float(emb.embed([short])[0] @ emb.embed([short, "passage: " + "The weekly team lunch. " * 3])[0]) >= 0.99999
