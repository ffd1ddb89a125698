"""Random store histories for the property test: writes, retractions, closes, hand commits, merges, resets.

Every step is a plain Git commit made with pygit2 (kyb's own writes are commits of exactly this
shape), so one generator covers what kyb writes and what people and other tools write by hand.
Times are chosen by the generator: increasing mostly, sometimes equal or going backwards, as real
clocks on several machines do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pygit2

KEYS = ("alpha", "beta", "gamma", "inc-one", "task-two", "task-three")
WORDS = ("port", "cache", "disk", "queue", "token", "route")


def record_bytes(key: str, body: str, *, status: str = "") -> bytes:
    lines = ["+++", f'key = "{key}"', f'title = "{key.title()}"']
    if key.startswith("inc-"):
        lines += ['service = "svc"', 'severity = "low"', f'status = "{status or "open"}"']
        if status == "resolved":
            lines.append('resolution = "fixed"')
    elif key.startswith("task-"):
        lines.append(f'status = "{status or "open"}"')
        if status in ("done", "dropped"):
            lines.append('resolution = "finished"')
    lines.append(f'tags = ["{body.split()[0]}"]')
    lines.append("+++")
    return ("\n".join(lines) + f"\n\n{body}\n").encode()


def path_of(key: str) -> str:
    return ("incidents" if key.startswith("inc-") else "tasks" if key.startswith("task-") else "knowledge") + f"/{key}.md"


def _set(repo: pygit2.Repository, tree: pygit2.Tree | None, path: str, blob: pygit2.Oid | None) -> pygit2.Oid:
    top, name = path.split("/")
    root = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    existing = root.get(top)
    sub = repo.TreeBuilder(repo[existing.id]) if existing is not None else repo.TreeBuilder()
    if blob is None:
        if sub.get(name) is not None:
            sub.remove(name)
    else:
        sub.insert(name, blob, pygit2.enums.FileMode.BLOB)
    subtree = sub.write()
    if len(repo[subtree]) == 0:
        if existing is not None:
            root.remove(top)
    else:
        root.insert(top, subtree, pygit2.enums.FileMode.TREE)
    return root.write()


@dataclass
class History:
    """Applies steps to the repository at `path`; `log` says what was done (for failure messages)."""

    path: Path
    when: int = 1_767_225_600
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.repo = pygit2.Repository(str(self.path))

    def _sig(self, dt: int) -> pygit2.Signature:
        self.when += dt
        return pygit2.Signature("h", "h@example.invalid", max(0, self.when), 0)

    def head(self) -> pygit2.Commit:
        return self.repo.head.peel(pygit2.Commit)

    def commit(self, path: str, data: bytes | None, dt: int, message: str,
               parent: pygit2.Commit | None = None, ref: str | None = "HEAD") -> pygit2.Oid:
        base = parent or self.head()
        blob = self.repo.create_blob(data) if data is not None else None
        tree = _set(self.repo, base.tree, path, blob)
        sig = self._sig(dt)
        return self.repo.create_commit(ref, sig, sig, message, tree, [base.id])

    def step(self, op: str, key: str, word: str, dt: int, pick: int) -> None:
        path = path_of(key)
        present = path in self.head().tree if "/" in path else False
        try:
            self.head().tree[path]
            present = True
        except KeyError:
            present = False
        if op == "write":
            self.commit(path, record_bytes(key, f"{word} {key} v{len(self.log)}"), dt, f"kyb: add {key}\n")
        elif op == "remove" and present:
            verb = "retract" if path.startswith("knowledge/") else "archive"
            self.commit(path, None, dt, f"kyb: {verb} {key}\n\nKyb-Reason: wrong\n")
        elif op == "close" and present and not path.startswith("knowledge/"):
            status = "resolved" if key.startswith("inc-") else "done"
            self.commit(path, record_bytes(key, f"{word} closed c{len(self.log)}", status=status), dt, f"kyb: close {key}\n")
            self.commit(path, None, 0, f"kyb: archive {key}\n")
        elif op == "hand":
            self.commit(path, record_bytes(key, f"{word} by hand h{len(self.log)}"), dt, "edited by hand\n")
        elif op == "merge":
            self._merge(key, word, dt, pick)
        elif op == "reset":
            commits = [c for c in self.repo.walk(self.head().id, pygit2.enums.SortMode.TOPOLOGICAL)]
            target = commits[min(pick, len(commits) - 1)]
            self.repo.reset(target.id, pygit2.enums.ResetMode.HARD)
        else:
            return
        self.log.append(f"{op} {key} {word} dt={dt} pick={pick}")

    def _merge(self, key: str, word: str, dt: int, pick: int) -> None:
        """A side line from an older commit with one write, merged back with a chosen side per path."""
        head = self.head()
        commits = [c for c in self.repo.walk(head.id, pygit2.enums.SortMode.TOPOLOGICAL)]
        base = commits[min(pick % 3 + 1, len(commits) - 1)]
        side = self.commit(path_of(key), record_bytes(key, f"{word} side {key} s{len(self.log)}"), -dt, "side write\n",
                           parent=base, ref=None)
        side_commit = self.repo[side]
        theirs = pick % 2 == 0
        tree = self.repo.merge_trees(base.tree, head.tree, side_commit.tree,
                                     favor=pygit2.enums.MergeFavor.THEIRS if theirs else pygit2.enums.MergeFavor.OURS)
        if tree.conflicts is not None:  # modify/delete: take the favoured side's entry (or its absence)
            for ancestor, ours, other in list(tree.conflicts):
                pick_entry = other if theirs else ours
                path = (ancestor or ours or other).path
                del tree.conflicts[path]
                if pick_entry is not None:
                    tree.add(pick_entry)
        tree_id = tree.write_tree(self.repo)
        sig = self._sig(abs(dt) + 1)
        self.repo.create_commit("HEAD", sig, sig, "merge side\n", tree_id, [head.id, side])


OPS = ("write", "write", "write", "remove", "close", "hand", "merge", "reset")
