"""Issue 39 (helper h39r): the per-record pieces of rows.version_rows made cheaper give the same
text — the doc's JSON from one C encoder made once equals json.dumps(…, ensure_ascii=False) (and
refuses what it refuses), the passage hashes equal text_hash(passage_input(p)) of each passage —
over generated records of every shape and hostile values, against the old code kept here."""

from __future__ import annotations

import datetime
import hashlib
import json
import random

import pytest

from kyb_cli.core.embed import recipe
from kyb_cli.core.index import rows
from kyb_cli.core.records.model import Record


def _old_dumps(value):
    return json.JSONEncoder(ensure_ascii=False).encode(value)


def _old_passage_hashes(record, parts=None):
    """`parts`: recipe.passages(record), when the caller has it already."""
    parts = recipe.passages(record) if parts is None else parts
    return [hashlib.sha256(("passage: " + p).encode("utf-8")).hexdigest() for p in parts]


_ODD = ["", "ё", "Ё", "\x00", "\x1f", "\"", "\\", "\u2028", "\ud7ff", "😀", "日本語", "a\nb", "/", "\x7f", "é"]


def _text(rng: random.Random, n: int) -> str:
    words = ["alpha", "бета", "日本", "port 8080", "token", "x" * 30, *_ODD]
    return " ".join(rng.choice(words) for _ in range(n))


def _values(rng: random.Random):
    scalars = [0, -1, 2**70, 1.5, -0.0, float("nan"), float("inf"), float("-inf"), True, False, None,
               _text(rng, 3)]
    yield {"key": "k", "title": _text(rng, 4), "tags": [_text(rng, 1) for _ in range(rng.randrange(4))],
           "extra": {_text(rng, 1): rng.choice(scalars), "n": [rng.choice(scalars), {"d": _text(rng, 2)}]},
           "body": _text(rng, rng.randrange(400))}
    yield [_text(rng, 1) for _ in range(rng.randrange(5))]
    yield {}
    yield []


def test_dumps_is_json_dumps():
    rng = random.Random(39)
    for _ in range(2000):
        for value in _values(rng):
            assert rows._dumps(value) == _old_dumps(value) == json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("value", [{"at": datetime.date(2026, 1, 1)}, [object()], {(1, 2): 3}])
def test_dumps_refuses_what_json_refuses(value):
    with pytest.raises(TypeError) as old:
        _old_dumps(value)
    with pytest.raises(TypeError) as new:
        rows._dumps(value)
    assert str(new.value) == str(old.value)


def test_passage_hashes_are_text_hashes():
    rng = random.Random(40)
    for n in range(300):
        kind = ("inc-", "task-", "")[n % 3]
        record = Record(key=f"{kind}k{n}", title=_text(rng, 3), body=_text(rng, rng.choice([0, 5, 60, 300, 3000])),
                        service=_text(rng, 1) if kind == "inc-" else "",
                        hosts=[_text(rng, 1)] if kind == "inc-" else [])
        for source in (record, record.to_json()):
            got, parts = recipe.passage_hashes(source), recipe.passages(source)  # each once: pure, ~5 ms
            assert got == _old_passage_hashes(source, parts)
            assert got == [recipe.text_hash(recipe.passage_input(p)) for p in parts]


def _old_fts_columns(key, doc):
    fields = [str(doc.get(name) or "") for name in rows._FIELD_TEXT]
    fields += list(doc.get("hosts") or []) + list(doc.get("knowledge") or [])
    fields += [a.get("scope", "") for a in doc.get("affected") or []]
    return (rows.fold(doc["title"]), rows.fold(" ".join(doc.get("tags") or [])), rows.fold(key),
            rows.fold(" ".join(f for f in fields if f)), rows.fold(doc.get("body") or ""))


def test_fts_columns_as_before():
    rng = random.Random(41)
    odd = ["", "ё", "Ёлка", "a b", "\x00", "日本", None, 0, 7, True, False, 1.5]
    for n in range(3000):
        doc = {"title": _text(rng, 2), "body": rng.choice(["", None, _text(rng, 20)]),
               "tags": rng.choice([[], None, [_text(rng, 1), "ё"]])}
        for name in rows._FIELD_TEXT:
            if rng.random() < 0.5:
                doc[name] = rng.choice(odd + [_text(rng, 2)])
        for name in ("hosts", "knowledge"):
            if rng.random() < 0.5:
                doc[name] = rng.choice([None, [], ["", "h1", "ё"], (_text(rng, 1),)])
        if rng.random() < 0.5:
            doc["affected"] = rng.choice([None, [], [{"scope": "ё"}, {}, {"scope": ""}, {"from": "x"}]])
        key = f"k{n}-ёЁ"
        assert rows.fts_columns(key, doc) == _old_fts_columns(key, doc)
