"""THE key <-> path <-> kind authority: which file holds a key, which key a file names, its kind.

A record is `knowledge/<h>/<key>.md`, `incidents/<h>/<inc-key>.md` or `tasks/<h>/<task-key>.md`,
`<h>` the first two hex characters of sha1(key) (`bucket`: 256 fan-out directories, uniform whatever
the keys' prefixes, so a write rewrites the root, its kind's tree of 256 entries and one small bucket,
not a tree of every key; issue 39). The old flat shape `knowledge/<key>.md` is still a record path
(`old_path_of_key`): stores written before the fan-out are read as they are and moved by one
`Kyb-Action: migrate` commit (canon/migrate.py). A record is a regular file named by a valid key
whose prefix matches its kind's directory (`inc-` incidents, `task-` tasks, anything else
knowledge), at one of those two paths; a wrong bucket or a deeper path is not a record. The key comes from the path;
a different `key` in the front matter breaks a write rule (`load`). Every reader and writer — the
index, merge, check, the working tree, sync's checks and the doors — asks these functions, so the
index and a walk of Git can never disagree on what is a record (tests/test_sync_hostile.py).

`unsafe_path` is the rule for any path kyb would write from a tree: no component that leaves its
directory (`..`, `.`, empty) and no `.git` in any case or spelling (`.GIT`, `.git. `, `git~1`,
HFS+ ignorable characters), the same names Git's own fsck refuses.
"""

from __future__ import annotations

import re

try:  # the builtin sha1 alone: hashlib loads OpenSSL (~3 ms of every `kyb query`, which names paths)
    from _sha1 import sha1 as _sha1
except ImportError:  # an interpreter built without it
    from hashlib import sha1 as _sha1

KIND_DIRS = {"knowledge": "knowledge", "incident": "incidents", "task": "tasks"}
DIR_KINDS = {v: k for k, v in KIND_DIRS.items()}
RECORD_DIRS = tuple(KIND_DIRS.values())

KEY_MAX = 100
KEY_MESSAGE = "key must be a slug: [a-z0-9-], no leading/trailing dash, ≤100 chars"
_KEY_RE = re.compile(r"[a-z0-9-]+")


def is_valid_key(key: str) -> bool:
    """A slug of [a-z0-9-], 1..100 bytes, no leading or trailing dash (also a safe file name)."""
    return (
        0 < (len(key) if key.isascii() else len(key.encode())) <= KEY_MAX  # ASCII: a byte a character
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


def bucket(key: str) -> str:
    """The fan-out directory of a key: the first two hex characters of sha1(key utf-8)."""
    return _sha1(key.encode()).hexdigest()[:2]


def path_of_key(key: str) -> str:
    """Repository-relative path of a key's file (`knowledge/<h>/<key>.md`, ...): where kyb writes it."""
    return f"{KIND_DIRS[kind_of_key(key)]}/{bucket(key)}/{key}.md"


def old_path_of_key(key: str) -> str:
    """The key's path in the flat shape before the fan-out (`knowledge/<key>.md`): read, never written."""
    return f"{KIND_DIRS[kind_of_key(key)]}/{key}.md"


def paths_of_key(key: str) -> tuple[str, str]:
    """Both paths a key's file may have in a commit: the fanned one first, then the old flat one."""
    return path_of_key(key), old_path_of_key(key)


def _candidate_key(path: str) -> str | None:
    parts = path.split("/")
    if not (2 <= len(parts) <= 3 and parts[0] in DIR_KINDS and parts[-1].endswith(".md") and len(parts[-1]) > 3):
        return None
    return parts[-1][:-3]


def is_record_candidate(path: str) -> bool:
    """A `*.md` file in a record directory or one level below it: a record, or a file breaking the
    key rules (a wrong bucket, a key of another kind, not a slug)."""
    return _candidate_key(path) is not None


def path_problem(path: str) -> str | None:
    """Why a record candidate is not a record path (not a slug, another kind's directory, a wrong bucket)."""
    return _key_problem(path, _candidate_key(path) or path)


def served_path_problem(path: str) -> str | None:
    """`is_record_candidate` and `path_problem` in one pass, as served.load asks them (issue 39: a
    snapshot asks for every record): NOT_RECORD_PATH, path_problem's reason, or None."""
    key = _candidate_key(path)
    return NOT_RECORD_PATH if key is None else _key_problem(path, key)


def _key_problem(path: str, key: str) -> str | None:
    if not is_valid_key(key):
        return f"'{key}' is not a valid key ({KEY_MESSAGE})"
    if not _in_place(path, key):  # not one of paths_of_key(key)
        return f"the key '{key}' belongs at {path_of_key(key)}, not {path}"
    return None


def _in_place(path: str, key: str) -> bool:
    """`path in paths_of_key(key)` for a valid key, without building both paths (a snapshot asks for
    every live key): the directory of the key's kind, then the key's bucket or none (the old flat shape)."""
    head, _slash, rest = path.partition("/")
    return head == KIND_DIRS[kind_of_key(key)] and not (rest.count("/") and rest.partition("/")[0] != bucket(key))


NOT_RECORD_PATH = "not a record path (knowledge/, incidents/ or tasks/ <bucket>/<key>.md)"


def key_of_path(path: str) -> str | None:
    """The key a record path names, or None for files that are not records (see the module doc)."""
    key = _candidate_key(path)
    if key is None or not is_valid_key(key) or not _in_place(path, key):
        return None
    return key


def is_old_path(path: str) -> bool:
    """A record path of the old flat shape (`knowledge/<key>.md`)."""
    return path.count("/") == 1 and key_of_path(path) is not None


def by_key(changes: dict, key_of=None) -> dict:
    """Path -> blob changes (None: absent) as key -> blob: a key's file moved from its old path to
    its new one in the same commit is one entry, the blob it has now (a path that is not a record is
    dropped). The identity of a record is its key, never its path. `key_of`: key_of_path, or a
    memo of it (a history build asks for the same paths commit after commit)."""
    key_of = key_of or key_of_path
    out: dict = {}
    for path, blob in changes.items():
        key = key_of(path)
        if key is None:
            continue
        if blob is not None or key not in out:
            out[key] = blob
    return out


def doubled(paths) -> list[str]:
    """The keys that one tree holds at both their paths (old and new): a hostile or broken tree."""
    seen: dict[str, int] = {}
    for path in paths:
        key = key_of_path(path)
        if key is not None:
            seen[key] = seen.get(key, 0) + 1
    return sorted(k for k, n in seen.items() if n > 1)


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
    folded = (name if name.isascii() else name.translate(_IGNORABLE)).lower()  # the table is all non-ASCII
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
