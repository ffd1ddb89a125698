"""One record = one Markdown file with TOML front matter between `+++` lines.

    +++
    key = "checkout-write-path"
    title = "Checkout write path"
    tags = ["infra", "checkout"]
    +++

    Checkout writes go through svc-checkout on node-3, port 9090.

The kind follows from the key prefix (`inc-` incident, `task-` task, anything else knowledge) and so
does the path (`incidents/`, `tasks/`, `knowledge/`). There is no `updated_at`: write time is the
commit time Git already keeps. Empty fields are not written, so files stay short enough to edit by hand.
Front matter keys kyb does not know are kept as they are (`extra`) so a hand-added field survives.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from typing import Any

from kyb_cli.core.errors import StoreError
from kyb_cli.core.records.keys import kind_of_key, path_of_key

# Front matter order: identity, kind fields, deadline fields, then tags and refs.
# Each entry: name -> type tag ("str", "list", "affected", "bool", "int", "verified").
FIELD_TYPES: dict[str, str] = {
    "key": "str",
    "title": "str",
    "service": "str",
    "hosts": "list",
    "severity": "str",
    "status": "str",
    "priority": "str",
    "blocked_reason": "str",
    "assignee": "str",
    "parent_task": "str",
    "blocked_by": "list",
    "knowledge": "list",
    "resolution": "str",
    "detection": "str",
    "affected": "affected",
    "started_at": "str",
    "detected_at": "str",
    "mitigated_at": "str",
    "resolved_at": "str",
    "due": "str",
    "hard": "bool",
    "remind_days": "int",
    "expected": "str",
    "waits_on": "str",
    "effective_at": "str",
    "review_by": "str",
    "tags": "list",
    "refs": "list",
    "verified": "verified",
}

VERIFIED_FIELDS = ("source", "rev", "note", "content", "by", "at")  # the `[verified]` table (kyb verify;
# `by`/`at` only on an imported verification: who verified it and when, kept from the export)

INCIDENT_FIELDS = (
    "service", "hosts", "severity", "status", "knowledge", "resolution", "detection", "affected",
    "started_at", "detected_at", "mitigated_at", "resolved_at",
)
TASK_FIELDS = (
    "status", "priority", "blocked_reason", "assignee", "parent_task", "blocked_by", "knowledge", "resolution",
    "resolved_at", "due", "hard", "remind_days", "expected", "waits_on",
)
KIND_FIELDS = {"knowledge": ("review_by", "verified"), "incident": INCIDENT_FIELDS, "task": TASK_FIELDS}

_CLOSE_RE = re.compile(r"^\+\+\+[ \t]*\r?$", re.MULTILINE)  # the line that closes the front matter
_CLOSE_TAIL = re.compile(r"[ \t]*\r?$", re.MULTILINE)  # _CLOSE_RE after its `+++`


def _closing_line(text: str, start: int) -> tuple[int, int] | None:
    """Where _CLOSE_RE.search(text, start) matches (begins, ends), or None: each line from `start`
    that begins with `+++` is found with str.find in C, then only its rest is matched, instead of
    trying the pattern at every character of the front matter (issue 39)."""
    if start == 0:  # the text has no newline: its one line may close it
        found = _CLOSE_RE.search(text)
        return None if found is None else found.span()
    at = start - 1  # text[start - 1] is the newline that ends the opening line
    while True:
        at = text.find("\n+++", at)
        if at < 0:
            return None
        tail = _CLOSE_TAIL.match(text, at + 4)
        if tail is not None:
            return at + 1, tail.end()
        at += 1


def normalize_body(body: str) -> str:
    """Bodies are stored without leading blank lines or trailing whitespace (as the original did)."""
    return body.lstrip("\r\n").rstrip()


@dataclass
class Record:
    """A record as kyb reads and writes it; `kind` is derived from the key, never stored."""

    key: str
    title: str
    body: str = ""
    service: str = ""
    hosts: list[str] = field(default_factory=list)
    severity: str = ""
    status: str = ""
    priority: str = ""
    blocked_reason: str = ""
    assignee: str = ""
    parent_task: str = ""
    blocked_by: list[str] = field(default_factory=list)
    knowledge: list[str] = field(default_factory=list)
    resolution: str = ""
    detection: str = ""
    affected: list[dict[str, str]] = field(default_factory=list)
    started_at: str = ""
    detected_at: str = ""
    mitigated_at: str = ""
    resolved_at: str = ""
    due: str = ""
    hard: bool = False
    remind_days: int | None = None
    expected: str = ""
    waits_on: str = ""
    effective_at: str = ""  # when the fact became true in the world (event time); write time is the commit's
    review_by: str = ""
    tags: list[str] = field(default_factory=list)
    refs: list[str] = field(default_factory=list)
    verified: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return kind_of_key(self.key)

    @property
    def path(self) -> str:
        return path_of_key(self.key)

    def copy(self, **changes: Any) -> "Record":
        return replace(self, **changes)

    # -- serialisation -------------------------------------------------------------------------

    def front_matter(self) -> dict[str, Any]:
        """The fields that are written, in order, empty ones left out."""
        out: dict[str, Any] = {}
        for name in FIELD_TYPES:
            value = getattr(self, name)
            if name in ("key", "title"):
                out[name] = value
            elif value in ("", [], None, False) or value == {}:
                continue
            else:
                out[name] = value
        for name, value in self.extra.items():
            if name not in out:
                out[name] = value
        return out

    def to_markdown(self) -> str:
        """The file text: `+++`, TOML, `+++`, a blank line and the body."""
        toml_text = dump_toml(self.front_matter())
        body = normalize_body(self.body)
        return "+++\n" + toml_text + "+++\n" + ("\n" + body + "\n" if body else "")

    def same_content(self, other: "Record") -> bool:
        """True when writing `other` over `self` would change nothing that is stored."""
        return self.to_markdown() == other.to_markdown()

    def to_json(self) -> dict[str, Any]:
        """The record as JSON for replies: key, title, kind, its kind's fields, tags, refs, body."""
        out: dict[str, Any] = {"key": self.key, "title": self.title, "kind": self.kind}
        for name in KIND_FIELDS[self.kind]:
            value = getattr(self, name)
            if name == "remind_days" and value is None:
                continue
            if name == "verified":  # the stored table; reads replace it with who/when/current
                value = dict(value) if value else None
            out[name] = value
        if self.effective_at:
            out["effective_at"] = self.effective_at
        out["tags"] = list(self.tags)
        out["refs"] = list(self.refs)
        if self.extra:
            out["extra"] = json_ready(self.extra)
        out["body"] = self.body
        return out


def json_ready(value: Any) -> Any:
    """Hand-added front matter as JSON can say it: a TOML date, time or date-time (tomllib gives
    `datetime` objects; `d = 2026-01-01` in a peer's record) as its ISO 8601 text, and TOML's `nan`
    and `inf` (JSON has neither: `NaN` breaks a strict parser) as text, at any depth.
    Before, one such record failed every JSON answer that held it and a fresh clone's whole
    snapshot (`TypeError: Object of type date is not JSON serializable`). The file keeps the TOML
    value: a rewrite writes `extra` as it was read."""
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_ready(v) for v in value]
    if isinstance(value, float):
        return value if value - value == 0 else repr(value)  # TOML's nan and inf: JSON has neither
    isoformat = getattr(value, "isoformat", None)
    return isoformat() if isoformat is not None and not isinstance(value, (str, int)) else value


def content_digest(title: str, body: str) -> str:
    """The digest `[verified].content` keeps: title and body only, so a tag change keeps a
    verification current and any change of the text makes it not current."""
    import hashlib

    text = " ".join(title.split()) + "\n\n" + normalize_body(body)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
INLINE_WIDTH = 100


def dump_toml(data: dict[str, Any]) -> str:
    """TOML for front matter, in `data`'s order, easy to edit by hand.

    Lists of strings that fit in one line are written inline (`tags = ["infra", "checkout"]`) rather
    than one item per line; tables (hand-added `[sections]`) come last, as TOML requires.
    Strings are always quoted and escaped on one line, so no front matter line can read as `+++`.
    """
    import tomli_w  # only writers pay for it

    lines: list[str] = []
    tables: dict[str, Any] = {}
    for name, value in data.items():
        if isinstance(value, dict):
            tables[name] = value
            continue
        if (isinstance(value, list) and all(isinstance(v, str) for v in value)
                and _BARE_KEY.fullmatch(name)):
            inline = f"{name} = [" + ", ".join(tomli_w.dumps({"v": v})[4:].rstrip("\n") for v in value) + "]"
            if len(inline) <= INLINE_WIDTH:
                lines.append(inline + "\n")
                continue
        lines.append(tomli_w.dumps({name: value}))
    text = "".join(lines)
    if tables:
        text += ("\n" if text else "") + tomli_w.dumps(tables)
    return text


_CHARS = r'[^"\\\x00-\x08\x0a-\x1f\x7f]*'  # a basic string's text with no escape and no control character
_STR = rf'"{_CHARS}"'
# the string's text and each item's are groups: no quoted copy made, then sliced (issue 39)
_PLAIN_LINE = re.compile(rf'([A-Za-z0-9_-]+) = (?:"({_CHARS})"|\[((?:{_STR}(?:, {_STR})*)?)\]|(true|false))')
_ITEM = re.compile(rf'"({_CHARS})"')


def plain_toml(toml_text: str) -> dict[str, Any] | None:
    """What tomllib.loads gives for front matter as kyb writes it — each line `name = "text"`,
    `name = ["a", "b"]` or `name = true`, no escape, no control character, no name twice — in a
    quarter of tomllib's time (issue 39: a big snapshot parses every record); None for anything
    else, which tomllib then reads (and reports)."""
    data: dict[str, Any] = {}
    if not toml_text.endswith("\n"):
        return None
    fullmatch = _PLAIN_LINE.fullmatch
    for line in toml_text[:-1].split("\n"):
        m = fullmatch(line)
        if m is None:
            return None
        name, text, items, flag = m.groups()
        if name in data:
            return None
        if text is not None:
            data[name] = text
        elif items is not None:
            data[name] = _ITEM.findall(items)
        else:
            data[name] = flag == "true"
    return data


class RecordFormatError(StoreError):
    """A file that is not a readable record (bad front matter, wrong types)."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        super().__init__(where + message, path=path, line=line)
        self.path = path
        self.line = line
        self.reason = message


def parse(text: str | bytes, *, path: str | None = None) -> Record:
    """Read a record file; raises RecordFormatError with a line number where it can."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RecordFormatError(f"not UTF-8 ({exc.reason})", path=path, line=1) from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if text.startswith("+++\n"):  # as kyb writes it
        start = 4
    else:
        first_nl = text.find("\n")
        first = text if first_nl < 0 else text[:first_nl]
        if first.rstrip("\r").rstrip() != "+++":
            raise RecordFormatError("missing front matter (file must start with +++)", path=path, line=1)
        start = first_nl + 1
    close = _closing_line(text, start)
    if close is None:
        raise RecordFormatError("unclosed front matter (+++)", path=path, line=1)
    toml_text = text[start:close[0]]
    try:
        data = plain_toml(toml_text)
        if data is None:
            data = tomllib.loads(toml_text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None)
        raise RecordFormatError(
            f"broken TOML in front matter: {exc.msg if hasattr(exc, 'msg') else exc}",
            path=path, line=(line + 1) if line else 2,
        ) from None
    body_start = close[1] + text.startswith("\n", close[1])  # the newline after `+++`, then the body
    return from_front_matter(data, normalize_body(text[body_start:]), path=path)


def from_front_matter(data: dict[str, Any], body: str, *, path: str | None = None) -> Record:
    """Build a Record from parsed TOML, checking each known field's type."""
    values: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    kind_of = FIELD_TYPES.get
    for name, value in data.items():
        kind = kind_of(name)
        if kind == "str" and value.__class__ is str:  # the commonest first
            values[name] = value  # what _check_type gives a string (every record a snapshot reads)
        elif kind is None:
            extra[name] = value
        elif kind == "list" and value.__class__ is list and all([v.__class__ is str for v in value]):
            values[name] = list(value)  # what _check_type gives a list of strings (tags, refs)
        else:
            values[name] = _check_type(name, kind, value, path)
    for required in ("key", "title"):
        if required not in values:
            raise RecordFormatError(f"front matter has no '{required}'", path=path, line=2)
    return Record(body=body, extra=extra, **values)


def _check_type(name: str, kind: str, value: Any, path: str | None) -> Any:
    def bad(expected: str) -> RecordFormatError:
        return RecordFormatError(f"'{name}' must be {expected}, got {type(value).__name__}", path=path)

    if kind == "str":
        if not isinstance(value, str):
            # TOML dates are friendly to type by hand; keep them as their ISO text.
            if hasattr(value, "isoformat") and name in ("due", "expected", "started_at", "detected_at",
                                                          "mitigated_at", "resolved_at", "review_by"):
                return value.isoformat()
            raise bad("a string")
        return value
    if kind == "list":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise bad("a list of strings")
        return list(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise bad("a whole number")
        return value
    if kind == "verified":
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise bad("a table of strings (source, rev, note)")
        return {str(k): v for k, v in value.items()}
    if kind == "affected":
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise bad("a list of {scope, from, to} tables")
        return [{str(k): str(v) for k, v in item.items()} for item in value]
    raise AssertionError(kind)


def record_field_names() -> tuple[str, ...]:
    return tuple(f.name for f in fields(Record))
