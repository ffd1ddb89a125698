"""A small world for sync tests: one bare remote (a local path) and clones of it, plus the invariants
every sync scenario must end with (nothing lost, history shows it, fsck clean, clones converge)."""

from __future__ import annotations

import itertools
import os
import subprocess
from pathlib import Path

import pygit2

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.kinds.knowledge import add_knowledge, retract_knowledge
from kyb_cli.core.records.keys import key_of_path
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.index import reads

TESTS_DIR = Path(__file__).resolve().parents[1]
ROOT_ENV = {"PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS_DIR), os.environ.get("PYTHONPATH", "")]))}
ATTR = Attribution("test-agent", "s1", "w1", "cli")
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}


def git(*args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=check)


class Clock:
    """Commit times under test control: each signature is one second later than the last (or pinned)."""

    def __init__(self, start: int = 1_800_000_000) -> None:
        self._next = itertools.count(start)
        self.pinned: int | None = None

    def signature(self) -> pygit2.Signature:
        when = self.pinned if self.pinned is not None else next(self._next)
        return pygit2.Signature("t", "t@example.invalid", when, 0)


class World:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.remote = root / "remote.git"
        git("init", "--quiet", "--bare", "-b", "main", str(self.remote))
        self.written: dict[str, set[str]] = {}  # key -> shas of every write anywhere
        self.sync(self.clone("seed"))  # the team's store exists on the remote before others clone it

    def clone(self, name: str) -> Store:
        from kyb_cli.core.sync.flow import clone

        return clone(str(self.remote), self.root / name)

    def add(self, store: Store, key: str, body: str) -> str:
        result = add_knowledge(store, key=key, title=key.title(), body=body, tags=[], refs=[], attribution=ATTR)
        assert result.changed
        self.written.setdefault(key, set()).add(result.sha)
        return result.sha

    def retract(self, store: Store, key: str, reason: str = "wrong") -> str:
        result = retract_knowledge(store, key, reason, ATTR)
        self.written.setdefault(key, set()).add(result.sha)
        return result.sha

    def sync(self, store: Store) -> dict:
        from kyb_cli.core.sync.flow import sync

        return sync(store, attribution=ATTR)

    def settle(self, stores: list[Store]) -> None:
        """Sync every clone twice in turn: afterwards all have the remote's head."""
        for _ in range(2):
            for store in stores:
                self.sync(store)

    def check(self, stores: list[Store]) -> None:
        """Nothing lost, history shows it, fsck clean, working tree = HEAD, every clone the same tree."""
        trees = set()
        for store in stores:
            store = Store(store.path)
            head = store.head_commit()
            trees.add(str(head.tree.id))
            for key, shas in self.written.items():
                history = {row.sha for row in reads.history(store, key)}
                for sha in shas:
                    assert sha == str(head.id) or store.repo.descendant_of(head.id, pygit2.Oid(hex=sha)), \
                        f"{sha} of {key} not reachable from {store.path.name}"
                    assert sha in history, f"{sha} of {key} missing from history in {store.path.name}"
            fsck = git("fsck", "--no-progress", "--strict", cwd=store.path, check=False)
            assert fsck.returncode == 0 and "error" not in fsck.stderr and "missing" not in fsck.stdout, fsck
            status = git("status", "--porcelain", "--untracked-files=all", cwd=store.path).stdout
            assert status == "", f"{store.path.name} working tree differs from HEAD: {status}"
            on_disk = {str(p.relative_to(store.path)) for d in ("knowledge", "incidents", "tasks")
                       for pattern in ("*.md", "*/*.md") for p in (store.path / d).glob(pattern)}
            in_tree = {p for p in _paths(head.tree) if key_of_path(p)}
            assert on_disk == in_tree
        remote_head = git("rev-parse", "main", cwd=self.remote).stdout.strip()
        remote_tree = git("rev-parse", "main^{tree}", cwd=self.remote).stdout.strip()
        assert trees == {remote_tree}, "clones did not converge"
        for store in stores:
            assert Store(store.path).head_sha() == remote_head


def _paths(tree: pygit2.Tree, prefix: str = "") -> list[str]:
    out = []
    for entry in tree:
        if entry.type_str == "tree":
            out += _paths(entry, f"{prefix}{entry.name}/")
        else:
            out.append(prefix + entry.name)
    return out
