"""Deadlines: which open tasks are overdue or due soon, on the reader's calendar.

A task's date is `due`, else its provisional `expected` date (which `waits_on` something). A task is
listed when its date has passed (overdue) or falls within its reminder window: `remind_days` days,
default DEFAULT_REMIND_DAYS. Order: overdue first, hard first within each group, then by date, then
key. Only live tasks count (open, in_progress, blocked); finished work is archived and never nags.

Read from the store's working tree (`tasks/*.md`, which holds only live tasks), so the block after a
query costs a directory listing and no Git: it never imports pygit2.
"""

from __future__ import annotations

import re
from kyb_cli.core.timestamps import date  # not datetime.py (timestamps.py)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`
    from typing import Any, Iterable

from kyb_cli.core.errors import StoreError

if TYPE_CHECKING:
    from kyb_cli.core.records.model import Record

DEFAULT_REMIND_DAYS = 3
BLOCK_SIZE = 5
LIVE = ("open", "in_progress", "blocked", "")


def switched_off() -> bool:
    """KYB_DEADLINES=off (or 0, false, no): no deadlines block after answers, on any door."""
    from kyb_cli.core.settings import env_off

    return env_off("KYB_DEADLINES")


# A front matter line that sets a date (`due = …`, `expected = …`, bare or quoted key). Tasks without
# one cannot be due, so the block after every query skips parsing them (most tasks have no date).
# Compiled on first use (re's cache): a store whose tasks never say due/expected never pays for it.
_DATED = rb'^[ \t]*["\']?(?:due|expected)["\']?[ \t]*='


def _keep(name: str) -> bool:
    return name.startswith("task-") and name.endswith(".md")


def _undated(data: bytes) -> bool:
    """No `due`/`expected` line: the substring test first (memchr-fast: most tasks have neither word)."""
    return (b"due" not in data and b"expected" not in data) or not re.search(_DATED, data, re.MULTILINE)


def dated_tasks(store_or_path: Any) -> list[Record]:
    """Tasks in the store's working tree that carry a date; files with no `due`/`expected` line are
    not even parsed (the block after every query stays cheap). Read without following links
    (canon/nofollow.py) and through the key authority: a link, a file that does not parse or breaks
    a write rule, or a file whose key is not its name is skipped, never shown."""
    from kyb_cli.core.kinds.undated import not_undated

    global _PARSED
    root = getattr(store_or_path, "path", store_or_path)  # a str or a Path: os calls take both (issue 38)
    out: list[Record] = []
    files = not_undated(root, _keep, _undated)  # undated files skipped by their stat: kinds/undated.py
    parsed = _PARSED
    if files is not None and files is parsed[0]:  # the very files a door's watch vouched for last time
        return list(parsed[1])
    if files is None:
        from kyb_cli.core.canon.nofollow import read_files

        files = read_files(root, "tasks", _keep, buckets=True)  # fanned out, or the old flat shape
    for name, data in files.items():
        path = f"tasks/{name}"
        if _undated(data):
            continue
        # only for a dated task: the record rules (secrets included) cost a query ~15 ms to import
        from kyb_cli.core.records.model import RecordFormatError
        from kyb_cli.core.records.served import load

        try:
            out.append(load(path, data))
        except (OSError, RecordFormatError, StoreError):
            continue
    if files is not None:
        _PARSED = (files, tuple(out))
    return out


# The files not_undated answered last and their records: a door whose watch saw no change to tasks/
# gets the same dict again (kinds/tasks_watch.py), and its dated tasks are not parsed again.
_PARSED: tuple = (None, ())


def deadline_of(record: Record, today: date) -> dict[str, Any] | None:
    """The deadline item for a task, or None when it has no date or is not due yet."""
    if record.kind != "task" or record.status not in LIVE:
        return None
    text = record.due or record.expected
    if not text:
        return None
    try:
        when = date.fromisoformat(text)
    except ValueError:
        return None
    window = record.remind_days if record.remind_days is not None else DEFAULT_REMIND_DAYS
    days_left = (when - today).days
    if days_left > window:
        return None
    item: dict[str, Any] = {
        "key": record.key,
        "title": record.title,
        "status": record.status or "open",
        "date": text,
        "provisional": not record.due,
        "hard": bool(record.hard),
        "overdue": days_left < 0,
        "days_left": days_left,
        "remind_days": window,
    }
    if record.waits_on and not record.due:
        item["waits_on"] = record.waits_on
    if record.assignee:
        item["assignee"] = record.assignee
    if record.priority:
        item["priority"] = record.priority
    return item


def deadlines(records: Iterable[Record], today: date) -> list[dict[str, Any]]:
    """Every due or overdue open task, in block order."""
    items = [item for r in records if (item := deadline_of(r, today)) is not None]
    items.sort(key=lambda i: (not i["overdue"], not i["hard"], i["date"], i["key"]))
    return items


def block(records: Iterable[Record], today: date, size: int = BLOCK_SIZE) -> dict[str, Any]:
    """The deadlines block: up to `size` items and how many more there are."""
    items = deadlines(records, today)
    return {"today": today.isoformat(), "tasks": items[:size], "more": max(0, len(items) - size)}


def describe(item: dict[str, Any]) -> str:
    """`overdue 3d`, `due today`, `due in 2d` (with `expected` for provisional dates)."""
    word = "expected" if item["provisional"] else "due"
    n = item["days_left"]
    if n < 0:
        return f"overdue {-n}d ({word} {item['date']})"
    if n == 0:
        return f"{word} today ({item['date']})"
    return f"{word} in {n}d ({item['date']})"


def failing(items: list[dict[str, Any]], fail_on: str) -> list[dict[str, Any]]:
    """Items that make `kyb deadlines --fail-on` fail: `overdue` any overdue, `hard` overdue hard ones."""
    if fail_on == "overdue":
        return [i for i in items if i["overdue"]]
    if fail_on == "hard":
        return [i for i in items if i["overdue"] and i["hard"]]
    return []
