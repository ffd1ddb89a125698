"""The canon: a Git repository of record files, opened through pygit2 (open/init, refs, blob reads).

Plumbing, not porcelain. Writes go through `Store.writing()` (transaction.py: one commit per write,
under the lock); reads of what is true at a revision go through the index (index/reads.py). This
module only knows how to open or create a store, resolve revisions and read blobs.
Write time is commit time: the version id is the commit sha and its time is the commit's time.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pygit2

from kyb_cli.core.errors import NotFound, StoreError
from kyb_cli.core.records.served import load
from kyb_cli.core.records.model import Record
from kyb_cli.core.records.secrets import shown

DEFAULT_AUTHOR = ("kyb", "kyb@localhost")


STORE_MARK = "kyb.store"  # `git config kyb.store true`: this repository is a kyb store, deliberately


def init_store(path: Path) -> "Store":
    """Create a store (a Git repository on branch main with one empty commit, marked as a store), or
    mark the existing repository at `path` as one: the deliberate way to let kyb write to it."""
    path = Path(path)
    if (path / ".git").exists():
        store = Store(path)
        store.mark()
        return store
    if path.exists() and any(path.iterdir()):
        raise StoreError(f"{path} exists and is not empty; kyb init wants a new or empty directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        repo = pygit2.init_repository(str(path), bare=False, initial_head="main")
    except (OSError, pygit2.GitError) as exc:
        raise StoreError(f"cannot create a store at {path}: {exc}") from None
    store = Store(path, repo=repo)
    store.commit_empty_root()
    store.mark()
    return store


def open_store(path: Path, *, create: bool = False) -> "Store":
    """Open the store at `path`; with `create`, make it first if it does not exist yet."""
    path = Path(path)
    if create and not (path / ".git").exists() and not (path.exists() and any(path.iterdir())):
        return init_store(path)
    return Store(path)


class Store:
    """A kyb store: the Git repository at `path` (its working tree holds only live records)."""

    def __init__(self, path: Path, repo: pygit2.Repository | None = None) -> None:
        self.path = Path(path)
        if repo is None:
            if not self.path.exists():
                raise StoreError(f"no store at {self.path} — create one with `kyb init {self.path}`")
            try:
                # NO_SEARCH: a path inside some other repository (a project checkout) is not a store.
                repo = pygit2.Repository(str(self.path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
            except pygit2.GitError:
                raise StoreError(
                    f"{self.path} is not a kyb store (no Git repository) — create one with `kyb init {self.path}`"
                ) from None
            if repo.is_bare:
                raise StoreError(f"{self.path} is a bare Git repository; a kyb store needs a working tree")
        self.repo = repo
        from kyb_cli.core.canon.headfile import refuse_linked_kyb_dir

        self.git_dir = refuse_linked_kyb_dir(Path(repo.path), self.path)  # never write through a link
        self.kyb_dir = self.git_dir / "kyb"

    # -- revisions --------------------------------------------------------------------------------

    def head_commit(self) -> pygit2.Commit | None:
        if self.repo.head_is_unborn:
            return None
        try:
            return self.repo.head.peel(pygit2.Commit)
        except pygit2.GitError as exc:
            raise StoreError(f"cannot read HEAD: {exc}") from None

    def head_sha(self) -> str | None:
        commit = self.head_commit()
        return str(commit.id) if commit else None

    def resolve(self, rev: str) -> pygit2.Commit:
        """Any revision Git can resolve (sha, short sha, HEAD~2, tag, branch) as a commit."""
        if not rev or rev.startswith("-"):
            raise NotFound(f"unknown revision '{shown(rev)}'")
        try:
            obj = self.repo.revparse_single(rev)
            return obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            raise NotFound(f"unknown revision '{shown(rev)}'") from None

    # -- objects ----------------------------------------------------------------------------------

    def blob_bytes(self, oid: pygit2.Oid) -> bytes:
        """The content of the blob `oid`."""
        return self.repo[oid].data

    def parse_blob(self, oid: pygit2.Oid, path: str) -> Record:
        """The record stored in blob `oid` at `path`, through the key authority (records/keys.py):
        RecordFormatError when it does not parse or breaks a write rule (a held-out version)."""
        return load(path, self.blob_bytes(oid))

    def signature(self) -> pygit2.Signature:
        """Who commits: GIT_AUTHOR_NAME/EMAIL, else the repository's user.name/email, else kyb."""
        name = email = None
        try:
            config = self.repo.config
            name = config["user.name"] if "user.name" in config else None
            email = config["user.email"] if "user.email" in config else None
        except (pygit2.GitError, KeyError, OSError):
            pass
        name = os.environ.get("GIT_AUTHOR_NAME") or name or DEFAULT_AUTHOR[0]
        email = os.environ.get("GIT_AUTHOR_EMAIL") or email or DEFAULT_AUTHOR[1]
        return pygit2.Signature(name, email, int(time.time()), 0)

    def commit_empty_root(self) -> None:
        """Start an empty store's history: HEAD's branch gets one commit with an empty tree."""
        sig = self.signature()
        self.repo.create_commit("HEAD", sig, sig, "kyb: init store\n", self.repo.TreeBuilder().write(), [])

    # -- is this a store? --------------------------------------------------------------------------

    def mark(self) -> None:
        """Mark this repository as a kyb store (`git config kyb.store true`)."""
        try:
            self.repo.config[STORE_MARK] = True
        except (pygit2.GitError, OSError) as exc:
            raise StoreError(f"cannot mark {self.path} as a kyb store: {exc}") from None

    def is_kyb_store(self) -> bool:
        """Marked (`kyb init`), or laid out as one: at HEAD no top-level directory but the record
        directories (and dot-directories), and either a record directory or a kyb commit at HEAD.
        That recognises stores made by an older kyb, clones of stores and stores made by hand, and
        refuses ordinary project repositories (which have other directories) and empty ones."""
        try:
            if self.repo.config.get_bool(STORE_MARK):
                return True
        except (KeyError, pygit2.GitError, ValueError):
            pass
        head = self.head_commit()
        if head is None:
            return False
        from kyb_cli.core.canon.text import message_of
        from kyb_cli.core.records.keys import RECORD_DIRS

        dirs = {entry.name for entry in head.tree if entry.type_str == "tree"}
        if any(name not in RECORD_DIRS and not name.startswith(".") for name in dirs):
            return False
        return bool(dirs & set(RECORD_DIRS)) or message_of(head).startswith("kyb: ")

    def require_kyb_store(self) -> None:
        """StoreError (exit 4) unless this is a kyb store: kyb writes only to stores."""
        if not self.is_kyb_store():
            shown = os.path.normpath(self.path)
            raise StoreError(
                f"{shown} is a Git repository but not a kyb store; kyb writes only to stores, so "
                f"nothing was written — check --store, KYB_STORE or .kyb.toml, or if it should hold "
                f"kyb records, mark it deliberately with `kyb init {shown}`", path=shown)

    # -- writes (canon/transaction.py) ------------------------------------------------------------

    def locked(self):
        """Hold the writer lock, having first finished what a writer or a sync that died left behind."""
        from kyb_cli.core.canon.transaction import locked

        return locked(self)

    def writing(self, attribution: Any):
        """Hold the writer lock; every put/remove inside is one commit on top of the fresh HEAD."""
        from kyb_cli.core.canon.transaction import writing

        return writing(self, attribution)
