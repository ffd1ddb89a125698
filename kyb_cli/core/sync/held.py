"""Held-out records: a peer's records that break the write rules stay out of the store (merge.py
decides, incoming.py names them) and are reported under `held_out` on every sync while the tip
still holds them, remembered between syncs in `.git/kyb/held-out.json`."""

from __future__ import annotations

import json
import os

from kyb_cli.core.canon.repo import Store
from kyb_cli.core.canon.tree import blob_at
from kyb_cli.core.sync import incoming

HELD_NAME = "held-out.json"


def _held_path(store: Store):
    return store.kyb_dir / HELD_NAME


def held_report(store: Store, fetched: list[incoming.Problem]) -> list[dict[str, str]]:
    """Every held-out record this sync saw (`fetched`) plus those still at HEAD from earlier syncs;
    what is still at HEAD is remembered for the next sync (`.git/kyb/held-out.json`)."""
    head = store.head_commit()
    try:
        old = [incoming.Problem(**p) for p in json.loads(_held_path(store).read_text())]
    except (OSError, ValueError, TypeError):
        old = []
    seen: dict[str, incoming.Problem] = {}
    for p in fetched + old:
        seen.setdefault(p.path, p)
    keep = [p for p in seen.values() if head is not None and str(blob_at(head, p.path) or "") == p.oid]
    try:
        store.kyb_dir.mkdir(parents=True, exist_ok=True)
        tmp = _held_path(store).with_suffix(".tmp")
        tmp.write_text(json.dumps([p.__dict__ for p in keep]))
        os.replace(tmp, _held_path(store))
    except OSError:
        pass
    report = {p.path: p for p in keep}
    for p in fetched:
        report.setdefault(p.path, p)
    return [report[k].to_json() for k in sorted(report)]
