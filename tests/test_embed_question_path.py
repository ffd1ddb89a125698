"""A single question skips the batch machinery (Embedder.embed/_run): its vector is byte for byte the
one the general path made (zero-filled arrays, runs sorted by length, rows stacked)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import SHARED_MODEL

E5_DIR = Path(os.environ.get("KYB_MODEL") or SHARED_MODEL)
BGE_DIR = Path(os.environ.get("KYB_MODEL_EN") or SHARED_MODEL.parent / "bge-small-en-v1.5")

QUESTIONS = [
    "postgres replica failover", "disk", "why", "how do I rotate the TLS certificate on the ingress proxy",
    "куда пишет оформление заказа", "wo liegen die Absturzberichte der Apps", "où sont les sauvegardes",
    "バックアップはどこ", "checkout svc-checkout node-3 port 9090 h38r-7", "",
    "when the pager fires at night for the billing queue backlog and the retry worker is stuck on a "
    "poisoned message, what is the runbook step to drain it without losing invoices",
]


def questions() -> list[str]:
    """50 questions of mixed lengths and languages (one empty, one past the 512-token cut)."""
    out = list(QUESTIONS) + ["checkout " * 700]
    i = 0
    while len(out) < 50:
        words = QUESTIONS[(i * 3) % len(QUESTIONS)].split()
        out.append(f"{QUESTIONS[i % len(QUESTIONS)]} {' '.join(words[:i % 7])} {i}".strip())
        i += 1
    return out


def general_path(model, text: str) -> bytes:
    """The way every question was embedded before the single-question path (kept here verbatim)."""
    import numpy as np

    encodings = [model.tokenizer.encode(text)]
    width = max(len(e.ids) for e in encodings)
    ids = np.zeros((len(encodings), width), dtype=np.int64)
    mask = np.zeros((len(encodings), width), dtype=np.int64)
    for row, enc in enumerate(encodings):
        ids[row, :len(enc.ids)] = enc.ids
        mask[row, :len(enc.ids)] = 1
    feed = {"input_ids": ids, "attention_mask": mask}
    if model.wants_token_types:
        feed["token_type_ids"] = np.zeros_like(ids)
    hidden = model.session.run([model.output] if model.output else None, feed)[0]
    if model.pooling == "cls":
        pooled = hidden[:, 0, :]
    else:
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1.0)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    rows = (pooled / norms).astype(np.float32)
    return np.stack([rows[0]])[0].astype("<f4").tobytes()


@pytest.mark.slow
@pytest.mark.parametrize("directory,pooling,prefix", [
    (E5_DIR, "mean", "query: "),
    (BGE_DIR, "cls", "Represent this sentence for searching relevant passages: "),
])
def test_a_question_vector_is_byte_identical_to_the_general_path(directory, pooling, prefix):
    if not (directory / "model.onnx").is_file():
        pytest.skip("real model not present")
    from kyb_cli.core.embed.embedder import Embedder

    model = Embedder(directory, pooling=pooling)
    texts = [prefix + q for q in questions()]
    assert len(texts) == 50
    fast = [model.embed_bytes([t])[0] for t in texts]
    assert fast == [general_path(model, t) for t in texts]
    assert model.embed_bytes(texts) == fast  # and a batch of them, as passages are embedded


def devset_questions() -> list[str]:
    """The dev set's questions and their other phrasings (bench/evalset), in file order."""
    import json

    root = Path(__file__).resolve().parents[1] / "bench" / "evalset"
    out: list[str] = []
    for name in ("questions.jsonl", "also.jsonl"):
        for line in (root / name).read_text().splitlines():
            row = json.loads(line)
            for q in [row["query"]] if "query" in row else row.get("also", []):
                if q not in out:
                    out.append(q)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("directory,pooling,prefix", [
    (E5_DIR, "mean", "query: "),
    (BGE_DIR, "cls", "Represent this sentence for searching relevant passages: "),
])
def test_the_question_path_gives_the_old_bytes_on_the_dev_set(directory, pooling, prefix):
    """Embedder.question (pooling and norm in fewer numpy steps, no copies) against the general path,
    kept verbatim above, over the dev set's 200+ questions: byte for byte, so every cached and
    compared vector stays what it was."""
    if not (directory / "model.onnx").is_file():
        pytest.skip("real model not present")
    from kyb_cli.core.embed.embedder import Embedder

    model = Embedder(directory, pooling=pooling)
    texts = [prefix + q for q in devset_questions()]
    assert len(texts) >= 200
    assert [model.question(t) for t in texts] == [general_path(model, t) for t in texts]
    assert model.embed_bytes([texts[0]]) == [general_path(model, texts[0])]
