"""THE key <-> path <-> kind authority: which file holds a key, which key a file names, its kind.

A record is exactly `knowledge/<key>.md`, `incidents/<inc-key>.md` or `tasks/<task-key>.md`; the
kind follows from the key prefix (`inc-` incident, `task-` task, anything else knowledge) and is
never stored. Every reader and writer (the index, merge, check, the doors) asks these functions.
"""

from __future__ import annotations

KIND_DIRS = {"knowledge": "knowledge", "incident": "incidents", "task": "tasks"}
DIR_KINDS = {v: k for k, v in KIND_DIRS.items()}
RECORD_DIRS = tuple(KIND_DIRS.values())


def kind_of_key(key: str) -> str:
    """The kind a key belongs to, from its reserved prefix."""
    if key.startswith("inc-"):
        return "incident"
    if key.startswith("task-"):
        return "task"
    return "knowledge"


def path_of_key(key: str) -> str:
    """Repository-relative path of a key's file (`knowledge/<key>.md`, ...)."""
    return f"{KIND_DIRS[kind_of_key(key)]}/{key}.md"


def key_of_path(path: str) -> str | None:
    """The key a record path names, or None for files that are not records."""
    parts = path.split("/")
    if len(parts) != 2 or parts[0] not in DIR_KINDS or not parts[1].endswith(".md"):
        return None
    return parts[1][:-3]
