"""Timestamps as every layer writes them: commit times as RFC 3339 in UTC (parsing a caller's time
arguments is timeargs.py, a room higher up, since a revision as a time needs git).

Any commit time is handled: Git holds any 64-bit number, Python's datetime only years 1..9999, so
a time outside that range (a peer's broken clock, a hand-made commit) is clamped to its ends
(`clamp_epoch`) wherever it is read, never an error (tests/test_sync_hostile.py).
"""

from __future__ import annotations

# datetime's classes from its C half, which `datetime` re-exports (the very same objects): datetime.py
# first defines all of them again in Python, ~1.2 ms of a ~50 ms one-shot `kyb query` (issue 38,
# `python -c "import datetime"` against `import _datetime`, 41 paired runs). Every layer on a query's
# path takes them from here; CPython's `_thread` and `_contextvars` are used the same way.
try:
    from _datetime import date, datetime, time, timezone
except ImportError:  # an interpreter without CPython's accelerator module
    from datetime import date, datetime, time, timezone  # noqa: F401 - re-exported

EPOCH_MIN = -62135596800  # 0001-01-01T00:00:00Z
EPOCH_MAX = 253402300799  # 9999-12-31T23:59:59Z


def clamp_epoch(epoch_seconds: int) -> int:
    """`epoch_seconds` limited to what datetime can show (years 1..9999)."""
    return max(EPOCH_MIN, min(int(epoch_seconds), EPOCH_MAX))


def rfc3339(epoch_seconds: int) -> str:
    """`2026-09-19T02:07:51+00:00`, the form the original used for `committed_at`."""
    return datetime.fromtimestamp(clamp_epoch(epoch_seconds), tz=timezone.utc).isoformat()


def now_utc_z() -> str:
    """Now as `2026-07-22T08:09:40Z`, the form of server-stamped timeline fields."""
    return datetime.now(timezone.utc).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")
