"""A loaded model's weights go on 2 MB pages (core/embed/pages.py): the same bytes, so the same vectors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kyb_cli.core.embed import pages
from tests.conftest import SHARED_MODEL

E5_DIR = Path(os.environ.get("KYB_MODEL") or SHARED_MODEL)
BGE_DIR = Path(os.environ.get("KYB_MODEL_EN") or SHARED_MODEL.parent / "bge-small-en-v1.5")
LINUX = Path("/proc/self/maps").is_file()


@pytest.mark.skipif(not LINUX, reason="no /proc")
def test_only_regions_new_since_before_are_advised_and_their_bytes_stay():
    before = pages.regions()
    block = bytearray(bytes(range(256)) * (32 << 10))  # 8 MB: malloc maps a private anonymous region
    assert pages.advise_new(before) >= 2 << 20  # it holds at least one aligned 2 MB page
    assert block == bytes(range(256)) * (32 << 10)
    assert pages.advise_new(pages.regions()) == 0  # nothing new: nothing advised


def test_advising_never_raises_where_there_is_no_proc_or_no_libc(monkeypatch):
    import ctypes

    def no_libc(*_a, **_k):
        raise OSError("no libc")

    monkeypatch.setattr(ctypes, "CDLL", no_libc)
    assert pages.advise_new(set()) == 0
    monkeypatch.setattr("builtins.open", no_libc)
    assert pages.regions() == set()


QUESTIONS = [
    "postgres replica failover", "disk", "why", "how do I rotate the TLS certificate on the ingress proxy",
    "куда пишет оформление заказа", "wo liegen die Absturzberichte der Apps", "où sont les sauvegardes",
    "バックアップはどこ", "checkout svc-checkout node-3 port 9090 h38r-7",
    "when the pager fires at night for the billing queue backlog and the retry worker is stuck on a "
    "poisoned message, what is the runbook step to drain it without losing invoices",
]


def _questions() -> list[str]:
    """50 questions of mixed lengths and languages."""
    out = []
    for i in range(50):
        q = QUESTIONS[i % len(QUESTIONS)]
        out.append(q if i < len(QUESTIONS) else f"{q} {' '.join(QUESTIONS[(i * 3) % len(QUESTIONS)].split()[:i % 7])} {i}")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("directory,pooling,prefix", [
    (E5_DIR, "mean", "query: "),
    (BGE_DIR, "cls", "Represent this sentence for searching relevant passages: "),
])
def test_vectors_on_huge_pages_are_byte_identical_to_the_plain_ones(monkeypatch, directory, pooling, prefix):
    if not (directory / "model.onnx").is_file():
        pytest.skip("real model not present")
    from kyb_cli.core.embed.embedder import Embedder

    advised: list[int] = []
    real = pages.advise_new
    monkeypatch.setattr(pages, "advise_new", lambda before: 0)
    plain = Embedder(directory, pooling=pooling)
    monkeypatch.setattr(pages, "advise_new", lambda before: advised.append(real(before)) or advised[-1])
    huge = Embedder(directory, pooling=pooling)
    if LINUX:
        assert advised and advised[0] >= 16 << 20  # the weights' blocks (~21 MB int8 and more)
    inputs = [prefix + q for q in _questions()]
    one_by_one = [huge.embed_bytes([text])[0] for text in inputs]
    assert one_by_one == [plain.embed_bytes([text])[0] for text in inputs]
    assert huge.embed_bytes(inputs) == plain.embed_bytes(inputs)
