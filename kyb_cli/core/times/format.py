"""Time formatting shared by every layer: commit times as RFC 3339 in UTC."""

from __future__ import annotations

from datetime import datetime, timezone


def rfc3339(epoch_seconds: int) -> str:
    """`2026-09-19T02:07:51+00:00`, the form the original used for `committed_at`."""
    return datetime.fromtimestamp(epoch_seconds, tz=timezone.utc).isoformat()


def now_utc_z() -> str:
    """Now as `2026-07-22T08:09:40Z`, the form of server-stamped timeline fields."""
    return datetime.now(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
