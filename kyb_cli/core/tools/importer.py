"""`kyb import` and MCP `add_many`: many records in one process, one lock and one branch move.

The plan: read every source (tools/import_files.py, tools/import_read.py), settle stable keys, apply
every write rule to each record (a record that breaks one is skipped and reported, never
half-imported), compare with HEAD (unchanged records make no commit), then write the objects in a
batch and move the branch once (canon/batch.py + transaction.publish). By default every record is
its own commit, so `history` and `get --at` work per record; `--one-commit` puts every created or
updated record in one commit (a retraction keeps its own commit, as the reason is per commit). The
index catches up once at the end. `--dry-run` answers the same without writing.

Keys (stable across imports, distinct, reported when a duplicate is renamed): tools/import_keys.py.
Files that disappeared since the last import of a folder are reported (`missing`) and retracted only
with `--sync-deletes`.
"""

from __future__ import annotations

import json
import os
from contextlib import nullcontext
from typing import Any, Callable

from kyb_cli.core.errors import Rejected, StoreError, UsageError
from kyb_cli.core.records.keys import kind_of_key
from kyb_cli.core.records.model import Record
from kyb_cli.core.tools.import_keys import (
    distinct_given_keys, load_manifest, missing_files, save_manifest, settle_keys,
)
from kyb_cli.core.tools.import_read import Item

KINDS = ("knowledge", "incident", "task")
KEY_FROM = ("path", "title", "front-matter")
FORMATS = ("auto", "md", "jsonl", "json", "csv")

Progress = Callable[[str, int, int], None]


def import_records(store, paths: list[str], *, attribution, fmt: str = "auto", kind: str = "knowledge",
                   tags: list[str] | None = None, key_from: str = "path", excludes: list[str] | None = None,
                   dry_run: bool = False, one_commit: bool = False, sync_deletes: bool = False,
                   progress: Progress | None = None) -> dict[str, Any]:
    """Import Markdown files and folders, or `kyb export` output; the reply says what changed."""
    from kyb_cli.core.tools import import_files, import_read

    if fmt not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}, got '{fmt}'")
    if kind not in KINDS:
        raise UsageError(f"--kind must be knowledge, incident or task, got '{kind}'")
    if key_from not in KEY_FROM:
        raise UsageError(f"--key-from must be path, title or front-matter, got '{key_from}'")
    if not paths:
        raise UsageError("name at least one file or folder to import")
    for p in paths:
        if not os.path.lexists(p):
            raise UsageError(f"no such file or folder: {p}")
    srcs = import_files.sources(list(paths), fmt, list(excludes or []))
    items: list[Item] = []
    seen: dict[str, set[str]] = {}  # root -> rels read or reported (not missing)
    for n, src in enumerate(srcs, 1):
        if progress:
            progress("reading", n, len(srcs))
        seen.setdefault(src.root, set()).add(src.rel)
        if src.skip:
            items.append(Item(source=src.shown, rel=src.rel, skip=src.skip))
            continue
        text, why = import_files.read_text(src)
        if text is None:
            items.append(Item(source=src.shown, rel=src.rel, skip=why))
            continue
        if src.fmt == "md":
            item = import_read.read_markdown(text, src.shown, src.rel, kind)
            item.root = src.root
            items.append(item)
        else:
            items.extend(import_read.read_rows(text, src.shown, src.fmt))
    manifest = load_manifest(store)
    duplicates = settle_keys(items, manifest, kind=kind, key_from=key_from, tags=tags or [])
    missing = missing_files(manifest, seen, srcs)
    reply = apply(store, items, attribution=attribution, dry_run=dry_run, one_commit=one_commit,
                  missing=missing if sync_deletes else [], progress=progress)
    reply["missing"] = [{"path": m["path"], "key": m["key"], "retracted": bool(sync_deletes and m["live"])}
                        for m in missing]
    reply["duplicates"] = duplicates
    if not dry_run:
        save_manifest(store, manifest, items, missing if sync_deletes else [])
    return reply


def add_many(store, records: list[dict[str, Any]], *, attribution, dry_run: bool = False,
             one_commit: bool = False) -> dict[str, Any]:
    """Save several knowledge records at once (the `add-many` operation, MCP `add_many`): the import's batch path."""
    from kyb_cli.core.records.validate import check_key_for_kind
    from kyb_cli.core.tools.import_read import row_item

    items = []
    for n, row in enumerate(records):
        item = row_item(row, f"records[{n}]")
        if item.record is not None and item.skip is None:
            try:
                check_key_for_kind(item.record.key, "knowledge")
            except Rejected as exc:
                item.skip = exc.message
        items.append(item)
    distinct_given_keys(items)
    return apply(store, items, attribution=attribution, dry_run=dry_run, one_commit=one_commit, missing=[])


# -- applying the plan ------------------------------------------------------------------------------

def message(verb: str, key: str, attribution, reason: str | None = None) -> str:
    """A commit message as every kyb write makes it: `kyb: <verb> <key>`, reason, trailers."""
    text = f"kyb: {verb} {key}\n"
    if reason:
        text += f"\n{reason}\n"
    trailers = [("Kyb-Action", verb)]
    if reason:
        trailers.append(("Kyb-Reason", " ".join(reason.split())))
    trailers += attribution.trailers()
    return text + "\n" + "".join(f"{k}: {v}\n" for k, v in trailers if v)


def apply(store, items: list[Item], *, attribution, dry_run: bool, one_commit: bool, missing: list[dict],
          progress: Progress | None = None) -> dict[str, Any]:
    """Check every record against the write rules and HEAD, then write the batch (one branch move)."""
    from kyb_cli.core.canon import batch
    from kyb_cli.core.canon.transaction import locked

    reply: dict[str, Any] = {"created": [], "updated": [], "unchanged": [], "skipped": [], "commits": 0,
                             "head": None}
    hinted: list = []  # (reply entry, plan) of knowledge records written: they get kyb add's hints
    for item in items:
        if item.skip is None and item.record is not None:
            _check_rules(item)
    with (nullcontext() if dry_run else locked(store)):
        if not dry_run:
            batch.remove_temp_refs(store.repo)
        from kyb_cli.core.canon.tree import entries_at

        if not dry_run:  # an old-shape store moves first, on its own commit (canon/migrate.py)
            from kyb_cli.core.canon.transaction import Transaction

            mover = Transaction(store, attribution)
            mover.keep_move = True
            mover.publish()
        base = store.head_commit()
        live = [i for i in items if i.skip is None and i.record is not None]
        at_base = _at_base(base, [i.record.key for i in live])
        ended = _ended_versions(store, live, at_base)
        plans = [_plan(store, at_base[i.record.path], i, ended) for i in live]
        edited = batch.hand_edited(store.repo, {p["path"]: p["old_blob"] for p in plans if p["ops"]}) \
            if plans and not dry_run else set()
        commits: list[batch.Commit] = []
        puts: dict[str, bytes] = {}
        removals: list[batch.Commit] = []
        for p in plans:
            item = p["item"]
            if p["ops"] and p["path"] in edited:
                item.skip = (f"{p['path']} has uncommitted changes in the store's working tree; kyb will not "
                             "overwrite them — commit or discard them and import again")
                continue
            key = item.record.key
            for op, arg in p["ops"]:
                if op == "put":
                    verb = "add" if p["old_blob"] is None else "update"
                    if one_commit:
                        puts[p["path"]] = arg
                    else:
                        commits.append(batch.Commit(message(verb, key, attribution), {p["path"]: arg}))
                else:
                    (removals if one_commit else commits).append(
                        batch.Commit(message(op, key, attribution, arg), {p["path"]: None}))
            entry = {"key": key, "path": item.source}
            if item.state != "active":
                entry.update(state=item.state, **({"reason": item.reason} if item.reason else {}))
            reply[p["outcome"]].append(entry)
            if p["outcome"] in ("created", "updated") and item.record.kind == "knowledge" and item.state == "active":
                hinted.append((entry, p))
        for m in missing:
            from kyb_cli.core.canon.tree import blob_at
            from kyb_cli.core.records.keys import path_of_key

            path = path_of_key(m["key"])
            if base is None or blob_at(base, path) is None or any(
                    p["item"].record.key == m["key"] for p in plans):
                m["live"] = False
                continue
            verb = "retract" if kind_of_key(m["key"]) == "knowledge" else "archive"
            reason = f"its source file {m['path']} was deleted" if verb == "retract" else None
            removals.append(batch.Commit(message(verb, m["key"], attribution, reason), {path: None}))
        if one_commit and puts:
            n = len(puts)
            commits.insert(0, batch.Commit(message("import", f"{n} record{'s' if n != 1 else ''}", attribution),
                                           dict(puts)))
        commits += removals
        reply["skipped"] = [{"path": i.source, "reason": i.skip} for i in items if i.skip]
        reply["commits"] = len(commits)
        reply["head"] = str(base.id) if base is not None else None
        _add_hints(store, hinted)  # against the store before this batch: a dry run answers the same
        if dry_run:
            reply["dry_run"] = True
            return reply
        if commits:
            from kyb_cli.core.canon.transaction import publish

            if progress:
                progress("writing", 0, len(commits))
            tip, changes = batch.write_objects(store, base, commits)
            if progress:
                progress("writing", len(commits), len(commits))
            log = f"kyb: import {len(commits)} commit{'s' if len(commits) != 1 else ''}"
            reply["warnings"] = publish(store, base, tip, changes, log, what="the import")
            reply["head"] = str(tip)
            if not reply["warnings"]:
                del reply["warnings"]
    if commits:
        _catch_up_index(store, progress)
    return reply


def _at_base(base, keys: list[str]) -> dict:
    """Each key's entry in `base` by its (fanned) path; a dry run on an old-shape store finds the
    file at its old flat path (records/keys.py)."""
    from kyb_cli.core.canon.tree import entries_at
    from kyb_cli.core.records.keys import old_path_of_key, path_of_key

    found = entries_at(base, [path_of_key(k) for k in keys])
    missing = [k for k in keys if found[path_of_key(k)] is None]
    old = entries_at(base, [old_path_of_key(k) for k in missing]) if missing and base is not None else {}
    for k in missing:
        found[path_of_key(k)] = old.get(old_path_of_key(k))
    return found


HINT_LIMIT = 200  # past this many records, the per-record hints would cost more than the import


def _add_hints(store, hinted: list) -> None:
    """The hints `kyb add` gives, per imported record: `retired_elsewhere` on an update (wording the
    update removed that other live records still say), `similar` on a create (kinds/wording.py).

    Read from the index as the store stood before this batch (so `--dry-run` gives the same hints);
    skipped for batches over HINT_LIMIT records (a hint that cannot be computed never fails the import)."""
    if not hinted or len(hinted) > HINT_LIMIT:
        return
    from kyb_cli.core.index.fresh import with_index
    from kyb_cli.core.kinds import wording
    from kyb_cli.core.records.model import RecordFormatError

    def run(f) -> None:
        for entry, p in hinted:
            record = p["item"].record
            if p["outcome"] == "created":
                entry["similar"] = [s for s in wording.similar(f.conn, record) if s.get("key") != record.key]
                continue
            try:
                old = store.parse_blob(p["old_blob"], p["path"])
            except RecordFormatError:
                continue
            phrases = wording.retired_phrases(old, record)
            entry["retired_elsewhere"] = (wording.retired_elsewhere(f.conn, record.key, phrases, old)
                                          if phrases else [])

    try:
        with_index(store.path, run)
    except Exception:  # noqa: BLE001 - the records are written; the hints are only advice
        pass


EMPTY_BODY = "the body is empty: knowledge is its text (an empty file is not a record)"


def _check_rules(item: Item) -> None:
    from kyb_cli.core.records.validate import validate

    try:
        validate(item.record)
    except Rejected as exc:
        item.skip = exc.message
        return
    if item.record.kind == "knowledge" and item.state == "active" and not item.record.body.strip():
        item.skip = EMPTY_BODY  # as `kyb add` refuses one: an empty file is no record


def _ended_versions(store, items: list[Item], at_base: dict) -> dict[str, tuple[str, str]]:
    """key -> (state, last version's text) for keys that ended (retracted/archived) which an item
    wants ended again: what lets a re-import of a superseded ADR change nothing."""
    wanted = [i.record.key for i in items if i.state != "active" and at_base[i.record.path] is None]
    if not wanted:
        return {}
    try:
        from kyb_cli.core.index.fresh import with_index

        def run(f):
            out = {}
            for key in wanted:
                row = f.conn.execute("SELECT k.state, v.doc FROM keys k JOIN versions v ON v.id = k.version_id "
                                     "WHERE k.key = ?", (key,)).fetchone()
                if row is not None:
                    out[key] = (row[0], row[1])
            return out

        return with_index(store.path, run)
    except (StoreError, OSError):
        return {}


def _same_doc(doc: str, record: Record) -> bool:
    from kyb_cli.core.tools.import_read import row_item

    try:
        data = json.loads(doc)
    except ValueError:
        return False
    old = row_item(data, "").record
    return old is not None and old.to_markdown() == record.to_markdown()


def _plan(store, old_entry, item: Item, ended: dict) -> dict[str, Any]:
    """What one record needs: ops [("put", bytes) | ("retract"/"archive", reason)] and the outcome."""
    from kyb_cli.core.records.model import RecordFormatError, parse

    record = item.record
    path = record.path
    old_blob = old_entry[0] if old_entry is not None else None
    old_bytes = store.blob_bytes(old_blob) if old_blob is not None else None
    if old_bytes is not None:
        try:
            current = parse(old_bytes, path=path)
            if current.extra:
                record.extra = {**current.extra, **record.extra}  # hand-added fields survive
        except RecordFormatError:
            current = None
    new_bytes = record.to_markdown().encode("utf-8")
    same = old_bytes is not None and (old_bytes == new_bytes or (
        current is not None and current.to_markdown().encode("utf-8") == new_bytes))
    end = None
    if item.state != "active":
        end = ("retract", item.reason or "retracted on import") if record.kind == "knowledge" else ("archive", None)
    ops: list[tuple[str, Any]] = []
    if old_bytes is None and end is not None:
        prev = ended.get(record.key)
        if prev is not None and prev[0] in ("retracted", "archived") and _same_doc(prev[1], record):
            return {"item": item, "path": path, "old_blob": None, "ops": [], "outcome": "unchanged"}
    if not same:
        ops.append(("put", new_bytes))
    if end is not None:
        ops.append(end)
    outcome = "unchanged" if not ops else ("created" if old_bytes is None else "updated")
    return {"item": item, "path": path, "old_blob": old_blob, "ops": ops, "outcome": outcome}


def _catch_up_index(store, progress: Progress | None) -> None:
    """The index catches up once, so the first query after an import is fast (never fails the import)."""
    from kyb_cli.core.index.fresh import with_index

    if progress:
        progress("indexing", 0, 1)
    try:
        with_index(store.path, lambda f: None)
        if progress:
            progress("indexing", 1, 1)
    except Exception:  # noqa: BLE001 - the records are written; the next read catches up itself
        pass
