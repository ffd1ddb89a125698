"""Issue 39: what a one-shot hybrid `kyb query` imports beyond a lexical one is its own work, not
dataclasses (inspect, ast), typing or hashlib (OpenSSL), and what replaced them answers as they did."""

from __future__ import annotations

import hashlib

import pytest

from tests.support.index_helpers import T0, put



def _imported(res) -> set[str]:
    return {line.split("|")[-1].strip().split(".")[0] for line in res.stderr.splitlines() if "|" in line}


def test_a_hybrid_query_imports_no_dataclasses_typing_or_hashlib(tiny, store_path, kyb_process):
    put(store_path, "checkout-path", "Checkout path", "checkout via node 3", T0)
    put(store_path, "cache-notes", "Cache notes", "redis eviction at night", T0 + 10)
    env = {"KYB_BACKGROUND": "off"}
    first = kyb_process("query", "checkout node", env=env)  # builds the index, caches the question's vector
    assert first.code == 0, first.stderr
    res = kyb_process("query", "checkout node", env={**env, "PYTHONPROFILEIMPORTTIME": "1"})
    assert res.code == 0, res.stderr
    answer = __import__("json").loads(res.stdout)
    assert answer["semantic"] is True and answer["hits"][0]["key"] == "checkout-path"
    imported = _imported(res)
    assert "kyb_cli" in imported
    assert not {"dataclasses", "inspect", "typing", "hashlib", "_hashlib"} & imported


@pytest.mark.parametrize("data", [b"", b"query: checkout port 9090", "passage: чтение базы".encode(), b"x" * 100_000])
def test_the_builtin_sha256_gives_hashlibs_digests(data):
    from kyb_cli.core.embed.recipe import sha256, text_hash

    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    parts = sha256()
    for i in range(0, len(data), 7):
        parts.update(data[i:i + 7])
    assert parts.hexdigest() == hashlib.sha256(data).hexdigest()
    if data.isascii():
        assert text_hash(data.decode()) == hashlib.sha256(data).hexdigest()


def test_a_models_fingerprint_is_the_sha256_of_its_files_and_recipe(tiny_dir):
    import json

    from kyb_cli.core.embed.files import MODEL_FILES, fingerprint
    from kyb_cli.core.embed.models import E5

    digests = {n: hashlib.sha256((tiny_dir / n).read_bytes()).hexdigest() for n in MODEL_FILES}
    blob = json.dumps({"files": digests, "recipe": E5.recipe()}, sort_keys=True).encode()
    assert fingerprint(tiny_dir) == hashlib.sha256(blob).hexdigest()[:24]


def test_the_plain_model_records_hash_compare_and_refuse_changes_as_frozen_dataclasses(tiny_dir):
    from kyb_cli.core.embed.files import ModelLocation
    from kyb_cli.core.embed.models import BGE, E5

    fields = ("name", "env", "config_key", "pooling", "query_prefix", "passage_prefix", "dim", "languages",
              "required", "package", "distribution")
    assert hash(E5) == hash(tuple(getattr(E5, f) for f in fields)) and E5 != BGE
    assert repr(E5).startswith("ModelSpec(name='multilingual-e5-small', env='KYB_MODEL', ")
    with pytest.raises(AttributeError):
        E5.name = "other"
    here = ModelLocation(tiny_dir, "KYB_MODEL")
    assert here.spec is E5 and here == ModelLocation(tiny_dir, "KYB_MODEL", E5) and len({here, here}) == 1


def test_a_near_is_the_named_tuple_it_was():
    from kyb_cli.core.search.semantic import Near, SemanticSide

    near = Near(3, "k", "active", 0.5, 0, None, 0.51)
    assert near == (3, "k", "active", 0.5, 0, None, 0.51) and near._replace(score=0.5).score == 0.5
    assert Near._fields == ("vid", "key", "state", "cos", "part", "score", "meaning")
    side = SemanticSide([near], 2)
    assert (side.reason, side.vote, side.pending) == (None, None, 2) and side == SemanticSide([near], 2)
