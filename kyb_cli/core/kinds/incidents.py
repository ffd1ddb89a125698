"""Incident reports (`inc-…`): write, resolve (closing archives), list.

The reply teaches structure without gating on it (hints, unknown_knowledge). The timeline follows
the original's `stamp_timeline`: stored stamps are inherited on rewrite, `detected_at` defaults to
now, `mitigated_at` and `resolved_at` are stamped by kyb and never taken from the caller.
"""

from __future__ import annotations

from kyb_cli.core.records.validate import fold_tags

from typing import Any

from kyb_cli.core.errors import Rejected
from kyb_cli.core.kinds.lifecycle import (
    KEEP,
    check_filter,
    copy_of,
    kept,
    open_followups,
    select_rows,
    stored_of_kind,
    read_before_lock,
    stored_version,
    unknown_links,
    write_and_close,
)
from kyb_cli.core.records.keys import kind_of_key
from kyb_cli.core.records.model import Record
from kyb_cli.core.timestamps import now_utc_z
from kyb_cli.core.timeargs import event_time_arg
from kyb_cli.core.records.validate import check_key, validate

STATUS_ORDER = ("open", "mitigated", "resolved")
TIMELINE = ("started_at", "detected_at", "mitigated_at", "resolved_at")

HINTS = (
    "no detection: add an executable 'is it still happening?' check with the expected healthy result (--detection)",
    "no affected windows: if data or a period got poisoned, record {scope,from,to} in --affected so backtests can exclude it programmatically",
    "no follow-ups: track loose ends in the body as '- [ ]' checklist items so they are not lost",
    "no 'Root cause' section: state it and mark the confidence — verified | suspected | unknown",
)

TEMPLATE = """\
## Symptom
What was seen, where, since when (exact error text, dashboards, alerts).

## Impact
Who or what was affected, for how long; data or periods poisoned (also --affected).

## Root cause (verified | suspected | unknown)
State it and mark the confidence.

## Cure / runbook
1. SAFE: steps anyone may run (read-only checks, restarts that lose nothing).
2. APPROVAL: steps that need a human's go (data changes, failovers).

## Actions log
- HH:MM what was done, by whom, with what result.

## Follow-ups
- [ ] loose end to finish or hand over
"""


def hints(record: Record) -> list[str]:
    """Rule "incident hints": what a good report has and this one lacks, in the original's order and words."""
    out = []
    if not record.detection.strip():
        out.append(HINTS[0])
    if not record.affected:
        out.append(HINTS[1])
    if "- [ ]" not in record.body and "- [x]" not in record.body:
        out.append(HINTS[2])
    if "root cause" not in record.body.lower():
        out.append(HINTS[3])
    return out


def stamp_timeline(record: Record, stored: Record | None, now: str | None = None) -> None:
    """Rule "incident timeline": inherit blank stamps from the stored version, then stamp what the status implies."""
    now = now or now_utc_z()
    if stored is not None:
        for name in TIMELINE:
            if not getattr(record, name).strip():
                setattr(record, name, getattr(stored, name))
    if record.kind == "incident" and not record.detected_at.strip():
        record.detected_at = now
    if record.status == "mitigated" and not record.mitigated_at.strip():
        record.mitigated_at = now
    if is_closed(record) and not record.resolved_at.strip():
        record.resolved_at = now


def is_closed(record: Record) -> bool:
    if record.kind == "incident":
        return record.status == "resolved"
    return record.status in ("done", "dropped")


def write_incident(store, attribution, *, key: str, title: str, body: str = "", service: str = "",
                   severity: str = "", status: str = "open", hosts: list[str] | None = None,
                   knowledge: list[str] | None = None, resolution: str = "", detection: str = "",
                   affected: list[dict[str, str]] | None = None, started_at: str = "",
                   detected_at: str = "", tags: Any = KEEP, refs: list[str] | None = None,
                   effective_at: str = "") -> dict[str, Any]:
    """Write an incident report wholesale (tags kept when omitted); a resolved one is archived."""
    effective_at = event_time_arg(effective_at)  # 'next tuesday' is a usage error, never stored as given
    check_key(key)
    if kind_of_key(key) != "incident":
        raise Rejected("incident keys must start with 'inc-' (e.g. inc-2026-07-22-orders-api-oom)")
    record = Record(
        key=key, title=title, body=body, service=service, severity=severity, status=status,
        hosts=list(hosts or []), knowledge=list(knowledge or []), resolution=resolution,
        detection=detection, affected=list(affected or []), started_at=started_at.strip(),
        effective_at=effective_at,
        detected_at=detected_at.strip(), refs=list(refs or []),
    )
    before = read_before_lock(store, key)  # never an index read under the writer lock
    with store.writing(attribution) as tx:
        found = stored_version(tx, key, before=before)
        prev = found[0] if found else None
        record.tags = list(kept(tags, prev.tags if prev else None, []))
        if tags is not KEEP:
            record.tags = fold_tags(record.tags)
        if prev is not None:
            record.extra = dict(prev.extra)
        stamp_timeline(record, prev)
        validate(record)
        reply = write_and_close(tx, record, verb=None, closed=is_closed(record))
        if reply.get("changed"):
            unknown = unknown_links(tx, record.knowledge)
            if unknown:
                reply["unknown_knowledge"] = unknown
            advice = hints(record)
            if advice:
                reply["hints"] = advice
    return reply


def resolve_incident(store, attribution, key: str, *, status: str = "resolved",
                     resolution: str = "") -> dict[str, Any]:
    """Rule "close with a resolution": change status (default resolved); a blank resolution keeps the stored one."""
    check_key(key)
    with store.writing(attribution) as tx:
        prev = stored_of_kind(tx, key, "incident", "an incident report")
        record = copy_of(prev, status=status)
        if resolution.strip():
            record.resolution = resolution.strip()
        stamp_timeline(record, prev)
        validate(record)
        return write_and_close(tx, record, verb="resolve", closed=is_closed(record))


def incident_row(entry) -> dict[str, Any]:
    r = entry.record
    return {
        "key": r.key, "title": r.title, "service": r.service, "hosts": r.hosts, "severity": r.severity,
        "status": r.status or "open", "knowledge": r.knowledge, "resolution": r.resolution,
        "detection": r.detection, "affected": r.affected, "started_at": r.started_at,
        "detected_at": r.detected_at, "mitigated_at": r.mitigated_at, "resolved_at": r.resolved_at,
        "open_followups": open_followups(r.body), "tags": r.tags, "sha": entry.sha,
        "committed_at": entry.committed_at, "archived": entry.archived, "state": entry.state,
    }


def list_incidents(store, *, status: str = "", service: str = "", open_only_followups: bool = False,
                   include_archived: bool = False, limit: int = 50) -> list[dict[str, Any]]:
    """Rule "listings": filter, drop archived unless asked (or a status/follow-up filter is set), order, cut."""
    from kyb_cli.core.kinds.catalog import catalog

    check_filter("status", status, STATUS_ORDER)
    return select_rows(catalog(store, "incident"), incident_row, STATUS_ORDER, status=status,
                       filters={"service": service.strip().lower()}, open_only_followups=open_only_followups,
                       include_archived=include_archived, limit=limit)



AFFECTED_SHAPE = 'expected: [{"scope":…,"from":…,"to":…}]'


def parse_affected(value: Any) -> list[dict[str, str]]:
    """`affected` as a JSON array text (CLI) or a decoded list (MCP) of {scope, from, to} objects."""
    import json

    from kyb_cli.core.errors import UsageError

    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    data = value
    if isinstance(value, str):
        try:
            data = json.loads(value)
        except ValueError as exc:
            raise UsageError(f"affected is not valid JSON ({exc}); {AFFECTED_SHAPE}", field="affected") from None
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise UsageError(f"affected must be a JSON array of objects; {AFFECTED_SHAPE}", field="affected")
    return [{str(k): "" if v is None else str(v) for k, v in item.items()} for item in data]
