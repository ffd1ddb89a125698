"""`kyb export`: one row per key that existed by a revision, its latest content and state there."""

from __future__ import annotations

import json
from pathlib import Path

from kyb_cli.core.index.fresh import Fresh
from kyb_cli.core.index.fresh import with_index
from kyb_cli.core.timestamps import rfc3339

ROW_SQL = ("SELECT v.doc, v.sha, v.committed_at FROM versions v WHERE v.id = ?")


def _row(conn, vid: int, state: str, ended_sha: str | None, ended_at: int | None, repo=None) -> dict:
    doc, sha, when = conn.execute(ROW_SQL, (vid,)).fetchone()
    row = json.loads(doc)
    row.update(state=state, sha=sha, committed_at=None if when is None else rfc3339(when))
    if ended_sha:
        prefix = "archived" if state == "archived" else "retracted"
        row[f"{prefix}_sha"] = ended_sha
        row[f"{prefix}_at"] = rfc3339(ended_at) if ended_at is not None else None
        if state == "retracted" and repo is not None:
            reason = _reason(repo, ended_sha)
            if reason:
                row["reason"] = reason  # what `kyb import` writes back as the retraction's reason
    return row


def _stamp_verifications(f: Fresh, rows: list[tuple[int, dict]]) -> None:
    """Write who verified a row and when into its `verified` table (`by`, `at`), so `kyb import`
    keeps them instead of stamping the importer and the import time."""
    from kyb_cli.core.index import trust

    dated = [(vid, row) for vid, row in rows if isinstance(row.get("verified"), dict) and row["verified"]]
    if not dated:
        return
    versions = trust.key_versions(f.conn, [row["key"] for _vid, row in dated])
    found = [(row, trust.assess(versions[row["key"]], vid)) for vid, row in dated]
    trust.attribute(f.store_path, [a for _row, a in found])
    for row, a in found:
        if a["verified"] is not None:
            row["verified"] = {**row["verified"], "by": a["verified"]["by"] or "", "at": a["verified"]["at"]}


def _reason(repo, sha: str) -> str:
    """The `Kyb-Reason` trailer of the retracting commit ('' when it has none or is gone)."""
    from kyb_cli.core.records.trailers import parse_trailers

    try:
        return parse_trailers(repo.get(sha).message).get("Kyb-Reason", "")
    except (KeyError, ValueError, AttributeError):
        return ""


def _repo(store_path: Path):
    from kyb_cli.core.canon.repo import Store

    return Store(store_path).repo


def export_rows(store_path: Path, at: str | None = None) -> tuple[str | None, list[dict]]:
    """(commit, rows sorted by key). Without `at`, the index's keys table is the answer."""

    def run(f: Fresh) -> tuple[str | None, list[dict]]:
        if at is None:
            repo = _repo(f.store_path)
            pairs = [
                (vid, _row(f.conn, vid, state, ended_sha, ended_at, repo))
                for _key, vid, state, ended_sha, ended_at in f.conn.execute(
                    "SELECT key, version_id, state, ended_sha, ended_at FROM keys WHERE version_id NOT IN "
                    "(SELECT version_id FROM unreadable) ORDER BY key").fetchall()
            ]
        else:
            head, pairs = _rows_at(f, at)
        _stamp_verifications(f, pairs)
        return (f.head if at is None else head), [row for _vid, row in pairs]

    # always the complete history: a snapshot lacks the archived and retracted keys and the versions' shas
    return with_index(store_path, run, history=True)


def _rows_at(f: Fresh, at: str) -> tuple[str, list[tuple[int, dict]]]:
    """State at REV: present in REV's tree = active; else the last event among REV's ancestors."""
    import pygit2

    from kyb_cli.core.records.keys import RECORD_DIRS, key_of_path
    from kyb_cli.core.canon.repo import Store

    store = Store(f.store_path)
    commit = store.resolve(at)
    ancestors = {str(c.id) for c in store.repo.walk(commit.id, pygit2.enums.SortMode.NONE)}
    present: dict[str, str] = {}
    for directory in RECORD_DIRS:
        try:
            tree = commit.tree[directory]
        except KeyError:
            continue
        for entry in tree:
            files = ([(f"{directory}/{entry.name}/{e.name}", e) for e in commit.tree[f"{directory}/{entry.name}"]]
                     if entry.type_str == "tree" else [(f"{directory}/{entry.name}", entry)])
            for path, blob in files:  # a bucket's files, or an old-shape file (records/keys.py)
                key = key_of_path(path)
                if key is not None:
                    present[key] = str(blob.id)
    conn = f.conn
    last: dict[str, tuple] = {}
    for key, action, vid, blob, sha, when in conn.execute(
            "SELECT e.key, e.action, e.version_id, e.blob, c.sha, c.committed_at FROM events e "
            "JOIN commits c ON c.seq = e.seq ORDER BY e.id"):
        if sha in ancestors:
            last[key] = (action, vid, blob, sha, when)
    rows: list[tuple[int, dict]] = []
    for key in sorted(set(last) | set(present)):
        if key in present:
            vid = _version_with_blob(conn, key, present[key], ancestors)
            if vid is None:
                continue  # unreadable file at REV
            rows.append((vid, _row(conn, vid, "active", None, None)))
            continue
        action, vid, _blob, sha, when = last[key]
        if conn.execute("SELECT 1 FROM unreadable WHERE version_id = ?", (vid,)).fetchone():
            continue  # a held-out version is never exported
        state = "retracted" if not (key.startswith("inc-") or key.startswith("task-")) else "archived"
        rows.append((vid, _row(conn, vid, state, sha if action == "deleted" else None, when, store.repo)))
    return str(commit.id), rows


def _version_with_blob(conn, key: str, blob: str, ancestors: set[str]) -> int | None:
    best = None
    for vid, sha in conn.execute("SELECT id, sha FROM versions WHERE key = ? AND blob = ? AND id NOT IN "
                                 "(SELECT version_id FROM unreadable) ORDER BY id",
                                 (key, blob)):
        if sha in ancestors:
            best = vid
    return best


CSV_COLUMNS = ("key", "kind", "state", "title", "sha", "committed_at", "tags", "status", "service",
               "priority", "assignee", "body")
MEDIA_TYPES = {"jsonl": "application/x-ndjson", "json": "application/json", "csv": "text/csv"}


def render(rows: list[dict], fmt: str) -> str:
    """The export as text: `jsonl` (a row a line), `json` (one array) or `csv` (CSV_COLUMNS)."""
    if fmt == "json":
        return json.dumps(rows, ensure_ascii=False) + "\n"
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    # the csv module quotes a field holding a line terminator's character, and ours is "\n": a row
    # with a CR anywhere is written with every field quoted, so the CR stays inside its field
    quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(CSV_COLUMNS)
    for r in rows:
        fields = [",".join(r.get(c) or []) if c == "tags" else (r.get(c) or "") for c in CSV_COLUMNS]
        (quoted if any("\r" in str(f) for f in fields) else writer).writerow(fields)
    return out.getvalue()


_NOT_CONTENT = ("state", "sha", "committed_at", "retracted_sha", "retracted_at", "archived_sha", "archived_at",
                "history_incomplete")


def csv_cannot_carry(rows: list[dict]) -> list[str]:
    """Fields that hold a value in some row but have no CSV column: what a CSV round trip loses
    (JSONL and JSON carry everything), said so a user is not surprised after the import."""
    lost = {name for r in rows for name, value in r.items()
            if name not in CSV_COLUMNS and name not in _NOT_CONTENT and value not in (None, "", [], {}, False)}
    return sorted(lost)
