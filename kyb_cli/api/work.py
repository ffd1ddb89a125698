"""Incidents and tasks (the two work kinds) and their deadlines.

Parameters carry the operation table's names (`parent`, `started`, `detected`: kyb_cli/api/operations.py),
so a Python caller and a door caller speak one vocabulary; the core's own names stay inside. Defaults are
the core functions' (kyb_cli.core.kinds.*), so `help()` shows what a call takes; `KEEP` stands for "not given: keep the stored value" without importing core here.
"""

from __future__ import annotations

try:  # datetime's C half, not datetime.py (~1.2 ms of a `kyb query`: core/timestamps.py says why)
    from _datetime import date
except ImportError:
    from datetime import date

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any

# The most rows `kyb tasks` / `kyb incidents` answer; more is a usage error in every door
# (the core's rule, kyb_cli.core.kinds.lifecycle.LISTING_MAX_LIMIT; a test keeps them equal).
LISTING_MAX_LIMIT = 200


from kyb_cli.core.markers import KEEP  # noqa: E402 - the one marker, a leaf module (no core load)


def write_incident(store, attribution, *, key: str, title: str, body: str = "", service: str = "",
                   severity: str = "", status: str = "open", hosts: list[str] | None = None,
                   knowledge: list[str] | None = None, resolution: str = "", detection: str = "",
                   affected: list[dict[str, str]] | None = None, started: str = "",
                   detected: str = "", tags: Any = KEEP, refs: list[str] | None = None,
                   effective_at: str = "") -> dict[str, Any]:
    """Open or update the incident report `key` (`inc-…`) wholesale, as `kyb incident` does.

    `tags` left as KEEP keeps the stored tags ([] clears them); a resolved or closed status archives
    the report in a second commit. `affected` is a list of {scope, from, to} (a JSON text is read by the handler, api.handle).
    Returns the write reply: `{changed, key}` and, when changed, `action` (created|updated|archived),
    `sha`, and as they apply `archived`, `archive_sha`, `unknown_knowledge`, `hints`, `open_followups`,
    `warning`. Raises Rejected (exit 3: a bad key, status, severity or timeline; nothing written),
    StoreError / LockTimeout (exit 4)."""
    from kyb_cli.api._writes import writes  # not at import: one module fewer on a `kyb query` (issue 38)
    from kyb_cli.core.kinds.incidents import write_incident as core

    given = {"tags": tags}
    with writes(store):
        return core(store, attribution, key=key, title=title, body=body, service=service, severity=severity,
                    status=status, hosts=hosts, knowledge=knowledge, resolution=resolution, detection=detection,
                    affected=affected, started_at=started, detected_at=detected, refs=refs,
                    effective_at=effective_at, **given)


def resolve_incident(store, attribution, key: str, *, status: str = "resolved",
                     resolution: str = "") -> dict[str, Any]:
    """Change incident `key`'s status (default resolved) with a resolution, as `kyb resolve` does.

    A blank `resolution` keeps the stored one; a closing status archives the report. Returns the
    write reply (as `write_incident`). Raises NotFound (exit 1: no such incident), Rejected (exit 3:
    not an incident, a bad status, no resolution to close with), StoreError / LockTimeout (exit 4)."""
    from kyb_cli.api._writes import writes  # not at import: one module fewer on a `kyb query` (issue 38)
    from kyb_cli.core.kinds.incidents import resolve_incident as core

    with writes(store):
        return core(store, attribution, key, status=status, resolution=resolution)


def incident_template() -> str:
    """The body template `kyb incident` offers at a terminal (a Markdown text)."""
    from kyb_cli.core.kinds.incidents import TEMPLATE

    return TEMPLATE


def write_task(store, attribution, *, key: str, title: str, body: str = "", status: str = "open",
               priority: str = "", blocked_reason: str = "", assignee: str = "", parent: str = "",
               knowledge: list[str] | None = None, resolution: str = "", tags: Any = KEEP,
               refs: list[str] | None = None, due: Any = KEEP, hard: Any = KEEP, remind_days: Any = KEEP,
               expected: Any = KEEP, waits_on: Any = KEEP, blocked_by: Any = KEEP,
               effective_at: str = "", today: date | None = None) -> dict[str, Any]:
    """Write the task `key` (`task-…`) wholesale, as `kyb task` does; done/dropped need a resolution
    and archive the task.

    Arguments left as KEEP (tags, due, hard, remind_days, expected, waits_on, blocked_by) keep the
    stored value; '' or [] clears. `today` (default: the local date) only decides the past-due
    warning. Returns the write reply (as `write_incident`) plus, as they apply, `unknown_blockers` and
    a `warning` for a due date already past. Raises Rejected (exit 3: a bad key, status, priority, date, a parent or
    blocker cycle; nothing written), StoreError / LockTimeout (exit 4)."""
    from kyb_cli.api._writes import writes  # not at import: one module fewer on a `kyb query` (issue 38)
    from kyb_cli.core.kinds.tasks import write_task as core

    given = {"tags": tags, "due": due, "hard": hard, "remind_days": remind_days,
             "expected": expected, "waits_on": waits_on, "blocked_by": blocked_by}
    with writes(store):
        return core(store, attribution, key=key, title=title, body=body, status=status, priority=priority,
                    blocked_reason=blocked_reason, assignee=assignee, parent_task=parent,
                    knowledge=knowledge, resolution=resolution, refs=refs, effective_at=effective_at, today=today,
                    **given)


def transition_task(store, attribution, key: str, *, status: str, assignee: str | None = None,
                    parent: str | None = None, blocked_reason: str | None = None) -> dict[str, Any]:
    """Move task `key` between live statuses (open|in_progress|blocked), changing only what is named
    (None: unchanged), as `kyb task-status` does; it never closes or archives.

    Returns the write reply (as `write_incident`) with `status` and `assignee` when changed. Raises
    NotFound (exit 1: no such task), Rejected (exit 3: a closing or unknown status, not a task),
    StoreError / LockTimeout (exit 4)."""
    from kyb_cli.api._writes import writes  # not at import: one module fewer on a `kyb query` (issue 38)
    from kyb_cli.core.kinds.tasks import transition_task as core

    with writes(store):
        return core(store, attribution, key, status=status, assignee=assignee, parent_task=parent,
                    blocked_reason=blocked_reason)


def close_task(store, attribution, key: str, *, status: str = "done", resolution: str = "") -> dict[str, Any]:
    """Close task `key` (default done) with a resolution and archive it, as `kyb done` does; a blank
    `resolution` keeps the stored one, closing twice is safe (`changed: false`).

    Returns the write reply (as `write_incident`). Raises NotFound (exit 1: no such task), Rejected
    (exit 3: not a task, no resolution), StoreError / LockTimeout (exit 4)."""
    from kyb_cli.api._writes import writes  # not at import: one module fewer on a `kyb query` (issue 38)
    from kyb_cli.core.kinds.tasks import close_task as core

    with writes(store):
        return core(store, attribution, key, status=status, resolution=resolution)


def failing(items: list[dict[str, Any]], fail_on: str) -> list[dict[str, Any]]:
    """The deadline items (from `deadlines`) that make `kyb deadlines --fail-on` fail: `overdue` any
    overdue one, `hard` overdue hard ones (a sub-list of `items`)."""
    from kyb_cli.core.kinds.deadlines import failing as core

    return core(items, fail_on)


def describe(item: dict[str, Any]) -> str:
    """One deadline item in words: `overdue 3d`, `due today`, `due in 2d` (`expected` for provisional dates)."""
    from kyb_cli.core.kinds.deadlines import describe as core

    return core(item)


def deadlines_block(store: Any, today: date, size: int = 5) -> dict[str, Any]:
    """The deadlines block shown after answers: `{today, tasks, more}` (`today` as YYYY-MM-DD, up to
    `size` overdue or soon-due open tasks, overdue first, and how many more there are), from the dated
    tasks of the store's working tree (`store`: a Store or a path; a cheap read: no index, no pygit2;
    files that do not parse are skipped). Raises nothing of its own."""
    from kyb_cli.core.kinds.deadlines import block, dated_tasks

    return block(dated_tasks(store), today, size)


def with_deadlines(data: dict[str, Any], store: Any, today: date) -> dict[str, Any]:
    """`data` with the deadlines block riding along as `deadlines` when it has items: what MCP and
    HTTP answer where the CLI prints the block on stderr (get, query, tasks, incidents). The answer
    stands without it when the block is off (KYB_DEADLINES) or cannot be read."""
    try:
        if deadlines_switched_off():
            return data
        found = deadlines_block(store, today)
    except Exception:  # noqa: BLE001 — the answer stands without the block, as on the CLI
        return data
    if found["tasks"]:
        data["deadlines"] = found
    return data


def deadlines_switched_off() -> bool:
    """True when KYB_DEADLINES is off (off, 0, false, no): no deadlines block after answers, on any door."""
    from kyb_cli.core.kinds.deadlines import switched_off as core

    return core()
