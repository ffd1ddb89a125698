"""What changed between two versions of one record: the one diff every door shows.

`kyb diff KEY [FROM] [TO]`, the MCP `diff` tool and `GET /knowledge/{key}/diff` all call `diff()`.
The text is a unified diff of the record file as kyb stores it (TOML front matter, then the body),
so fields and body read the way `git show` would show them; `fields` lists each front-matter field
that changed with its old and new value, for clients that would rather not parse a diff.

Defaults: TO is the key's current content version (for retracted knowledge or an archived task, the
last version it had), FROM the content version before TO along the first-parent line (core/index/line.py;
a version that lost a sync merge is skipped) (none for the first version: every line is
added). A FROM or TO given is any revision Git resolves; the record is read as it stood there, as
`kyb get KEY --at REV` reads it, with the same errors.
"""

from __future__ import annotations

import difflib
from typing import Any

from kyb_cli.core.errors import NotFound


def diff(store: Any, key: str, from_rev: str | None = None, to_rev: str | None = None) -> dict[str, Any]:
    """The diff between two versions of `key` (see the module docstring for the defaults)."""
    from kyb_cli.core.index import reads

    from kyb_cli.core.index.line import along_line

    content: list[str] | None = None
    if to_rev is None or from_rev is None:
        rows = along_line(store, key, reads.history(store, key))
        # a side version a merge did not keep is never the "before" of the kept one
        content = [r.sha for r in rows if r.change != "deleted" and not r.labels.get("lost_merge")]
        if not content:
            raise NotFound(f"'{key}' has no content version to compare")
    new = reads.read(store, key, at=to_rev if to_rev is not None else content[0])
    if from_rev is not None:
        old = reads.read(store, key, at=from_rev)
    else:
        # the content version before TO's version along the line (history is newest first)
        before = content[content.index(new.sha) + 1:] if new.sha in content else []
        old = reads.read(store, key, at=before[0]) if before else None
    return compare(key, old, new)


def compare(key: str, old: Any | None, new: Any) -> dict[str, Any]:
    """The reply for two `Version`s (old may be None: the record did not exist before)."""
    old_text = old.record.to_markdown() if old is not None else ""
    new_text = new.record.to_markdown()
    path = new.record.path
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
        fromfile=f"a/{path}" + (f" {old.sha[:12]}" if old is not None else ""),
        tofile=f"b/{path} {new.sha[:12]}", n=3)
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    old_fields = old.record.front_matter() if old is not None else {}
    new_fields = new.record.front_matter()
    fields = [{"field": name, "from": old_fields.get(name), "to": new_fields.get(name)}
              for name in _ordered(old_fields, new_fields) if old_fields.get(name) != new_fields.get(name)]
    old_body = old.record.body if old is not None else ""
    return {
        "key": key,
        "from": _side(old),
        "to": _side(new),
        "changed": old_text != new_text,
        "fields": fields,
        "body_changed": old_body.strip() != new.record.body.strip(),
        "diff": text,
    }


def _ordered(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    names = list(a)
    names += [n for n in b if n not in a]
    return names


def _side(version: Any | None) -> dict[str, Any] | None:
    if version is None:
        return None
    return {"sha": version.sha, "committed_at": version.committed_at, "state": version.state,
            "is_head": version.is_head}

