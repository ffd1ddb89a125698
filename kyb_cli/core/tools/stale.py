"""`kyb stale`: knowledge to check again (rule "stale"; the reasons are in index/trust.py)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any


def stale(store_path: Path, *, days: int | None = None, today: date | None = None) -> dict[str, Any]:
    """`{"count", "stale": [{"key", "title", "reason", "last_verified_at", "last_changed_at",
    "review_by"}]}`, the oldest check first (never verified counts from its last change)."""
    from kyb_cli.core.index.fresh import with_index
    from kyb_cli.core.index.trust import assess, key_versions, stale_days, staleness
    from kyb_cli.core.timestamps import rfc3339

    n_days = stale_days(days)
    today = today or date.today()

    def run(f):
        keys = [k for (k,) in f.conn.execute(
            "SELECT key FROM keys WHERE kind = 'knowledge' AND state = 'active' ORDER BY key")]
        versions = key_versions(f.conn, keys)
        return [(k, versions[k][-1][3].get("title", ""), assess(versions[k])) for k in keys if versions[k]]

    out = []
    for key, title, a in with_index(Path(store_path), run):
        reason = staleness(a, days=n_days, today=today)
        if reason is None:
            continue
        v = a["verified"]
        last = v["_at"] if v is not None else a["changed_at"]
        out.append((last, {"key": key, "title": title, "reason": reason,
                           "last_verified_at": v["at"] if v is not None else None,
                           "last_changed_at": rfc3339(a["changed_at"]),
                           "review_by": a["review_by"] or None}))
    out.sort(key=lambda item: (item[0], item[1]["key"]))
    return {"count": len(out), "days": n_days, "today": today.isoformat(), "stale": [row for _t, row in out]}
