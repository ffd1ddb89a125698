"""Issue 39 (helper h39c): served.load made cheaper for the records kyb writes gives the very answers
it gave — every field of the Record (their types too) and its `to_json()`, or the refusal's class and
`.reason` — against the functions it replaced, kept here verbatim as the oracle (served.load as of
aee8181): the closing `+++` found by a regex tried at every character, plain_toml slicing quoted
copies, from_front_matter asking _check_type of every list, the front-matter limit building its
list of texts, scan_fields listing its pairs before a rule is chosen, is_valid_key encoding every
key, bucket hashing every time. The corpus: records kyb writes (Record.to_markdown), test_served_fast's hostile records,
the secret corpora in every field, and mutations of kyb's files (escapes, dates, nan/inf, duplicate
keys, wrong types, CRLF, BOM, odd closing lines, huge bodies and front matter, bad tags)."""

from __future__ import annotations

import hashlib
import random
import re
import tomllib

import pytest

from kyb_cli.core.records import fields as fields_mod
from kyb_cli.core.records import keys, limits, model, served
from kyb_cli.core.records.model import (FIELD_TYPES, Record, RecordFormatError, _check_type,
                                        normalize_body)
from kyb_cli.core.records.secrets import rules_in, scan, scan_fields
from kyb_cli.core.records.validate import BODY_MAX_BYTES, secret_message, tag_problem, typed_field_problem
from tests.support.hostile import record_text
from tests.test_secret_gate import _secrets
from tests.test_served_fast import _record_file


# -- the oracle: the functions as they were at aee8181 ------------------------------------------------

_OLD_CLOSE_RE = re.compile(r"^\+\+\+[ \t]*\r?$", re.MULTILINE)
_OLD_STR = r'"[^"\\\x00-\x08\x0a-\x1f\x7f]*"'
_OLD_PLAIN_LINE = re.compile(
    rf'([A-Za-z0-9_-]+) = (?:({_OLD_STR})|\[((?:{_OLD_STR}(?:, {_OLD_STR})*)?)\]|(true|false))')
_OLD_ITEM = re.compile(_OLD_STR)


def _old_plain_toml(toml_text):
    data = {}
    if not toml_text.endswith("\n"):
        return None
    for line in toml_text[:-1].split("\n"):
        m = _OLD_PLAIN_LINE.fullmatch(line)
        if m is None or m[1] in data:
            return None
        name, text, items, flag = m.groups()
        if text is not None:
            data[name] = text[1:-1]
        elif items is not None:
            data[name] = [item[1:-1] for item in _OLD_ITEM.findall(items)]
        else:
            data[name] = flag == "true"
    return data


def _old_parse(text, *, path=None):
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordFormatError(f"not UTF-8 ({exc.reason})", path=path, line=1) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    first_nl = text.find("\n")
    first = text if first_nl < 0 else text[:first_nl]
    if first.rstrip("\r").rstrip() != "+++":
        raise RecordFormatError("missing front matter (file must start with +++)", path=path, line=1)
    start = first_nl + 1
    close = _OLD_CLOSE_RE.search(text, start)
    if close is None:
        raise RecordFormatError("unclosed front matter (+++)", path=path, line=1)
    toml_text = text[start:close.start()]
    try:
        data = _old_plain_toml(toml_text)
        if data is None:
            data = tomllib.loads(toml_text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise RecordFormatError(
            f"broken TOML in front matter: {exc.msg if hasattr(exc, 'msg') else exc}",
            path=path, line=(line + 1) if line else 2,
        ) from None
    rest = text[close.end():]
    if rest.startswith("\n"):
        rest = rest[1:]
    return _old_from_front_matter(data, normalize_body(rest), path=path)


def _old_from_front_matter(data, body, *, path=None):
    values = {}
    extra = {}
    for name, value in data.items():
        kind = FIELD_TYPES.get(name)
        if kind is None:
            extra[name] = value
        elif kind == "str" and value.__class__ is str:
            values[name] = value
        else:
            values[name] = _check_type(name, kind, value, path)
    for required in ("key", "title"):
        if required not in values:
            raise RecordFormatError(f"front matter has no '{required}'", path=path, line=2)
    return Record(body=body, extra=extra, **values)


def _old_size_problem(record, fields=None):
    for name in (limits.LIST_FIELDS if fields is None or len(fields) > limits.TAGS_MAX else ()):
        count = len(getattr(record, name, ()) or ())
        if count > limits.TAGS_MAX:
            return f"{name} has {count:,} entries; the limit is {limits.TAGS_MAX}"
    texts = [text for name, text in (fields_mod.stored_fields(record) if fields is None else fields)
             if name != "body" and isinstance(text, str)]
    if sum(map(len, texts)) * 4 <= limits.FRONT_MATTER_MAX_BYTES:
        return None
    size = sum(len(text.encode("utf-8", "surrogateescape")) for text in texts)
    if size > limits.FRONT_MATTER_MAX_BYTES:
        return f"front matter is {size:,} bytes; the limit is {limits.FRONT_MATTER_MAX_BYTES:,} (64 KiB)"
    return None


def _old_is_valid_key(key):
    return (0 < len(key.encode()) <= keys.KEY_MAX and re.fullmatch(r"[a-z0-9-]+", key) is not None
            and not key.startswith("-") and not key.endswith("-"))


def _old_bucket(key):
    return hashlib.sha1(key.encode()).hexdigest()[:2]


def _old_served_path_problem(path):
    key = keys._candidate_key(path)
    if key is None:
        return keys.NOT_RECORD_PATH
    if not _old_is_valid_key(key):
        return f"'{key}' is not a valid key ({keys.KEY_MESSAGE})"
    head, _slash, rest = path.partition("/")
    in_place = head == keys.KIND_DIRS[keys.kind_of_key(key)] and not (
        rest.count("/") and rest.partition("/")[0] != _old_bucket(key))
    if not in_place:
        return (f"the key '{key}' belongs at {keys.KIND_DIRS[keys.kind_of_key(key)]}/{_old_bucket(key)}/{key}.md, "
                f"not {path}")
    return None


def _old_scan_fields(fields):
    pairs = [(name, text) for name, text in fields if text]
    if not pairs:
        return None
    rules = rules_in("\n".join([text for _name, text in pairs]))
    if not rules:
        return None
    for name, text in pairs:
        found = next(scan(text, name, rules=rules), None)
        if found is not None:
            return found
    return None


def _old_protective_rules(record, decoded=False):
    body = record.body
    if not (decoded and len(body) * 4 <= BODY_MAX_BYTES):
        size = len(body.encode("utf-8"))
        if size > BODY_MAX_BYTES:
            return f"body is {size:,} bytes; the limit is {BODY_MAX_BYTES:,} (1 MiB)"
    fields = fields_mod.stored_fields(record)
    too_big = _old_size_problem(record, fields)
    if too_big is not None:
        return too_big
    found = _old_scan_fields(fields)
    if found is not None:
        return secret_message(found)
    bad_tag = tag_problem(record.tags)
    if bad_tag is not None:
        return f"tags: {bad_tag}"
    return typed_field_problem(record)


def _old_load(path, data):
    problem = _old_served_path_problem(path)
    if problem is not None:
        raise RecordFormatError(problem, path=path)
    record = _old_parse(data, path=path)
    key = path.rsplit("/", 1)[1][:-3]
    if record.key != key:
        raise RecordFormatError(f"the front matter says key = '{record.key}' but the file is {path} "
                                f"(key '{key}')", path=path)
    problem = _old_protective_rules(record, isinstance(data, bytes))
    if problem is not None:
        raise RecordFormatError(f"breaks a write rule: {problem}", path=path)
    return record


def _answer(load, path, data):
    """Everything a caller can see: each field with its type (repr tells 1 from True, nan is nan)
    and to_json, or the exception's class, `.reason` and message."""
    try:
        record = load(path, data)
    except Exception as exc:  # noqa: BLE001 - a crash must be the same crash
        return ("refused", type(exc).__name__, getattr(exc, "reason", None), str(exc))
    return ("served", repr(vars(record)), repr(record.to_json()))


def _same(path, data):
    old = _answer(_old_load, path, data)
    assert _answer(served.load, path, data) == old, (path, data[:3000] if data else data)
    return old[0] if old[0] == "served" else old[2]


# -- the corpus ----------------------------------------------------------------------------------------

SAMPLE_WORDS = ["port", "9090", "сервис", "очередь", "checkout", "deploy", "ingress", "Kafka", "таймаут",
                "svc-checkout.prod.internal", "helm", "a", "\u0130", "ß", "ё"]


def _written(rng: random.Random, n: int) -> Record:
    """A record as kyb writes one: the kind's fields, some lists, sometimes a hand-added field."""
    kind = rng.choice(["knowledge", "incident", "task"])
    key = {"knowledge": "", "incident": "inc-", "task": "task-"}[kind] + f"{n:06d}-note"

    def words(k=6):
        return " ".join(rng.choice(SAMPLE_WORDS) for _ in range(rng.randint(1, k)))
    record = Record(key=key, title=words(5), body="\n\n".join(words(30) for _ in range(rng.randint(0, 3))),
                    tags=[words(1) for _ in range(rng.randint(0, 4))],
                    refs=[f"https://example.invalid/{n}" for _ in range(rng.randint(0, 2))])
    if kind == "incident":
        record = record.copy(service=words(1), severity=rng.choice(["low", "high"]), status="open",
                             detection=words(), hosts=[f"node-{n % 7}"])
    elif kind == "task":
        record = record.copy(status=rng.choice(["open", "done"]), priority=rng.choice(["", "low"]),
                             due=rng.choice(["", "2026-07-22"]), hard=rng.random() < 0.3,
                             remind_days=rng.choice([None, 3]))
    elif rng.random() < 0.2:
        record = record.copy(review_by="2027-01-01", effective_at="2026-01-02T03:04:05Z")
    if rng.random() < 0.1:
        record = record.copy(extra={"owner": words(1)})
    return record


MUTATIONS = [
    lambda t: t.replace("\n", "\r\n"),  # CRLF
    lambda t: "\ufeff" + t,  # a BOM
    lambda t: t.replace('title = "', 'title = "a \\" quote \\u00e9 \\t ', 1),  # escapes: tomllib reads it
    lambda t: t.replace("+++\n", 'due = 2026-07-22\nreview_by = 2027-01-01\nd = 2026-01-01T10:00:00Z\n+++\n', 2)
    .replace('due = 2026-07-22\nreview_by = 2027-01-01\nd = 2026-01-01T10:00:00Z\n+++\n', "+++\n", 1),  # dates
    lambda t: t.replace("\n+++\n", '\nx = nan\ny = inf\nz = -inf\n+++\n', 1),  # nan and inf
    lambda t: t.replace("\n+++\n", '\ntitle = "twice"\n+++\n', 1),  # a duplicate key
    lambda t: t.replace('title = "', 'title = 1\nnote = "', 1),  # a wrong type
    lambda t: t.replace("\n+++\n", '\ntags = "one"\n+++\n', 1),
    lambda t: t.replace("\n+++\n", '\nhosts = [1, "a"]\nhard = "yes"\n+++\n', 1),
    lambda t: t.replace("\n+++\n", '\nremind_days = true\n+++\n', 1),
    lambda t: t.replace("\n+++\n", '\nremind_days = 7\nhard = true\n+++\n', 1),
    lambda t: t.replace("\n+++\n", '\n[verified]\nsource = "a"\nrev = "b"\n+++\n', 1),
    lambda t: t.replace("\n+++\n", '\n[[affected]]\nscope = "x"\nfrom = 1\nto = [1, 2]\n+++\n', 1),
    lambda t: t.replace("\n+++\n", "\n+++ \t\n", 1),  # a closing line with spaces and tabs
    lambda t: t.replace("\n+++\n", "\n+++\r\n", 1),
    lambda t: t.replace("\n+++\n", "\n+++x\n", 1),  # not a closing line: the next one, or none
    lambda t: t.replace("\n+++\n", "\n++\n", 1),
    lambda t: t.replace("+++\n", "+++  \n", 1),  # an opening line with spaces
    lambda t: t.replace("+++\n", "+++\r\n", 1),
    lambda t: t.split("\n", 1)[0],  # `+++` alone, no newline
    lambda t: "+++",
    lambda t: "+++\n+++",
    lambda t: "+++\n+++\n",
    lambda t: t.replace("\n+++\n", "\n+++", 1) if t.endswith("+++\n") else t + "\n+++",
    lambda t: t.replace(" = ", " =\t", 1),  # still TOML, not plain
    lambda t: t.replace('tags = ["', 'tags = [ "', 1),
    lambda t: t.replace('"]', '", ]', 1),
    lambda t: t.replace('"\n', "'\n", 2).replace(" = \"", " = '", 2),  # literal strings
    lambda t: t.replace("\n+++\n", '\nm = """two\nlines"""\n+++\n', 1),
    lambda t: t.replace("\n+++\n", "\n# a comment\n+++\n", 1),
    lambda t: t.replace("\n+++\n", '\nt = {a = "b"}\n+++\n', 1),
    lambda t: t.replace("\n+++\n", '\n"quoted key" = "v"\n+++\n', 1),
    lambda t: t.replace("\n+++\n", '\nx = "a\x7fb"\n+++\n', 1),  # a control character
    lambda t: t.replace("\n+++\n", '\nx = "a\tb"\n+++\n', 1),  # a tab: plain
    lambda t: t.replace("\n+++\n", '\nx = "\ud800"\n+++\n', 1),  # a lone surrogate (a str)
    lambda t: t.replace("\n+++\n", '\ntags = ["a\\nb", "c\\u2028d"]\n+++\n', 1),  # bad tags
    lambda t: t.replace("\n+++\n", "\ntags = [" + ", ".join(['"t"'] * 101) + "]\n+++\n", 1),
    lambda t: t.replace("\n+++\n", f'\nnote = "{"я" * 16400}"\n+++\n', 1),  # around the 64 KiB front matter
    lambda t: t.replace("\n+++\n", f'\nnote = "{"x" * 16300}"\n+++\n', 1),
    lambda t: t.replace("\n+++\n", f'\nnote = "{"x" * 66000}"\n+++\n', 1),
    lambda t: t + "я" * (BODY_MAX_BYTES // 2 + 3),  # around the 1 MiB body
    lambda t: t + "x" * (BODY_MAX_BYTES // 4 + 1),
    lambda t: t + "\n\n\n  \t\n",
    lambda t: t.replace("\n+++\n", "\n+++\n\n\n", 1),
    lambda t: t.replace('key = "', 'key = "x', 1),  # a key that is not the path's
    lambda t: t.replace('status = "open"', 'status = "urgent"', 1),
    lambda t: t.replace('severity = "', 'severity = "x', 1),
]


def _mutated(rng: random.Random, text: str, secrets_: list[str]) -> str:
    """One or two mutations of a file kyb wrote, or a secret in one of its values."""
    if rng.random() < 0.3:
        values = re.findall(r'= "([^"\n]*)"', text)
        secret = rng.choice(secrets_)
        if values and '"' not in secret and "\\" not in secret and "\n" not in secret:
            target = rng.choice(values)
            return text.replace(f'"{target}"', f'"{target} {secret}"', 1)
        return text + "\n" + secret + "\n"
    for _ in range(rng.randint(1, 2)):
        text = rng.choice(MUTATIONS)(text)
    return text


def _as_given(rng: random.Random, text: str):
    return text if rng.random() < 0.2 else text.encode("utf-8", "surrogatepass")


# -- the tests -------------------------------------------------------------------------------------------

def test_records_kyb_writes_are_served_as_they_were():
    rng = random.Random(39)
    answers = {}
    for n in range(600):
        record = _written(rng, n)
        text = record.to_markdown()
        for path in (keys.path_of_key(record.key), keys.old_path_of_key(record.key)):
            answer = _same(path, _as_given(rng, text))
            answers[answer] = answers.get(answer, 0) + 1
    assert answers.get("served", 0) > 1000, answers  # the plain case: kyb's own files


@pytest.mark.parametrize("seed", range(3))
def test_mutated_and_secret_holding_records_answer_as_they_did(seed):
    rng = random.Random(seed)
    secrets_ = _secrets(rng)
    answers = {}
    for n in range(400):
        record = _written(rng, n)
        text = _mutated(rng, record.to_markdown(), secrets_)
        answer = _same(keys.path_of_key(record.key), _as_given(rng, text))
        answers[answer.split(" (")[0][:40]] = answers.get(answer.split(" (")[0][:40], 0) + 1
    assert answers.get("served", 0) > 50 and len(answers) > 15, answers  # both, and many reasons


def test_hostile_records_answer_as_they_did():
    rng = random.Random(3939)
    secrets_ = _secrets(rng)
    for _ in range(800):
        _same(*_record_file(rng, secrets_))


def test_every_secret_in_every_field_is_refused_as_it_was():
    rng = random.Random(7)
    names = ["title", "service", "detection", "assignee", "owner"]
    refused = 0
    for secret in _secrets(rng):
        for name in names:
            fields = {name: f"see {secret} here"} if name != "title" else {}
            text = record_text("inc-1-x", title=f"see {secret}" if name == "title" else None,
                               body=rng.choice(["", secret]), tags=[rng.choice(["a", secret])], **fields)
            refused += _same(keys.path_of_key("inc-1-x"), text.encode("utf-8", "surrogatepass")) != "served"
    assert refused > 500


def test_paths_answer_as_they_did():
    text = record_text("a-key", body="text")
    for path in ["knowledge/a-key.md", keys.path_of_key("a-key"), "knowledge/zz/a-key.md", "tasks/a-key.md",
                 "knowledge/ab/cd/a-key.md", "notes/a-key.md", "knowledge/.md", "knowledge/-a.md",
                 "knowledge/" + "é" * 60 + ".md", "knowledge/\udcff.md", "knowledge/" + "a" * 101 + ".md"]:
        _same(path, text)


def test_the_closing_line_is_the_one_the_regex_found():
    for text in ["+++\n+++", "+++\n+++\n", "+++\nx\n+++ \r\n", "+++\nx\n+++\r\ny", "+++\n+++x\n+++\t\n",
                 "+++\n\n+++", "+++\n++\n", "+++\r\n+++\r\n", "+++", "++", "+++\n", "+++\n+++\r\r\n+++\n"]:
        for start in range(len(text) + 1):
            if start == 0 or text[start - 1] == "\n":
                old = _OLD_CLOSE_RE.search(text, start)
                assert model._closing_line(text, start) == (None if old is None else old.span())


def test_bucket_answers_as_the_old_bucket_for_each_key_in_turn():
    for key in ["a", "b", "a", "a", "inc-1", "", "é"]:
        assert keys.bucket(key) == _old_bucket(key)


def test_scan_fields_finds_what_it_found_from_a_list_or_a_generator():
    rng = random.Random(11)
    secrets_ = _secrets(rng)
    cases = [[], [("key", "")], [("body", ""), ("title", "")]]
    for _ in range(400):
        cases.append([(rng.choice(["title", "body", "tags", "owner"]), rng.choice(["", "word сервис", *secrets_]))
                      for _ in range(rng.randint(1, 5))])
    found = 0
    for fields in cases:
        old = _old_scan_fields(fields)
        assert scan_fields(fields) == old == scan_fields(iter(fields)) == scan_fields(tuple(fields))
        found += old is not None
    assert 100 < found < len(cases) - 30  # findings and clean lists both
