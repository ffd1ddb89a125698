"""Bounded clocks: a peer's commit time is believed only as far as the history built on it allows.

Rule (docs/guide/sharing.md "Sharing a store", "Clocks"): when a sync merge compares two writes of one record,
each write's time is its commit time, bounded by
- every commit built on top of it (a commit cannot have been made after a commit that contains it),
  so a write dated 2099 counts as no later than the first commit anyone made on top of it; and
- the merging clone's own clock plus `KYB_CLOCK_SKEW` seconds (default 600) for a tip nothing is
  built on yet (the merge itself is built on it).
Incoming commits dated past that bound are listed in the sync reply under `clamped`
(`{"commit", "committed_at", "bound"}`) so a team can find the machine with the wrong clock.
Every clone that merges the same two heads computes the same bounds (they come from the graph and
the merge's own time), so the conflict rule stays symmetric.
"""

from __future__ import annotations

import pygit2

SKEW_DEFAULT = 600


def skew() -> int:
    from kyb_cli.core.settings import env_int

    return env_int("KYB_CLOCK_SKEW", SKEW_DEFAULT, minimum=0)


def bounds(repo: pygit2.Repository, tips: list[pygit2.Oid], hide: pygit2.Oid | None, now: int) -> dict[str, int]:
    """Effective time per commit in `tips` (minus `hide`'s history): min(own, descendants', now + skew)."""
    limit = now + skew()
    walker = repo.walk(tips[0], pygit2.enums.SortMode.TOPOLOGICAL)
    for tip in tips[1:]:
        walker.push(tip)
    if hide is not None:
        walker.hide(hide)
    above: dict[str, int] = {}
    out: dict[str, int] = {}
    for commit in walker:  # children before parents
        sha = str(commit.id)
        eff = min(commit.commit_time, above.get(sha, limit))
        out[sha] = eff
        for parent in commit.parent_ids:
            p = str(parent)
            above[p] = min(above.get(p, limit), eff)
    return out


def clamped(repo: pygit2.Repository, tip: pygit2.Oid, hide: pygit2.Oid | None, now: int) -> list[dict]:
    """Incoming commits dated past this clone's clock + skew: what the reply reports as clamped."""
    from kyb_cli.core.timestamps import rfc3339

    limit = now + skew()
    walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL)
    if hide is not None:
        walker.hide(hide)
    return [{"commit": str(c.id), "committed_at": rfc3339(c.commit_time), "bound": rfc3339(limit)}
            for c in walker if c.commit_time > limit]
