"""Knowing whether to trust a record: verify, stale, rules (docs/guide/records.md "Knowing whether to trust a record")."""

from __future__ import annotations

from datetime import date

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`
    from typing import Any


def _path(store: Any) -> Path:
    from pathlib import Path

    return Path(getattr(store, "path", store))


def verify(store, key: str, *, source: str, rev: str = "", note: str = "", attribution):
    """Record that knowledge KEY was checked against `source` (at `rev`): one commit `kyb: verify KEY`;
    reply `{"action": "verified", "changed": true, "key", "sha"}`."""
    from kyb_cli.api._writes import writes
    from kyb_cli.core.kinds.verify import verify as core

    with writes(store):
        return core(store, key, source=source, rev=rev, note=note, attribution=attribution)


def trust_of(store: Any, version, *, today: date | None = None) -> dict[str, Any]:
    """`{"verified": {...} | None}` (+ `"stale"` for knowledge) for a Version read by `api.read`."""
    from kyb_cli.core.index.trust import days_or_default, for_version, public, staleness

    a = for_version(_path(store), version.record.key, version.sha)
    out: dict[str, Any] = {"verified": public(a["verified"])}
    if version.record.kind == "knowledge":
        out["stale"] = staleness(a, days=days_or_default(), today=today or date.today()) is not None
    return out


def today_arg(value: str | None) -> date | None:
    """A `today` date, checked (UsageError naming `today` when it is not YYYY-MM-DD); None: not given."""
    from kyb_cli.core.records.validate import day_arg

    return day_arg(value or None)


def reader_day(value: str | None) -> date:
    """The reader's day: `today` checked (as `today_arg`), else the local date (the reader's calendar)."""
    return today_arg(value) or date.today()
