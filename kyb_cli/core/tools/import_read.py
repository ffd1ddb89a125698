"""Readers for `kyb import`: Markdown as people wrote it, and the JSONL/JSON/CSV `kyb export` writes.

Each reader turns one source into `Item`s: a Record with the lifecycle state it should end in
(active, or retracted/archived with a reason), or the reason it is skipped. Keys are settled later
(tools/importer.py), because stable, distinct keys need the whole batch and the previous import.

Markdown: front matter in TOML between `+++` lines or in YAML between `---` lines (PyYAML's
`safe_load`: plain data only, no tags that build objects — https://pyyaml.org/wiki/PyYAMLDocumentation);
without a title there, the first heading, else the file name. ADR status lines (`Status: Accepted`,
`* Status: superseded by [ADR-0005](0005-x.md)`, or a `## Status` heading followed by the status)
map to lifecycle: accepted/proposed stay active; superseded/deprecated/rejected are retracted with
the status as the reason, and a "superseded by" link is kept as a ref.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
import tomllib
from dataclasses import dataclass, field
from typing import Any

from kyb_cli.core.records.model import FIELD_TYPES, KIND_FIELDS, VERIFIED_FIELDS, Record

RETIRED_STATUSES = ("superseded", "deprecated", "rejected")
EXPORT_ONLY = ("kind", "state", "sha", "committed_at", "retracted_sha", "retracted_at", "archived_sha",
               "archived_at", "extra", "body", "key", "title")


@dataclass
class Item:
    """One record to import, or one source that is skipped (`skip` says why)."""

    source: str  # the path as shown in the reply (and the row number for JSONL/JSON/CSV)
    rel: str = ""  # path relative to the folder imported: what the key and the manifest use
    root: str | None = None  # the folder imported (absolute) for files; None for rows
    record: Record | None = None
    state: str = "active"  # active | retracted | archived
    reason: str = ""  # why it is retracted
    key_given: bool = False  # the key came from the source itself (front matter, a row)
    links: list[str] = field(default_factory=list)  # "superseded by" targets, resolved to keys later
    skip: str | None = None


# -- Markdown ---------------------------------------------------------------------------------------

_FENCE = {"+++": "toml", "---": "yaml"}
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_STATUS_LINE = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)?status(?:\*\*|__)?[ \t]*:(?:\*\*|__)?[ \t]*(.+?)[ \t]*$",
                          re.IGNORECASE)
_STATUS_HEADING = re.compile(r"^#{1,6}[ \t]+status[ \t#]*$", re.IGNORECASE)
_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)[^)]*\)")


def read_markdown(text: str, source: str, rel: str, kind: str) -> Item:
    """One Markdown file as an Item (the key is filled in by the importer unless front matter has one)."""
    item = Item(source=source, rel=rel)
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        meta, body = split_front_matter(text)
    except ValueError as exc:
        item.skip = str(exc)
        return item
    title = _text(meta.pop("title", None))
    if not title:
        title, body = _title_from_body(body, rel)
    key = _text(meta.pop("key", None))
    tags = _list(meta.pop("tags", None))
    refs = _list(meta.pop("refs", None))
    status_text = _text(meta.pop("status", None)) if kind == "knowledge" else ""
    if kind == "knowledge" and not status_text:
        status_text = status_line(body)
    values: dict[str, Any] = {}
    if kind != "knowledge":
        for name in KIND_FIELDS[kind]:
            if name in meta:
                values[name] = meta.pop(name)
    for name in list(meta):
        if name in FIELD_TYPES:  # another kind's field: it would break this kind's rules
            meta.pop(name)
    record = Record(key=key or "", title=title, body=body.strip("\n").rstrip(), tags=tags, refs=refs,
                    extra=_toml_safe(meta))
    if not _set_typed(item, record, values):
        return item
    item.record = record
    item.key_given = bool(key)
    if status_text:
        word = status_text.split()[0].strip("*_`.,;:").lower() if status_text.split() else ""
        if word in RETIRED_STATUSES:
            item.state = "retracted"
            item.reason = f"ADR status: {' '.join(status_text.split())}"
            if word == "superseded":
                # the link may be in the status, or (status: Superseded) in the body's own line
                item.links = superseded_by(status_text) or superseded_by(_superseded_line(body))
    return item


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(front matter as a dict, the rest). ValueError (the skip reason) when it cannot be read."""
    first, _, rest = text.partition("\n")
    fence = first.rstrip("\r").rstrip()
    if fence not in _FENCE:
        return {}, text
    lines = rest.split("\n")
    for n, line in enumerate(lines):
        if line.rstrip("\r").rstrip() == fence:
            head = "\n".join(line.removesuffix("\r") for line in lines[:n])  # CRLF front matter too
            body = "\n".join(lines[n + 1:])
            break
    else:
        if fence == "---":
            return {}, text  # a horizontal rule, not front matter
        raise ValueError("front matter opened with +++ is never closed")
    try:
        if _FENCE[fence] == "toml":
            data = tomllib.loads(head)
        else:
            from kyb_cli.core.records.limits import yaml_load

            data = yaml_load(head) if head.strip() else {}
    except Exception as exc:  # noqa: BLE001 - any parse error is the skip reason
        what = "TOML" if fence == "+++" else "YAML"
        detail = " ".join(str(exc).split())[:160]
        raise ValueError(f"front matter is not valid {what}: {detail}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError("front matter is not a table of fields")
    return {str(k): v for k, v in data.items()}, body


def first_heading(body: str) -> str:
    in_fence = False
    for line in body.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        m = None if in_fence else _HEADING.match(line.rstrip())
        if m:
            return _unmark(m.group(2))
    return ""


def status_line(body: str) -> str:
    """The ADR status written in the body, or ''."""
    lines = body.splitlines()
    for n, line in enumerate(lines):
        m = _STATUS_LINE.match(line)
        if m:
            return m.group(1)
        if _STATUS_HEADING.match(line.strip()):
            for nxt in lines[n + 1:n + 6]:
                if nxt.strip():
                    return "" if nxt.lstrip().startswith("#") else nxt.strip().lstrip("-*+ ").strip()
    return ""


def superseded_by(status: str) -> list[str]:
    """Link targets after "superseded by": Markdown link targets, else the words that follow."""
    m = re.search(r"superseded\s+by\s*:?\s*(.+)$", status, re.IGNORECASE)
    if not m:
        return []
    tail = m.group(1)
    links = [target for _label, target in _LINK.findall(tail)]
    if links:
        return links
    word = tail.split()[0].strip(".,;:()[]`*_") if tail.split() else ""
    return [word] if word else []


def _title_from_body(body: str, rel: str) -> tuple[str, str]:
    """A file without a front-matter title: (its title, its body). The title is the first heading, else
    (a .txt) an obvious first line, else the file name. A title taken from the body's first line leaves
    the body, so a snippet or the console never shows it twice; a heading further down stays (it is a
    section of the text)."""
    lines = body.splitlines()
    top = next((n for n, line in enumerate(lines) if line.strip()), None)
    heading = first_heading(body)
    if heading:
        if top is not None and _HEADING.match(lines[top].rstrip()) and first_heading(lines[top]) == heading:
            return heading, "\n".join(lines[top + 1:])
        return heading, body
    line = _first_line_title(body) if rel.lower().endswith(".txt") else ""
    if line and top is not None:
        rest = lines[top + 1:]
        if rest and rest[0].strip() and set(rest[0].strip()) <= set("=-"):
            rest = rest[1:]  # its underline goes with it
        return line, "\n".join(rest)
    return _file_title(rel), body


def _first_line_title(body: str) -> str:
    """A plain-text note's obvious title: a short first line standing alone (a blank line, an
    underline or the end after it), not a sentence that runs on; '' when there is none."""
    lines = body.strip("\n").splitlines()
    if not lines:
        return ""
    first = lines[0].strip()
    after = lines[1].strip() if len(lines) > 1 else ""
    alone = not after or set(after) <= set("=-")
    one_sentence = first.endswith(".") and not re.search(r"[.!?]\s", first[:-1])  # "Renew the cert."
    if first and len(first) <= 80 and alone and (one_sentence or not first.endswith((".", ",", ";", ":"))):
        return first.removesuffix(".") if one_sentence and not first.endswith("..") else first
    return ""


def _superseded_line(body: str) -> str:
    """The body's first line saying "superseded by …" ('' when none)."""
    for line in body.splitlines():
        if re.search(r"superseded\s+by", line, re.IGNORECASE):
            return line.strip()
    return ""


def _unmark(text: str) -> str:
    text = _LINK.sub(lambda m: m.group(1), text)
    return text.replace("`", "").replace("**", "").strip()


def _file_title(rel: str) -> str:
    name = rel.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, bool):  # JSON's spelling, never Python's repr (`True`, `{'a': 1}`)
        return "true" if value else "false"
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value).strip()


def _list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, (list, tuple)):
        return [_text(v) for v in value if _text(v)]
    return [_text(value)]


def _typed(name: str, value: Any) -> Any:
    kind = FIELD_TYPES[name]
    if kind == "list":
        return _list(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"'{name}' must be true or false")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"'{name}' must be a whole number")
        return value
    if kind == "affected":
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise ValueError("'affected' must be a list of {scope, from, to} tables")
        return [{str(k): _text(v) for k, v in w.items()} for w in value]
    if kind == "verified":  # the `[verified]` table export writes; who/when/current a read adds go
        if not isinstance(value, dict):
            raise ValueError("'verified' must be a table {source, rev, note, content}")
        return {name: _text(value[name]) for name in VERIFIED_FIELDS if _text(value.get(name))}
    return _text(value)


def _toml_safe(value: Any) -> Any:
    """Front matter values kyb can store and index: None goes; dates become their ISO text (a TOML
    date in front matter is not JSON, which the index keeps); anything else unusual becomes text."""
    if isinstance(value, dict):
        return {str(k): _toml_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple, set)):
        return [_toml_safe(v) for v in value if v is not None]
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, (str, bool, int, float)):
        return value
    return str(value)


# -- rows (what `kyb export` writes) ------------------------------------------------------------------

def read_rows(text: str, source: str, fmt: str) -> list[Item]:
    """JSONL, JSON (a list of rows) or CSV as `kyb export` writes them, one Item per row.

    A row that cannot be read is skipped with its line number and the reason; the other rows import.
    JSONL lines end at "\n" only (U+2028, U+2029, U+0085 and a lone CR are text inside a row); CSV
    is read as the csv module asks (newline="", so a CR in a quoted field survives) with the field
    size limit raised to the file's size (a body may be longer than the module's 128 KiB default)."""
    from kyb_cli.core.records.limits import loads_json

    if fmt == "json":
        try:
            data = loads_json(text)
            if not isinstance(data, list):
                raise ValueError("a JSON import is a list of rows, as `kyb export --format json` writes")
        except ValueError as exc:
            return [Item(source=source, skip=f"not JSON: {_one_line(exc)}")]
        return [row_item(row, f"{source}:{n}") for n, row in enumerate(data, 1)]
    if fmt == "jsonl":
        items = []
        for n, line in enumerate(text.split("\n"), 1):
            if not line.strip():
                continue
            try:
                row = loads_json(line)
            except ValueError as exc:
                items.append(Item(source=f"{source}:{n}", skip=f"not JSONL: {_one_line(exc)}"))
                continue
            items.append(row_item(row, f"{source}:{n}"))
        return items
    return _read_csv(text, source)


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())[:160]


def _read_csv(text: str, source: str) -> list[Item]:
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))
    try:
        reader = csv.reader(io.StringIO(text, newline=""))
        items: list[Item] = []
        header: list[str] | None = None
        while True:
            start = reader.line_num + 1
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                if header is None:
                    return [Item(source=source, skip=f"not CSV: {_one_line(exc)}")]
                items.append(Item(source=f"{source}:{start}", skip=f"not CSV: {_one_line(exc)}"))
                continue
            if header is None:
                header = fields
                continue
            if not any(fields):
                continue
            if len(fields) > len(header):
                items.append(Item(source=f"{source}:{start}",
                                  skip=f"not CSV: {len(fields)} fields where the header names {len(header)}"))
                continue
            items.append(row_item(_csv_row(dict(zip(header, fields))), f"{source}:{start}"))
        return items
    finally:
        csv.field_size_limit(limit)


def _csv_row(r: dict[str, str | None]) -> dict[str, Any]:
    row: dict[str, Any] = {k: v for k, v in r.items() if k and v not in (None, "")}
    if "tags" in row:
        row["tags"] = [t for t in row["tags"].split(",") if t]
    return row


def _set_typed(item: Item, record: Record, values: dict[str, Any]) -> bool:
    """Set each kind field on `record`, typed; a value that does not fit skips the item with the
    reason (False)."""
    for name, value in values.items():
        try:
            setattr(record, name, _typed(name, value))
        except ValueError as exc:
            item.skip = str(exc)
            return False
    return True


def row_item(row: Any, source: str) -> Item:
    item = Item(source=source)
    if not isinstance(row, dict):
        item.skip = "a row is a JSON object"
        return item
    key, title = _text(row.get("key")), _text(row.get("title"))
    if not key:
        item.skip = "the row has no key"
        return item
    record = Record(key=key, title=title, body=_text(row.get("body")) if row.get("body") is not None else "")
    extra = row.get("extra")
    if isinstance(extra, dict):
        record.extra = _toml_safe(extra)
    values = {name: value for name, value in row.items()
              if name not in EXPORT_ONLY and name in FIELD_TYPES and value not in (None, "", [])}
    if not _set_typed(item, record, values):
        return item
    item.record = record
    item.key_given = True
    state = _text(row.get("state")) or "active"
    if state not in ("active", "retracted", "archived"):
        item.skip = f"unknown state '{state}'"
        return item
    item.state = state
    if state == "retracted":
        item.reason = _text(row.get("reason")) or "retracted in the store it was exported from"
    return item
