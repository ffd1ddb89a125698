"""The index rows of one record version: its `versions` row, its full-text columns, its passages'
hashes, or why it is unreadable. Pure (no index, no Git): the build runs it in-process and
index/spread.py in worker processes, so it sits below both.
"""

from __future__ import annotations

import json

from kyb_cli.core.embed.recipe import passage_hashes
from kyb_cli.core.records.keys import path_of_key
from kyb_cli.core.records.model import Record, RecordFormatError
from kyb_cli.core.records.served import load

_FIELD_TEXT = ("service", "severity", "status", "priority", "assignee", "parent_task", "resolution",
               "detection", "blocked_reason", "waits_on")


def fold(text: str) -> str:
    """What the FTS index sees: `ё` as `е` (unicode61 does not fold it)."""
    return text.replace("ё", "е").replace("Ё", "Е")


def fts_columns(key: str, doc: dict) -> tuple[str, str, str, str, str]:
    """title, tags, key, the other fields' text (the empty ones left out) and body, folded. The
    fields' column: `" ".join(f for f in [str(doc.get(n) or "") for n in _FIELD_TEXT] + hosts +
    knowledge + scopes if f)`, each empty value dropped as it is read (tests/test_index_rows_fast.py)."""
    get = doc.get
    fields = [value if value.__class__ is str else str(value) for name in _FIELD_TEXT if (value := get(name))]
    fields += [host for host in get("hosts") or () if host]
    fields += [link for link in get("knowledge") or () if link]
    fields += [scope for window in get("affected") or () if (scope := window.get("scope", ""))]
    return (fold(doc["title"]), fold(" ".join(get("tags") or [])), fold(key),
            fold(" ".join(fields)), fold(get("body") or ""))


def _make_dumps():
    """json.dumps(…, ensure_ascii=False) of a dict or a list, the same text: one C encoder made once
    (JSONEncoder.encode makes one a call) and no circular check (a parsed record holds no cycle; the
    check only turns one into a ValueError). The pure-Python encoder where `_json` is missing."""
    encoder = json.JSONEncoder(ensure_ascii=False, check_circular=False)
    make = getattr(json.encoder, "c_make_encoder", None)
    try:
        c = make(None, encoder.default, json.encoder.encode_basestring, None, encoder.key_separator,
                 encoder.item_separator, False, False, True)
    except TypeError:  # no C encoder, or another release's signature
        return encoder.encode
    join = "".join
    return lambda value: join(c(value, 0))


_dumps = _make_dumps()  # tests/test_index_rows_fast.py: equal to json.dumps on records and hostile values


# The bytes a record's JSON escapes (controls) or whose text may hold a wide character (a UTF-8
# lead byte of U+2000 on): `_plain` keeps only these of a blob, in one bytes.translate.
_ODD_BYTES = bytes(b for b in range(256) if b < 0x20 or b >= 0xE2)
_NOT_ODD = bytes(b for b in range(256) if b not in _ODD_BYTES)
_BELOW_WIDE = bytes(range(0xE2))
_WIDE_OR_NL = b"\n" + bytes(range(0xE2, 256))


def _plain(data) -> tuple[bool, bool]:
    """What a record file's bytes say of its text as it is, so of its body (issue 39: asked once, for
    the doc's JSON and the passages): (no control character but the line break, no character from
    U+2000 on: in UTF-8 each starts with a lead byte from 0xE2 on, which no other character holds)."""
    if data.__class__ is not bytes:
        return False, False
    odd = data.translate(None, _NOT_ODD)  # a few line breaks in most records
    if odd.count(10) == len(odd):  # line breaks only
        return True, True
    return not odd.translate(None, _WIDE_OR_NL), not odd.translate(None, _BELOW_WIDE)


def doc_json(doc: dict, bare: bool = False) -> str:
    """_dumps(doc). `bare`: the record's file holds no control character but the line break
    (`_plain`), so neither does its body, the file's text as it is (no TOML escape reaches it); then
    a body without a quote or a backslash (the doc's last item, as Record.to_json puts it) is written
    as the encoder writes it, its line breaks escaped, and the C encoder writes the rest: escaping a
    non-ASCII body char by char was half of the doc's JSON (~5 of ~10 µs, issue 39)."""
    body = doc.get("body")
    if not (bare and body.__class__ is str and len(doc) > 1 and next(reversed(doc)) == "body"
            and '"' not in body and "\\" not in body):
        return _dumps(doc)
    del doc["body"]
    try:
        head = _dumps(doc)
    finally:
        doc["body"] = body  # last again, as it was
    return head[:-1] + ', "body": "' + body.replace("\n", "\\n") + '"}'


def version_rows(pending, contents: dict[str, bytes]) -> tuple[list, list, list, list, list[str]]:
    """The rows of each (vid, key, sha, when, blob) of `pending`, its text from `contents`: versions,
    fts, vtext, unreadable, and what was skipped. Pure: index/spread.py runs it on every core."""
    rows, fts, vtext, unreadable, skipped = [], [], [], [], []
    for vid, key, sha, when, blob in pending:
        path = path_of_key(key)
        try:
            data = contents[blob]
            record = load(path, data)
            readable = True
        except (RecordFormatError, KeyError) as exc:
            reason = getattr(exc, "reason", "missing blob")
            skipped.append(f"{key}@{(sha or 'HEAD')[:12]}: {reason}")
            record = Record(key=key, title=f"{key} (unreadable: {reason})")
            readable = False
            unreadable.append((vid, reason))
        doc = record.to_json()
        bare, narrow = _plain(data) if readable else (False, False)
        rows.append((vid, key, record.kind, sha, when, blob, record.title,
                     _dumps([t.lower() for t in record.tags]),
                     record.service.lower(), record.status, record.priority, record.assignee,
                     record.parent_task, doc_json(doc, bare)))
        if readable:
            fts.append((vid, *fts_columns(key, doc)))
            vtext.extend((vid, part, h) for part, h in enumerate(passage_hashes(doc, narrow)))
    return rows, fts, vtext, unreadable, skipped
