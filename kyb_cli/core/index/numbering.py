"""Versions by number: `kyb get KEY --version N` and the numbers `kyb history` shows.

A key's content versions are numbered in history's order along the first-parent line (line.py), the
oldest 1, the current one M; a side version a sync merge did not keep sits below the current one. Negative numbers count back from the current version: -1 is the one
before it. A removal (retraction, archive) is not a content version and has no number.
"""

from __future__ import annotations

from typing import Any

from kyb_cli.core.errors import NotFound, UsageError

CONTENT = ("added", "modified")


def number(rows: list) -> list:
    """History rows (newest first) with `version` set on each content row (1 = the first)."""
    total = sum(1 for r in rows if r.change in CONTENT)
    n = total
    for r in rows:
        if r.change in CONTENT:
            r.labels["version"] = n
            n -= 1
        else:
            r.labels["version"] = None
    return rows


def sha_of_version(rows: list, key: str, version: int) -> str:
    """The sha of content version `version` of `key` (rows: its history, newest first)."""
    content = [r for r in rows if r.change in CONTENT]  # newest first
    total = len(content)
    if version == 0:
        raise UsageError("version counts from 1 (the first version) or back from -1 (the one before the "
                         "current); 0 names none", field="version")
    index = total - version if version > 0 else -version
    if not 0 <= index < total:
        if total == 1:
            span = "it has one version: --version 1"
        else:
            span = f"it has {total} versions: --version 1..{total}, or -1..-{total - 1} counting back"
        raise NotFound(f"'{key}' has no version {version}; {span}")
    return content[index].sha


def read_version(store: Any, key: str, version: int):
    """The Version of `key` numbered `version` (see the module docstring)."""
    from kyb_cli.core.index.line import along_line
    from kyb_cli.core.index.reads import history, read

    sha = sha_of_version(along_line(store, key, history(store, key)), key, version)
    return read(store, key, at=sha)
