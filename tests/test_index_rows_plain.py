"""Issue 39 (helper h39p): rows.version_rows asks a record file's bytes once (`_plain`) whether its
body can skip the encoder's char-by-char escaping and the search for wide characters; its rows stay
the rows of the old code, kept here as the oracle, over generated record files of every shape and
hostile ones (controls, quotes, backslashes, CRLF, a BOM, CJK, TOML escapes, non-UTF-8, secrets,
huge bodies, unreadable ones)."""

from __future__ import annotations

import json
import random

from kyb_cli.core.embed import recipe
from kyb_cli.core.index import rows
from kyb_cli.core.records.keys import path_of_key
from kyb_cli.core.records.model import Record, RecordFormatError
from kyb_cli.core.records.served import load


def _old_version_rows(pending, contents):
    """rows.version_rows before `_plain`: json.dumps of the doc, the passages' hashes as they were."""
    out, fts, vtext, unreadable, skipped = [], [], [], [], []
    for vid, key, sha, when, blob in pending:
        path = path_of_key(key)
        try:
            record = load(path, contents[blob])
            readable = True
        except (RecordFormatError, KeyError) as exc:
            reason = getattr(exc, "reason", "missing blob")
            skipped.append(f"{key}@{(sha or 'HEAD')[:12]}: {reason}")
            record = Record(key=key, title=f"{key} (unreadable: {reason})")
            readable = False
            unreadable.append((vid, reason))
        doc = record.to_json()
        dumps = lambda v: json.dumps(v, ensure_ascii=False)  # noqa: E731
        out.append((vid, key, record.kind, sha, when, blob, record.title, dumps([t.lower() for t in record.tags]),
                    record.service.lower(), record.status, record.priority, record.assignee,
                    record.parent_task, dumps(doc)))
        if readable:
            fts.append((vid, *rows.fts_columns(key, doc)))
            vtext.extend((vid, part, recipe.text_hash(recipe.passage_input(p)))
                         for part, p in enumerate(recipe.passages(doc)))
    return out, fts, vtext, unreadable, skipped


_WORDS = ["alpha", "port 9090", "checkout", "сервис", "очередь", "ёлка", "Ёж", "é", "日本語", "한국", "ｆｕｌｌ",
          "\u2000", "\u2028", "\u1fff", "\u2e80", "😀", '"', "\\", "\t", "\r", "\x00", "\x1f", "\x7f", "\n", "\n\n",
          "x" * 40, "a.b", "password=hunter2", "ghp_" + "A1b2" * 9, "-----BEGIN RSA PRIVATE KEY-----"]


def _text(rng: random.Random, n: int, words=_WORDS) -> str:
    return " ".join(rng.choice(words) for _ in range(n))


def _toml(value: str) -> str:
    return json.dumps(value, ensure_ascii=rng_ascii)  # a TOML basic string is a JSON string here


rng_ascii = False


def _file(rng: random.Random, key: str) -> bytes:
    """A record file: front matter kyb writes or odd, a body of every shape, sometimes not UTF-8."""
    global rng_ascii
    rng_ascii = rng.random() < 0.3  # \uXXXX escapes in the TOML: controls that no byte of the file holds
    safe = [w for w in _WORDS if w.isprintable() and '"' not in w and "\\" not in w]
    lines = [f"key = {_toml(key)}", f"title = {_toml(_text(rng, 3))}"]
    if rng.random() < 0.5:
        lines.append("tags = [" + ", ".join(_toml(_text(rng, 1, safe)) for _ in range(rng.randrange(4))) + "]")
    if key.startswith("inc-"):
        lines += [f"service = {_toml(_text(rng, 1, safe))}", f"hosts = [{_toml(_text(rng, 1, safe))}]",
                  'severity = "medium"', 'status = "open"']
    if rng.random() < 0.2:
        lines.append(f"odd_field = {_toml(_text(rng, 2))}")
    if rng.random() < 0.1:
        lines.append("[extra_table]\nn = 1.5\nd = \"x\"")
    body = _text(rng, rng.choice([0, 1, 5, 60, 250, 700]), rng.choice([_WORDS, safe, safe[:6]]))
    nl = "\r\n" if rng.random() < 0.1 else "\n"
    text = ("\ufeff" if rng.random() < 0.05 else "") + "+++" + nl + nl.join(lines) + nl + "+++" + nl + nl + body + nl
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.03:
        data += b"\xff\xfe"  # not UTF-8: unreadable
    return data


def _store(seed: int, n: int):
    rng = random.Random(seed)
    pending, contents = [], {}
    for vid in range(1, n + 1):
        key = rng.choice(["k", "inc-", "task-"]) + f"{vid:06d}-note"
        blob = f"{vid:040x}"
        if rng.random() > 0.01:  # else: a missing blob
            contents[blob] = _file(rng, key)
        pending.append((vid, key, None if vid % 2 else "ab" * 20, vid % 7 or None, blob))
    return pending, contents


def test_version_rows_are_the_old_rows():
    pending, contents = _store(39, 1000)
    new = rows.version_rows(pending, contents)
    assert new == _old_version_rows(pending, contents)
    readable = len(new[1])
    assert 200 < readable < len(pending)  # both readable and unreadable records were compared
    bodies = [json.loads(row[13])["body"] for row in new[0]]
    assert any(rows._plain(contents.get(p[4], b""))[0] and len(b) > 1000 for p, b in zip(pending, bodies))
    assert any("\n" in b and '"' not in b and not b.isascii() for b in bodies)  # the fast path's case


def test_plain_says_what_the_text_holds():
    for text in ["", "a\nb", "привет\n", "\u1fff", "é\n\n", *_WORDS]:
        bare, narrow = rows._plain(text.encode("utf-8", "surrogatepass"))
        assert bare == all(ch == "\n" or ord(ch) >= 0x20 for ch in text)
        assert narrow == all(ord(ch) < 0x2000 for ch in text)
        if narrow:
            assert not recipe._wide().search(text)  # no character of the class is below U+2000
    assert rows._plain("text") == (False, False)  # not bytes: the encoder's and the class's way


def test_doc_json_is_json_dumps_and_keeps_the_doc():
    rng = random.Random(40)
    for _ in range(3000):
        body = _text(rng, rng.randrange(50))
        doc = {"key": "k", "title": _text(rng, 2), "tags": [_text(rng, 1)], "body": body}
        before = list(doc.items())
        bare = all(ch == "\n" or ord(ch) >= 0x20 for ch in body)
        assert rows.doc_json(doc, bare) == json.dumps(doc, ensure_ascii=False)
        assert list(doc.items()) == before  # the body put back, last
    odd = {"body": "a\nb", "key": "k"}  # the body not last: the encoder's way
    assert rows.doc_json(odd, True) == json.dumps(odd, ensure_ascii=False)
    assert rows.doc_json({"body": "x"}, True) == '{"body": "x"}'


def test_narrow_chunks_are_the_chunks():
    rng = random.Random(41)
    for _ in range(300):
        body = _text(rng, rng.choice([10, 100, 400, 3000]), [w for w in _WORDS if all(ord(c) < 0x2000 for c in w)])
        assert recipe.chunks(body, narrow=True) == recipe.chunks(body)
        doc = {"key": "inc-1", "title": "t", "kind": "incident", "service": "s", "hosts": ["h"], "body": body}
        assert recipe.passage_hashes(doc, True) == recipe.passage_hashes(doc)


def test_a_list_over_the_limit_is_still_refused():
    """limits.record_problem skips counting each list when stored_fields's pairs are no more than
    TAGS_MAX: each list entry is one pair, so a list over the limit always gets counted."""
    from kyb_cli.core.records import fields, limits

    assert set(limits.LIST_FIELDS) <= set(fields._LISTS)
    for name in limits.LIST_FIELDS:
        for count, refused in ((limits.TAGS_MAX, False), (limits.TAGS_MAX + 1, True)):
            record = Record(key="k1", title="t", **{name: [f"v{i}" for i in range(count)]})
            found = limits.record_problem(record, fields.stored_fields(record))
            assert (found is not None) == refused
            assert found == limits.record_problem(record)
            if refused:
                assert found.startswith(f"{name} has {count:,} entries")
