"""Keys for `kyb import`: slugs of paths or titles, distinct and stable across imports (the manifest).

A `key` in front matter wins; else a slug of the path relative to the folder imported
(`--key-from path`, the default) or of the title (`--key-from title`); `--key-from front-matter`
skips files without one. Which key each file got is kept in `.git/kyb/imports.json` (per folder,
not in the canon), so a second import of the same folder updates the same records, duplicate keys
stay stable when files are added, and files that disappeared since are reported (`missing`).
Two files that would get the same key: the first (by path) keeps it, the others get the key plus a
short hash of their path (reported in `duplicates`).
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import re
import unicodedata
from pathlib import Path

from kyb_cli.core.records.keys import kind_of_key
from kyb_cli.core.tools.import_read import Item

PREFIX = {"incident": "inc-", "task": "task-"}
MANIFEST = "imports.json"
KEY_MAX = 100


# -- keys -------------------------------------------------------------------------------------------

def slug(text: str) -> str:
    """A key-shaped slug: ASCII letters and digits, single dashes, lowercase."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    return re.sub(r"[^a-z0-9]+", "-", text).strip("-")


def _short(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]


def _fit(key: str, seed: str) -> str:
    if len(key) <= KEY_MAX:
        return key
    return key[:KEY_MAX - 7].rstrip("-") + "-" + _short(seed)


def derive_key(item: Item, kind: str, key_from: str) -> str:
    """The key a Markdown file gets when its front matter names none."""
    if key_from == "title" and item.record is not None:
        base = slug(item.record.title)
    else:
        stem = item.rel.rsplit(".", 1)[0] if "." in item.rel.rsplit("/", 1)[-1] else item.rel
        base = slug(stem)
    if not base:
        base = "note-" + _short(item.rel or item.source)
    prefix = PREFIX.get(kind, "")
    if prefix and not base.startswith(prefix):
        base = prefix + base
    if not prefix and kind_of_key(base) != "knowledge":
        base = "note-" + base  # inc-/task- are reserved for incidents and tasks
    return _fit(base, item.rel)


def settle_keys(items: list[Item], manifest: dict, *, kind: str, key_from: str,
                tags: list[str]) -> list[dict[str, str]]:
    """Give every readable item its key; resolve "superseded by" links to keys; add --tags.

    Returns the `duplicates` report: files whose derived key was taken by an earlier file."""
    duplicates: list[dict[str, str]] = []
    taken: dict[str, Item] = {}
    by_rel: dict[tuple[str, str], str] = {}
    derived: list[tuple[Item, str]] = []
    for item in items:  # keys the sources give
        if item.skip or item.record is None:
            continue
        if item.key_given:
            _take(item, item.record.key, taken)
        elif key_from == "front-matter" and item.root is not None:
            item.skip = "no key in the front matter (--key-from front-matter)"
        else:
            derived.append((item, derive_key(item, kind, key_from)))
    later = []
    overlapped: set[int] = set()  # items keyed by an import of an enclosing or enclosed folder
    for item, base in derived:  # keys an earlier import gave these files: they stay theirs
        old = manifest.get(item.root or "", {}).get(item.rel)
        stem = base[:KEY_MAX - 7].rstrip("-")
        elsewhere = _key_from_overlapping_import(manifest, item)
        if old and old not in taken and (old == base or old == elsewhere
                                         or re.fullmatch(re.escape(stem) + r"-[0-9a-f]{6}", old)):
            _take(item, old, taken)  # what this folder's import gave it (a subfolder's: its parent's key)
            if old == elsewhere:
                overlapped.add(id(item))
        elif elsewhere and elsewhere not in taken:
            _take(item, elsewhere, taken)  # the same file imported before from a parent (or child) folder
            overlapped.add(id(item))
        else:
            later.append((item, base, stem))
    for item, base, stem in later:
        _take(item, base if base not in taken else _fit(f"{stem}-{_short(item.rel)}", item.rel), taken)
    for item, base in derived:  # a key another folder's import gave the same file is no duplicate
        if item.skip is None and item.record.key != base and id(item) not in overlapped:
            duplicates.append({"path": item.source, "key": item.record.key, "same_as": base})
    for item in items:
        if item.skip is None and item.record is not None and item.root is not None:
            by_rel[(item.root, item.rel)] = item.record.key
    for item in items:
        if item.skip or item.record is None:
            continue
        record = item.record
        for link in item.links:
            ref = _link_key(item, link, by_rel)
            if ref and ref not in record.refs:
                record.refs.append(ref)
        for tag in tags:
            if tag.lower() not in (t.lower() for t in record.tags):
                record.tags.append(tag)
    return duplicates


def _key_from_overlapping_import(manifest: dict, item: Item) -> str | None:
    """The key an import of an enclosing or enclosed folder gave this very file, so importing a
    subfolder after its parent (or the other way round) makes no duplicates."""
    if item.root is None:
        return None
    path = posixpath.join(item.root, item.rel)
    for root, entries in manifest.items():
        if root == item.root or not isinstance(entries, dict):
            continue
        if path.startswith(root.rstrip("/") + "/"):
            key = entries.get(path[len(root.rstrip("/")) + 1:])
            if key:
                return key
    return None


def _take(item: Item, key: str, taken: dict[str, Item]) -> None:
    if key in taken:
        item.skip = f"key '{key}' is also given by {taken[key].source}"
        return
    item.record.key = key
    taken[key] = item


def _link_key(item: Item, link: str, by_rel: dict[tuple[str, str], str]) -> str:
    """The key of a linked file in this import, else the link as written."""
    target = link.split("#", 1)[0]
    root = item.root
    if root is not None and target and "://" not in target:
        rel = posixpath.normpath(posixpath.join(posixpath.dirname(item.rel), target))
        for candidate in (rel, rel + ".md"):
            if (root, candidate) in by_rel:
                return by_rel[(root, candidate)]
        named = _adr_number(target)
        if named is not None:  # "superseded by ADR-0003": the file numbered 0003 in this import
            for (r, rel), key in by_rel.items():
                name = posixpath.basename(rel).lower()
                m = re.match(r"(?:adr[-_ ]?)?0*(\d+)(?:[-_. ]|$)", name)
                if r == root and m and int(m.group(1)) == named:
                    return key
    return link


def _adr_number(name: str) -> int | None:
    """3 for `ADR-0003`, `adr_3`, `ADR 0003` (an ADR named by its number), else None."""
    m = re.fullmatch(r"(?i)adr[-_ ]?0*(\d+)", name.strip())
    return int(m.group(1)) if m else None


def distinct_given_keys(items: list[Item]) -> None:
    taken: dict[str, str] = {}
    for item in items:
        if item.skip or item.record is None:
            continue
        if item.record.key in taken:
            item.skip = f"key '{item.record.key}' is also given by {taken[item.record.key]}"
        else:
            taken[item.record.key] = item.source


# -- the manifest (.git/kyb/imports.json): which key each imported file got -------------------------

def load_manifest(store) -> dict[str, dict[str, str]]:
    try:
        data = json.loads((Path(store.kyb_dir) / MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {r: {k: v for k, v in files.items() if isinstance(v, str)}
            for r, files in data.items() if isinstance(files, dict)}


def save_manifest(store, manifest: dict, items: list[Item], gone: list[dict]) -> None:
    for item in items:
        root = item.root
        if root is None or item.skip or item.record is None:
            continue
        manifest.setdefault(root, {})[item.rel] = item.record.key
    for m in gone:
        manifest.get(m["root"], {}).pop(m["rel"], None)
    kyb_dir = Path(store.kyb_dir)
    try:
        kyb_dir.mkdir(parents=True, exist_ok=True)
        tmp = kyb_dir / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(manifest, sort_keys=True, indent=0))
        os.replace(tmp, kyb_dir / MANIFEST)
    except OSError:
        pass  # a lost manifest costs stable duplicate keys and missing-file reports, not records


def missing_files(manifest: dict, seen: dict[str, set[str]], srcs) -> list[dict]:
    """Files imported before from a folder imported now that are no longer there."""
    out = []
    shown = {s.root: s.shown[:len(s.shown) - len(s.rel)] for s in srcs if not s.direct and s.rel}
    for root in sorted({s.root for s in srcs if not s.direct}):
        for rel, key in sorted(manifest.get(root, {}).items()):
            if rel not in seen.get(root, set()):
                out.append({"root": root, "rel": rel, "key": key, "live": True,
                            "path": (shown.get(root) or (root + os.sep)) + rel})
    return out
