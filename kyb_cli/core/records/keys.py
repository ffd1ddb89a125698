"""THE key <-> path <-> kind authority: which file holds a key, which key a file names, its kind.

A record is exactly `knowledge/<key>.md`, `incidents/<inc-key>.md` or `tasks/<task-key>.md`: a
regular file directly in its kind's directory, named by a valid key whose prefix matches that
directory (`inc-` incidents, `task-` tasks, anything else knowledge). The key comes from the path;
a different `key` in the front matter breaks a write rule (`load`). Every reader and writer — the
index, merge, check, the working tree, sync's checks and the doors — asks these functions, so the
index and a walk of Git can never disagree on what is a record (tests/test_sync_hostile.py).

`unsafe_path` is the rule for any path kyb would write from a tree: no component that leaves its
directory (`..`, `.`, empty) and no `.git` in any case or spelling (`.GIT`, `.git. `, `git~1`,
HFS+ ignorable characters), the same names Git's own fsck refuses.
"""

from __future__ import annotations

import re

KIND_DIRS = {"knowledge": "knowledge", "incident": "incidents", "task": "tasks"}
DIR_KINDS = {v: k for k, v in KIND_DIRS.items()}
RECORD_DIRS = tuple(KIND_DIRS.values())

KEY_MAX = 100
KEY_MESSAGE = "key must be a slug: [a-z0-9-], no leading/trailing dash, ≤100 chars"
_KEY_RE = re.compile(r"[a-z0-9-]+")


def is_valid_key(key: str) -> bool:
    """A slug of [a-z0-9-], 1..100 bytes, no leading or trailing dash (also a safe file name)."""
    return (
        0 < len(key.encode()) <= KEY_MAX
        and _KEY_RE.fullmatch(key) is not None
        and not key.startswith("-")
        and not key.endswith("-")
    )


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


def is_record_candidate(path: str) -> bool:
    """A `*.md` file directly in a record directory: a record, or a file breaking the key rules."""
    parts = path.split("/")
    return len(parts) == 2 and parts[0] in DIR_KINDS and parts[1].endswith(".md") and len(parts[1]) > 3


def path_problem(path: str) -> str | None:
    """Why a record candidate is not a record path (not a slug, a key of another kind's directory)."""
    key = path.split("/", 1)[1][:-3]
    if not is_valid_key(key):
        return f"'{key}' is not a valid key ({KEY_MESSAGE})"
    if path_of_key(key) != path:
        return f"the key '{key}' belongs at {path_of_key(key)}, not {path}"
    return None


def key_of_path(path: str) -> str | None:
    """The key a record path names, or None for files that are not records (see the module doc)."""
    if not is_record_candidate(path):
        return None
    key = path.split("/", 1)[1][:-3]
    if not is_valid_key(key) or path_of_key(key) != path:
        return None
    return key


# -- what a path may be ------------------------------------------------------------------------------

# Characters HFS+ ignores when comparing names (so `.g\u200cit` is `.git` there), as Git's fsck does.
# A deletion table for str.translate: the same characters as the class [\u200b-\u200f\u202a-\u202e
# \u2060-\u2064\u206a-\u206f\ufeff], without compiling a regex on every `kyb query`'s import.
_IGNORABLE = dict.fromkeys([*range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2065),
                            *range(0x206A, 0x2070), 0xFEFF])


def unsafe_component(name: str) -> str | None:
    """Why one path component may never be written (traversal, `.git` in any case or spelling)."""
    if name in ("", ".", ".."):
        return f"a '{name}' path component (it would leave its directory)"
    if "\\" in name or "\0" in name:
        return "a backslash or NUL in a file name"
    folded = name.translate(_IGNORABLE).lower()
    stem = folded.split(":", 1)[0].rstrip(" .")  # NTFS drops trailing dots/spaces and streams
    if stem == ".git" or folded.startswith("git~"):
        return "a .git path component (in any case or spelling): nothing under .git is written from a tree"
    return None


def unsafe_path(path: str) -> str | None:
    """Why a repository-relative path may never be written, or None (every component is checked)."""
    if path.startswith("/"):
        return "an absolute path"
    for part in path.split("/"):
        reason = unsafe_component(part)
        if reason is not None:
            return reason
    return None
