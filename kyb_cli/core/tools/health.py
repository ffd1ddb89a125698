"""What a health check reports about a store: its head, how many records of each kind and state,
and how complete the index is (`history_complete`, `pending_vectors`).

Answered from the sidecar index (a few SQL counts after it is brought to HEAD), never a Git walk.
`pending_vectors` counts the current versions that still lack a vector under the installed model
(null without a model); `history_complete` is false while a staged index is still reading history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kyb_cli.core.timestamps import rfc3339


def health(store_path: Path) -> dict[str, Any]:
    from kyb_cli.core.index.fresh import with_index

    def run(f) -> dict[str, Any]:
        conn = f.conn
        head = None
        if f.head:
            row = conn.execute("SELECT committed_at FROM commits WHERE sha = ?", (f.head,)).fetchone()
            head = {"sha": f.head, "committed_at": rfc3339(row[0]) if row else None}
        first = conn.execute("SELECT MIN(committed_at) FROM commits").fetchone()[0]
        counts: dict[str, Any] = {"knowledge": 0, "incident": 0, "task": 0}
        states: dict[str, int] = {"active": 0, "archived": 0, "retracted": 0}
        for kind, state, n in conn.execute("SELECT kind, state, COUNT(*) FROM keys GROUP BY kind, state"):
            if state != "retracted":
                counts[kind] = counts.get(kind, 0) + n
            states[state] = states.get(state, 0) + n
        counts["states"] = states
        counts["versions"] = conn.execute("SELECT COUNT(*) FROM versions").fetchone()[0]
        counts["commits"] = conn.execute("SELECT COUNT(*) FROM commits").fetchone()[0]
        return {
            "head": head,
            "first_commit_at": rfc3339(first) if first is not None else None,
            "counts": counts,
            "history_complete": bool(getattr(f, "history_complete", True)),
            "pending_vectors": _pending_vectors(conn),
        }

    return with_index(Path(store_path), run)


def _pending_vectors(conn) -> int | None:
    from kyb_cli.core import embed
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import pending

    try:
        fingerprint = embed.current_fingerprint()[0]
    except Exception:  # noqa: BLE001 — a health check reports, it does not fail on the model
        return None
    if not fingerprint:
        return None
    return pending(conn, fingerprint, Slice("current"))
