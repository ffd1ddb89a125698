"""Issue 39: served.load's checks made cheaper (one pass for the path, the body's size without
encoding it, the fields listed without a generator, tags printable at once, scan_fields's byte gate)
refuse exactly what they refused: the same verdict and reason text, over thousands of generated
record files holding every hostile case — secrets of every rule in every field, oversized bodies
and front matter, too many tags, tags with control characters, bad dates and closed sets, a key
that is not the path's, bad paths, broken TOML and UTF-8 — against the old implementation kept
here as the oracle."""

from __future__ import annotations

import json
import random
import unicodedata

import pytest

from kyb_cli.core.records import fields as fields_mod
from kyb_cli.core.records import keys, served
from kyb_cli.core.records.limits import record_problem as size_problem
from kyb_cli.core.records.model import RecordFormatError, parse
from kyb_cli.core.records.validate import BODY_MAX_BYTES, secret_message, typed_field_problem
from tests.test_secret_gate import _old_scan_fields, _secrets


# -- the oracle: served.load as it was before issue 39's ninth-session helper h39y -----------------

def _old_tag_problem(tags):
    for n, tag in enumerate(tags, 1):
        for ch in tag:
            if ch == "\x00":
                continue
            if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
                name = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab"}.get(ch, "a control character")
                return (f"tag {n} holds {name} (U+{ord(ch):04X}): a tag is one line of text — "
                        "give each tag as a short label")
    return None


def _old_stored_fields(record):
    """fields.stored_fields as it was, a generator (kept verbatim here as the oracle of the list)."""
    yield "key", record.key
    yield "title", record.title
    yield "body", record.body
    for name in ("tags", "refs", "hosts", "knowledge", "blocked_by"):
        for value in getattr(record, name):
            yield name, value
    for name in ("service", "detection", "resolution", "blocked_reason", "assignee", "parent_task",
                 "waits_on"):
        yield name, getattr(record, name)
    for window in record.affected:
        for name, value in window.items():
            if isinstance(value, str):
                yield "affected", value
    for name, value in record.verified.items():
        yield f"verified {name}", str(value)
    for name, value in record.extra.items():
        yield name, name
        for text in fields_mod._strings(value):
            yield name, text


def _old_rules(record):
    size = len(record.body.encode("utf-8"))
    if size > BODY_MAX_BYTES:
        return f"body is {size:,} bytes; the limit is {BODY_MAX_BYTES:,} (1 MiB)"
    fields = list(_old_stored_fields(record))
    too_big = size_problem(record, fields)
    if too_big is not None:
        return too_big
    found = _old_scan_fields(fields)
    if found is not None:
        return secret_message(found)
    bad_tag = _old_tag_problem(record.tags)
    if bad_tag is not None:
        return f"tags: {bad_tag}"
    return typed_field_problem(record)


def _old_problem(path, data):
    try:
        if not keys.is_record_candidate(path):
            raise RecordFormatError("not a record path (knowledge/, incidents/ or tasks/ <bucket>/<key>.md)", path=path)
        problem = keys.path_problem(path)
        if problem is not None:
            raise RecordFormatError(problem, path=path)
        record = parse(data, path=path)
        key = path.rsplit("/", 1)[1][:-3]
        if record.key != key:
            raise RecordFormatError(f"the front matter says key = '{record.key}' but the file is {path} "
                                    f"(key '{key}')", path=path)
        problem = _old_rules(record)
        if problem is not None:
            raise RecordFormatError(f"breaks a write rule: {problem}", path=path)
    except RecordFormatError as exc:
        return exc.reason
    return None


def _verdict(fn, path, data):
    try:
        return ("ok", fn(path, data))
    except Exception as exc:  # noqa: BLE001 - a crash must be the same crash
        return ("raised", type(exc).__name__)


# -- the corpus ---------------------------------------------------------------------------------------

def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string (JSON's escapes are TOML's)


KEYS = ["k000033-shard", "inc-2026-07-22-orders-api-oom", "task-raise-log-retention", "a", "x" * 100,
        "sk-proj-abcdefghijklmnopqrstuvwx"]
WORDS = ["port", "9090", "сервис", "очередь", "token", "key", "secret", "пароль:", "password", "=", "@",
         "bearer", "machine", "\u0130", "\u212a", "-----BEGIN", "ok", "svc-checkout.prod.internal"]
ODD_TAGS = ["ok", "two\nlines", "tab\there", "cr\rhere", "nul\x00here", "sep\u2028here", "para\u2029x",
            "bell\x07", "del\x7f", "zwsp\u200bx", "nbsp\u00a0x", "ß", "INFRA", ""]
DATES = ["2026-07-22", "2026-13-45", "tomorrow", "2026-02-30", "2026-07-22T10:00:00Z", "2026-07-22T10:00:00",
         "2026-07-22ghp_j59pjomke57foiu94c0D1lNQgtYk3IMJ9PvM", ""]
CLOSED = ["low", "medium", "high", "critical", "open", "mitigated", "resolved", "in_progress", "blocked", "done",
          "dropped", "urgent", ""]


def _text(rng, secrets_):
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 8)))
    if rng.random() < 0.3:
        return words + " " + rng.choice(secrets_)
    return words


def _record_file(rng, secrets_) -> tuple[str, bytes | str]:
    key = rng.choice(KEYS)
    path = keys.path_of_key(key)
    how = rng.randrange(40)
    if how == 0:
        path = path.replace(".md", ".txt")  # not a record path
    elif how == 1:
        path = keys.old_path_of_key(key)  # the flat shape: still a record path
    elif how == 2:
        path = "knowledge/zz/" + key + ".md"  # a wrong bucket
    elif how == 3:
        path = "knowledge/Bad_Key.md"  # not a slug
    front_key = key if how != 4 else key + "-other"
    lines = [f"key = {_q(front_key)}", f"title = {_q(_text(rng, secrets_) or 'a title')}"]
    kind = keys.kind_of_key(key)
    for name in ("service", "detection", "resolution", "blocked_reason", "assignee", "parent_task", "waits_on"):
        if rng.random() < 0.15:
            lines.append(f"{name} = {_q(_text(rng, secrets_))}")
    for name in ("severity", "status", "priority"):
        if rng.random() < (0.5 if kind != "knowledge" else 0.05):
            lines.append(f"{name} = {_q(rng.choice(CLOSED))}")
    for name in ("review_by", "effective_at", "due", "expected"):
        if rng.random() < 0.1:
            lines.append(f"{name} = {_q(rng.choice(DATES))}")
    for name in ("tags", "refs", "hosts", "knowledge", "blocked_by"):
        if rng.random() < 0.4:
            count = rng.choice([0, 1, 3, 100, 101]) if rng.random() < 0.1 else rng.randint(0, 4)
            items = [rng.choice(ODD_TAGS) if name == "tags" and rng.random() < 0.3 else _text(rng, secrets_)
                     for _ in range(count)]
            lines.append(f"{name} = [" + ", ".join(map(_q, items)) + "]")
    if rng.random() < 0.05:
        lines.append(f"owner = {_q(_text(rng, secrets_))}")  # a hand-added field
    if rng.random() < 0.03:
        lines.append(f"note = {_q('x' * rng.choice([16000, 17000, 70000]))}")  # the front matter limit
    tables = []
    if rng.random() < 0.05:
        tables.append(f"[verified]\nsource = {_q(_text(rng, secrets_))}\nnote = {_q(_text(rng, secrets_))}")
    if rng.random() < 0.03:
        tables.append(f"[[affected]]\nscope = {_q(_text(rng, secrets_))}\nfrom = \"a\"\nto = \"b\"")
    if rng.random() < 0.03:
        tables.append(f"[extra_table]\ninner = [{_q(_text(rng, secrets_))}, {{ deep = {_q(_text(rng, secrets_))} }}]")
    body = "\n\n".join(_text(rng, secrets_) for _ in range(rng.randint(0, 4)))
    if rng.random() < 0.001:
        body += "я" * (BODY_MAX_BYTES // 2 + rng.choice([-5, 5]))  # around the 1 MiB limit in bytes
    elif rng.random() < 0.01:
        body += "x" * (BODY_MAX_BYTES // 4 + rng.choice([-1, 0, 1]))  # around the no-encode bound
    text = "+++\n" + "\n".join(lines) + "\n" + "\n".join(tables) + ("\n" if tables else "") + "+++\n\n" + body + "\n"
    if how == 5:
        text = text.replace("+++\n", "", 1)  # no front matter
    elif how == 6:
        text = text.replace(" = ", " == ", 1)  # broken TOML
    if how == 7:
        return path, text.encode("utf-8") + b"\xff"  # not UTF-8
    if how == 8:
        return path, text  # as str
    if how == 9:
        return path, text.replace("\n\n", "\n\ud800\n", 1)  # a lone surrogate in a str
    return path, text.encode("utf-8")


def test_served_refuses_exactly_what_it_refused():
    rng = random.Random(3939)
    secrets_ = _secrets(rng)
    verdicts: dict[str, int] = {}
    for _ in range(800):  # ~1 s; other seeds and 20,000 files were run once (BENCHMARKS, h39y)
        path, data = _record_file(rng, secrets_)
        old = _verdict(_old_problem, path, data)
        new = _verdict(served.record_problem, path, data)
        assert new == old, (path, data[:2000])
        reason = old[1] or "served"
        verdicts[reason.split(" (")[0][:40]] = verdicts.get(reason.split(" (")[0][:40], 0) + 1
    assert verdicts.get("served", 0) > 20  # the corpus holds both kinds
    assert sum(n for r, n in verdicts.items() if "looks like a se" in r or "look like a se" in r) > 100
    assert sum(n for r, n in verdicts.items() if r.startswith("breaks a write rule: tags")) > 10
    assert len(verdicts) > 25, sorted(verdicts)


@pytest.mark.parametrize("seed", range(3))
def test_the_field_list_is_the_generator_listed(seed):
    rng = random.Random(seed)
    secrets_ = _secrets(rng)
    for _ in range(500):
        path, data = _record_file(rng, secrets_)
        try:
            record = parse(data, path=path)
        except (RecordFormatError, UnicodeError):
            continue
        assert fields_mod.stored_fields(record) == list(_old_stored_fields(record))


def test_a_printable_tag_holds_none_of_the_refused_characters():
    refused = [code for code in range(0x110000) if unicodedata.category(chr(code)) in ("Cc", "Zl", "Zp")]
    assert refused and not any(chr(code).isprintable() for code in refused)


def test_the_path_checks_in_one_pass_say_what_the_two_said():
    paths = ["knowledge/a.md", "knowledge/zz/a.md", "incidents/a.md", "tasks/x/task-a.md", "knowledge/Bad.md",
             "knowledge/ab/cd/a.md", "notes/a.md", "knowledge/.md", "knowledge/-a.md", "x" * 300]
    paths += [keys.path_of_key(k) for k in KEYS] + [keys.old_path_of_key(k) for k in KEYS]
    paths += [keys.path_of_key(k).replace("knowledge/", "incidents/") for k in KEYS]
    for path in paths:
        old = (None if not keys.is_record_candidate(path) else keys.path_problem(path))
        new = keys.served_path_problem(path)
        if not keys.is_record_candidate(path):
            assert new == keys.NOT_RECORD_PATH
        else:
            assert new == old, path
