"""What a read returns: a record's version (`Version`), a row of its history (`HistoryRow`), a
listing entry (`CatalogEntry`), tag counts.

Shapes only, no pygit2: the index reads (index/reads.py) and the test oracle (tests/support/oracle.py)
build the same objects, so their answers compare with `==`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kyb_cli.core.records.trailers import parse_trailers, served_text
from kyb_cli.core.errors import NotFound
from kyb_cli.core.records.keys import kind_of_key
from kyb_cli.core.records.model import Record
from kyb_cli.core.timestamps import rfc3339


@dataclass
class Version:
    """A record as it stood at some revision, with the commit that wrote that version."""

    record: Record
    sha: str
    committed_at: str
    state: str  # active | archived | retracted
    ended_sha: str | None = None  # the archive/retract commit, when state is not active
    ended_at: str | None = None
    reason: str | None = None
    is_head: bool = True  # this version is the key's current one (False: an older version, via --at)
    related: dict[str, Any] = field(default_factory=dict)  # what other records say of it (a task's `blocks`)
    # who/when/current of its verification and `stale`, set by the porcelain's reads (index/trust.py)
    trust: dict[str, Any] | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        """The record's fields, then `state`, `sha`, `committed_at`, `is_head`; for a record that left
        the tree also `archived_sha`/`archived_at` (or `retracted_…`) and `reason` when one was given."""
        out = self.record.to_json()
        out["state"] = self.state
        out["sha"] = self.sha
        out["committed_at"] = self.committed_at
        out["is_head"] = self.is_head
        if self.trust is not None:
            out.update(self.trust)
        if self.ended_sha:
            prefix = "archived" if self.state == "archived" else "retracted"
            out[f"{prefix}_sha"] = self.ended_sha
            out[f"{prefix}_at"] = self.ended_at
            if self.reason:
                out["reason"] = self.reason
        out.update(self.related)
        return out


@dataclass
class CatalogEntry:
    """A key's latest version in a listing: the record, the commit that wrote it, whether it left the tree."""

    record: Record
    sha: str
    committed_at: str
    order: int  # smaller is newer (position in revision order, newest first)
    archived: bool = False
    archived_sha: str | None = None
    archived_at: str | None = None

    @property
    def state(self) -> str:
        if not self.archived:
            return "active"
        return "retracted" if self.record.kind == "knowledge" else "archived"


@dataclass
class HistoryRow:
    sha: str
    committed_at: str
    change: str  # added | modified | deleted
    message: str
    labels: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sha": self.sha,
            "committed_at": self.committed_at,
            "change": self.change,
            "message": self.message,
        }
        out.update(self.labels)
        return out


def change_of(blob: Any, parent_blobs: list[Any]) -> str | None:
    """How a commit changed a path, from its blob there and its parents' (None: absent).

    None when it did not: its blob equals some parent's (a merge that took one side's version).
    Otherwise `added`/`deleted`/`modified`, judged against the first parent.
    """
    if not parent_blobs:
        return "added" if blob is not None else None
    if any(pb == blob for pb in parent_blobs):
        return None
    if parent_blobs[0] is None:
        return "added"
    if blob is None:
        return "deleted"
    return "modified"


def history_row(sha: str, commit_time: int, change: str, message: str, author: str) -> HistoryRow:
    """A history row from one commit: its first message line and attribution labels from its trailers
    (each as served: a secret-looking value is redacted, records/trailers.py)."""
    trailers = parse_trailers(message)
    labels = {
        "agent": trailers.get("Kyb-Agent", ""),
        "session": trailers.get("Kyb-Session", ""),
        "workspace": trailers.get("Kyb-Workspace", ""),
        "transport": trailers.get("Kyb-Transport", ""),
        "author": served_text(author, "author"),
    }
    if "Kyb-Reason" in trailers:
        labels["reason"] = trailers["Kyb-Reason"]
    return HistoryRow(sha=sha, committed_at=rfc3339(commit_time), change=change,
                      message=served_text(message.split("\n", 1)[0], "message"), labels=labels)


def ranked_tags(counts: dict[str, int]) -> list[dict[str, Any]]:
    """Tag counts as `kyb tags` lists them: most used first, then by name."""
    return [{"tag": t, "count": c} for t, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def retraction_of(key: str) -> str:
    return "retracted" if kind_of_key(key) == "knowledge" else "archived"


def retracted_error(key: str, version: Version, end_short: str, origin_short: str, at: str | None) -> NotFound:
    """The NotFound a read of retracted knowledge raises: when, why, and the `--at` that shows it."""
    where = f" before {at}" if at else ""
    because = f" because: {version.reason}" if version.reason else " (no reason recorded)"
    return NotFound(
        f"'{key}' was retracted{where} on {version.ended_at} in commit {end_short}{because}; "
        f"its last version is shown by: kyb get {key} --at {origin_short}",
        state="retracted",
        retracted_sha=version.ended_sha,
        retracted_at=version.ended_at,
        reason=version.reason,
        last_version_sha=version.sha,
    )
