"""The canon: a Git repository of record files, read and written through pygit2.

Plumbing, not porcelain: a write builds the new tree in memory from HEAD's tree, makes one commit
that touches only that record's file, moves the branch, then brings that one file of the working
tree and the Git index along. Other files, staged or not, are never touched.

Nothing is ever lost:
- writers are serialized by `lock.exclusive` (bounded wait, released by the kernel if a writer dies);
- the branch moves in one atomic ref update, so the canon is exactly as before or exactly as after;
- a small journal (`.git/kyb/pending.json`) lets the next writer finish bringing the working tree
  along if a process died between the ref update and the file write;
- a working-tree file with uncommitted hand edits is never overwritten (Rejected instead).

Write time is commit time: the version id is the commit sha and its time is the commit's time.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pygit2

from kyb_cli.core import lock as store_lock
from kyb_cli.core.attribution import Attribution, parse_trailers
from kyb_cli.core.errors import NotFound, Rejected, StoreError
from kyb_cli.core.record import (
    RECORD_DIRS,
    Record,
    RecordFormatError,
    key_of_path,
    kind_of_key,
    parse,
    path_of_key,
)
from kyb_cli.core.timefmt import rfc3339
from kyb_cli.core.validate import check_key
from kyb_cli.core.versions import (  # noqa: F401
    HistoryRow, Version, change_of, history_row, ranked_tags, retracted_error, retraction_of,
)

BLOB_MODE = pygit2.enums.FileMode.BLOB
TREE_MODE = pygit2.enums.FileMode.TREE
DEFAULT_AUTHOR = ("kyb", "kyb@localhost")
SYNC_JOURNAL = "sync-pending.json"  # sync.py's journal under .git/kyb/; a writer finishes what it left

Entry = tuple[pygit2.Oid, int]  # (blob id, file mode); None means "absent"


@dataclass
class WriteResult:
    key: str
    changed: bool
    action: str | None = None  # created | updated | retracted | archived
    sha: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        if not self.changed:
            return {"changed": False, "key": self.key}
        out: dict[str, Any] = {"action": self.action, "changed": True, "key": self.key, "sha": self.sha}
        out.update(self.extras)
        return out


def init_store(path: Path) -> "Store":
    """Create a store (a Git repository on branch main with one empty commit) or open an existing one."""
    path = Path(path)
    if (path / ".git").exists():
        return Store(path)
    if path.exists() and any(path.iterdir()):
        raise StoreError(f"{path} exists and is not empty; kyb init wants a new or empty directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        repo = pygit2.init_repository(str(path), bare=False, initial_head="main")
    except (OSError, pygit2.GitError) as exc:
        raise StoreError(f"cannot create a store at {path}: {exc}") from None
    store = Store(path, repo=repo)
    sig = store._signature()
    tree = repo.TreeBuilder().write()
    repo.create_commit("HEAD", sig, sig, "kyb: init store\n", tree, [])
    return store


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
        self.git_dir = Path(repo.path)
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
            raise NotFound(f"unknown revision '{rev}'")
        try:
            obj = self.repo.revparse_single(rev)
            return obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            raise NotFound(f"unknown revision '{rev}'") from None

    def _blob_text(self, oid: pygit2.Oid) -> bytes:
        return self.repo[oid].data

    def _parse_blob(self, oid: pygit2.Oid, path: str) -> Record:
        return parse(self._blob_text(oid), path=path)

    # -- history ----------------------------------------------------------------------------------

    def _changes(self, path: str, start: pygit2.Commit) -> Iterator[tuple[pygit2.Commit, str, pygit2.Oid | None]]:
        """(commit, change, blob) for each commit reachable from `start` that changed `path`, newest first.

        A merge counts only when its result differs from every parent (a resolution that wrote new
        content); otherwise the change is already listed at the commit that made it.
        """
        walker = self.repo.walk(start.id, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME)
        for commit in walker:
            blob = blob_at(commit, path)
            change = change_of(blob, [blob_at(p, path) for p in commit.parents])
            if change is not None:
                yield commit, change, blob

    def history(self, key: str) -> list[HistoryRow]:
        """Every change of a key, newest first; NotFound when it never existed."""
        check_key(key)
        head = self.head_commit()
        rows: list[HistoryRow] = []
        if head is not None:
            for commit, change, _blob in self._changes(path_of_key(key), head):
                rows.append(history_row(str(commit.id), commit.commit_time, change, commit.message,
                                        f"{commit.author.name} <{commit.author.email}>"))
        if not rows:
            raise NotFound(f"no history for '{key}'")
        return rows

    # -- reads ------------------------------------------------------------------------------------
    # The reference reads: a walk over Git history. The CLI answers the same questions from the
    # sidecar index (index/reads.py) and falls back to these when the index cannot give their answer.

    def _origin(self, path: str, commit: pygit2.Commit) -> pygit2.Commit:
        """The commit that made `path` what it is at `commit` (its blob, or its absence).

        Walks back through parents that hold the same blob (Git's TREESAME simplification), so the
        cost is the length of that chain, not of the whole history, and a merge that took one side's
        version points at the commit on that side that wrote it. For a path absent at `commit` the
        answer is the commit that deleted it, or a root commit when it never existed.
        """
        blob = blob_at(commit, path)
        while True:
            for parent in commit.parents:
                if blob_at(parent, path) == blob:
                    commit = parent
                    break
            else:
                return commit

    def read(self, key: str, at: str | None = None) -> Version:
        """The record as of HEAD (or `at`), with its version's sha and time and its state.

        An archived incident or task comes back with state `archived`. A retracted knowledge key is
        NotFound, with details saying when and why, and which `--at` shows its last version.
        """
        check_key(key)
        if at is None:
            commit = self.head_commit()
            if commit is None:
                raise NotFound(f"no record '{key}'")
        else:
            commit = self.resolve(at)
        version = self._version_at(key, commit, at)
        if at is not None:
            try:
                current = self._version_at(key, self.head_commit(), None) if self.head_commit() else None
            except NotFound:
                current = None
            version.is_head = current is not None and current.sha == version.sha
        return version

    def _version_at(self, key: str, commit: pygit2.Commit, at: str | None) -> Version:
        path = path_of_key(key)
        blob = blob_at(commit, path)
        if blob is not None:
            origin = self._origin(path, commit)
            return Version(self._parse_blob(blob, path), str(origin.id), rfc3339(origin.commit_time), "active")
        end = self._origin(path, commit)
        if not end.parents:
            raise NotFound(f"no record '{key}'" + (f" at {at}" if at else ""))
        last = end.parents[0]
        origin = self._origin(path, last)
        last_blob = blob_at(last, path)
        assert last_blob is not None
        reason = parse_trailers(end.message).get("Kyb-Reason")
        version = Version(
            self._parse_blob(last_blob, path), str(origin.id), rfc3339(origin.commit_time),
            retraction_of(key), ended_sha=str(end.id), ended_at=rfc3339(end.commit_time), reason=reason,
        )
        if version.state == "retracted":
            raise retracted_error(key, version, end.short_id, origin.short_id, at)
        return version

    def live_records(self, rev: str | None = None) -> tuple[list[Record], list[RecordFormatError]]:
        """Every record file in the tree at HEAD (or `rev`), and the files that did not parse."""
        commit = self.head_commit() if rev is None else self.resolve(rev)
        records: list[Record] = []
        broken: list[RecordFormatError] = []
        if commit is None:
            return records, broken
        for directory in RECORD_DIRS:
            try:
                tree = commit.tree[directory]
            except KeyError:
                continue
            if not isinstance(tree, pygit2.Tree):
                continue
            for entry in tree:
                rel = f"{directory}/{entry.name}"
                if key_of_path(rel) is None or entry.type_str != "blob":
                    continue
                try:
                    records.append(self._parse_blob(entry.id, rel))
                except RecordFormatError as exc:
                    broken.append(exc)
        return records, broken

    def tags(self) -> list[dict[str, Any]]:
        """Tags of live records with counts, lowercased, most used first."""
        counts: dict[str, int] = {}
        records, _broken = self.live_records()
        for record in records:
            for tag in {t.lower() for t in record.tags}:
                counts[tag] = counts.get(tag, 0) + 1
        return ranked_tags(counts)

    # -- writes -----------------------------------------------------------------------------------

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the writer lock, having first finished what a writer or a sync that died left behind."""
        with store_lock.exclusive(self.kyb_dir / "write.lock"):
            self._recover()
            if (self.kyb_dir / SYNC_JOURNAL).exists():  # a sync died mid-way (issue 6)
                from kyb_cli.core.sync import recover

                recover(self)
            yield

    @contextmanager
    def writing(self, attribution: Attribution) -> Iterator["Transaction"]:
        """Hold the writer lock; every put/remove inside is one commit on top of the fresh HEAD."""
        with self.locked():
            before = self.head_sha()
            yield Transaction(self, attribution)
        if self.head_sha() != before:  # optional background sync (issue 6); never blocks the answer
            from kyb_cli.core.sync import after_write

            after_write(self)

    def put(self, record: Record, attribution: Attribution, **kwargs: Any) -> WriteResult:
        with self.writing(attribution) as tx:
            return tx.put(record, **kwargs)

    def retract(self, key: str, reason: str, attribution: Attribution) -> WriteResult:
        with self.writing(attribution) as tx:
            return tx.retract(key, reason)

    def _signature(self) -> pygit2.Signature:
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

    # -- crash recovery ---------------------------------------------------------------------------

    @property
    def _journal(self) -> Path:
        return self.kyb_dir / "pending.json"

    def _recover(self) -> None:
        """Finish or undo what a writer that died mid-write left behind (called under the lock).

        The journal exists only between "commit object written" and "working tree updated", so its
        presence means a kyb writer died in that window. If the branch already points at its commit,
        bring that one file (and its Git index entry) along; if not, the canon is exactly as before and
        only leftovers go: our temp file, and the `index.lock`/ref `.lock` files libgit2 may have left
        when killed mid-write (safe to remove: we hold the writer lock and the journal says they are ours).
        """
        try:
            data = json.loads(self._journal.read_text())
        except FileNotFoundError:
            return
        except (OSError, ValueError):
            data = None
        path = data.get("path") if isinstance(data, dict) else None
        for stale in self._stale_lock_files(data):
            stale.unlink(missing_ok=True)
        if isinstance(path, str) and key_of_path(path) is not None and self.repo.workdir is not None:
            target = Path(self.repo.workdir) / path
            for tmp in target.parent.glob(f".{target.name}.kyb-*.tmp"):
                tmp.unlink(missing_ok=True)
            if self.head_sha() == data.get("commit"):
                head = self.head_commit()
                assert head is not None
                self.update_worktree({path: _blob_entry(blob_at(head, path))})
        self._journal.unlink(missing_ok=True)

    def _stale_lock_files(self, data: Any) -> list[Path]:
        out = [self.git_dir / "index.lock"]
        branch = data.get("branch") if isinstance(data, dict) else None
        if isinstance(branch, str) and branch.startswith("refs/heads/") and ".." not in branch:
            out.append(self.git_dir / f"{branch}.lock")
        out.append(self.git_dir / "HEAD.lock")
        return [f for f in out if f.exists()]

    def update_worktree(self, changes: dict[str, Entry | None]) -> None:
        """Make the working-tree files and Git index entries of `changes` match their new entries
        (None: absent; a directory left empty goes too), in one index write."""
        repo = self.repo
        if repo.workdir is None or not changes:
            return
        root = Path(repo.workdir)
        for path, entry in changes.items():
            target = root / path
            if entry is None:
                target.unlink(missing_ok=True)
                for parent in target.parents:
                    if parent == root:
                        break
                    try:
                        parent.rmdir()
                    except OSError:
                        break
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.kyb-{os.getpid()}.tmp")
            tmp.write_bytes(repo[entry[0]].data)
            if entry[1] == pygit2.enums.FileMode.BLOB_EXECUTABLE:
                tmp.chmod(0o755)
            os.replace(tmp, target)
        index = repo.index
        index.read()
        for path, entry in changes.items():
            if entry is None:
                try:
                    index.remove(path)
                except (OSError, KeyError, pygit2.GitError):
                    pass
            else:
                index.add(path)
        index.write()


class Transaction:
    """Writes made while holding the lock; each method is one commit on the current HEAD."""

    def __init__(self, store: Store, attribution: Attribution) -> None:
        self.store = store
        self.attribution = attribution

    # reads that see the transaction's own writes

    def current(self, key: str) -> Record | None:
        """The record in HEAD's tree, or None."""
        head = self.store.head_commit()
        if head is None:
            return None
        path = path_of_key(key)
        blob = blob_at(head, path)
        return None if blob is None else self.store._parse_blob(blob, path)

    def stored(self, key: str) -> tuple[Record, bool] | None:
        """(record, archived): the live record, else for incidents and tasks the last archived version."""
        live = self.current(key)
        if live is not None:
            return live, False
        if kind_of_key(key) == "knowledge":
            return None
        try:
            version = self.store.read(key)
        except NotFound:
            return None
        return version.record, True

    def put(self, record: Record, *, action: str | None = None, validate: bool = True,
            reason: str | None = None) -> WriteResult:
        """Write a record (an upsert): one commit, or none when nothing would change."""
        if validate:
            from kyb_cli.core.validate import validate as validate_record

            validate_record(record)
        store = self.store
        path = record.path
        head = store.head_commit()
        old_blob = blob_at(head, path) if head is not None else None
        self._refuse_hand_edits(path, old_blob)
        new_bytes = record.to_markdown().encode("utf-8")
        if old_blob is not None:
            old_bytes = store._blob_text(old_blob)
            if old_bytes == new_bytes:
                return WriteResult(record.key, changed=False)
            try:
                if parse(old_bytes, path=path).to_markdown().encode("utf-8") == new_bytes:
                    return WriteResult(record.key, changed=False)
            except RecordFormatError:
                pass
        created = old_blob is None
        verb = action or ("add" if created else "update")
        blob = store.repo.create_blob(new_bytes)
        sha = self._commit(head, path, blob, verb, record.key, reason=reason)
        return WriteResult(record.key, changed=True, action="created" if created else "updated", sha=sha)

    def retract(self, key: str, reason: str) -> WriteResult:
        """Knowledge that was wrong leaves the tree; the commit records why."""
        check_key(key)
        if kind_of_key(key) != "knowledge":
            what = "an incident" if kind_of_key(key) == "incident" else "a task"
            closer = "kyb resolve" if kind_of_key(key) == "incident" else "kyb done"
            raise Rejected(f"'{key}' is {what}: finished work is closed with `{closer}`, not retracted")
        if not reason or not reason.strip():
            raise Rejected("retracting needs a reason: say why this knowledge was wrong (--reason)")
        return self._remove(key, "retract", "retracted", reason.strip())

    def archive(self, key: str) -> WriteResult:
        """A closed incident or task leaves the tree; its final version stays in history and search."""
        return self._remove(key, "archive", "archived", None)

    def _remove(self, key: str, verb: str, action: str, reason: str | None) -> WriteResult:
        store = self.store
        path = path_of_key(key)
        head = store.head_commit()
        old_blob = blob_at(head, path) if head is not None else None
        if old_blob is None:
            try:
                store.read(key)
            except NotFound as exc:
                if exc.details.get("state") == "retracted":
                    raise NotFound(f"'{key}' is already retracted") from None
                raise NotFound(f"no record '{key}'") from None
            raise NotFound(f"'{key}' is already archived")
        self._refuse_hand_edits(path, old_blob)
        sha = self._commit(head, path, None, verb, key, reason=reason)
        return WriteResult(key, changed=True, action=action, sha=sha)

    # plumbing

    def _refuse_hand_edits(self, path: str, committed: pygit2.Oid | None) -> None:
        """Refuse to overwrite a working-tree file (or staged entry) that differs from HEAD."""
        repo = self.store.repo
        if repo.workdir is None:
            return
        target = Path(repo.workdir) / path
        try:
            on_disk = target.read_bytes()
        except FileNotFoundError:
            on_disk = None
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {exc.strerror}") from None
        committed_bytes = None if committed is None else self.store._blob_text(committed)
        differs = on_disk != committed_bytes
        if not differs:
            try:
                repo.index.read()
                entry = repo.index[path]
                differs = committed is None or entry.id != committed
            except KeyError:
                differs = committed is not None and on_disk is not None
            except pygit2.GitError:
                differs = False
        if differs:
            raise Rejected(
                f"{path} has uncommitted changes in the store's working tree; kyb will not overwrite "
                f"them — commit them (git -C {self.store.path} commit {path}) or discard them "
                f"(git -C {self.store.path} checkout -- {path}) and write again"
            )

    def _commit(self, head: pygit2.Commit | None, path: str, blob: pygit2.Oid | None, verb: str,
                key: str, *, reason: str | None = None) -> str:
        store = self.store
        repo = store.repo
        change = {path: _blob_entry(blob)}
        tree = apply_changes(repo, head.tree if head is not None else None, change)
        message = f"kyb: {verb} {key}\n"
        if reason:
            message += f"\n{reason}\n"
        trailers = [("Kyb-Action", verb)]
        if reason:
            trailers.append(("Kyb-Reason", " ".join(reason.split())))
        trailers += self.attribution.trailers()
        message += "\n" + "".join(f"{k}: {v}\n" for k, v in trailers if v)
        sig = store._signature()
        parents = [head.id] if head is not None else []
        try:
            commit = repo.create_commit(None, sig, sig, message, tree, parents)
            store.kyb_dir.mkdir(parents=True, exist_ok=True)
            journal = store._journal
            tmp = journal.with_suffix(".tmp")
            branch = None if repo.head_is_detached else repo.lookup_reference("HEAD").target
            tmp.write_text(json.dumps({"commit": str(commit), "path": path, "branch": branch}))
            os.replace(tmp, journal)
            _fault("before-ref")
            _advance_head(repo, head, commit, message.split("\n", 1)[0])
            _fault("after-ref")
            store.update_worktree(change)
            _fault("after-worktree")
            journal.unlink(missing_ok=True)
        except (OSError, pygit2.GitError) as exc:
            raise StoreError(f"write failed, the store is unchanged or recoverable: {exc}") from None
        return str(commit)


def _fault(point: str) -> None:
    """TEST-ONLY fault injection: `KYB_FAULT=<point>` SIGKILLs this process at that point of a write.

    Points: `before-ref` (commit object and journal written, branch not moved), `after-ref` (branch
    moved, working tree not yet updated), `after-worktree` (working tree updated, journal not yet
    removed). The crash tests use it to prove a killed writer leaves the canon exactly as before or
    exactly as after, and that the next write heals the working tree. Never set it in real use.
    """
    if os.environ.get("KYB_FAULT") == point:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def blob_at(commit: pygit2.Commit, path: str) -> pygit2.Oid | None:
    """The id of the file at `path` in `commit`'s tree, or None when it is absent."""
    try:
        return commit.tree[path].id
    except KeyError:
        return None


def _blob_entry(blob: pygit2.Oid | None) -> Entry | None:
    """A record file's tree entry: kyb writes plain (non-executable) files."""
    return None if blob is None else (blob, BLOB_MODE)


def apply_changes(repo: pygit2.Repository, tree: pygit2.Tree | None, changes: dict[str, Entry | None]) -> pygit2.Oid:
    """A new tree equal to `tree` with each path set to its entry (None: removed); one pass per directory.

    A directory left empty is removed, as Git cannot hold one."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    nested: dict[str, dict[str, Entry | None]] = {}
    for path, entry in changes.items():
        head, _, rest = path.partition("/")
        if rest:
            nested.setdefault(head, {})[rest] = entry
        elif entry is None:
            if builder.get(head) is not None:
                builder.remove(head)
        else:
            builder.insert(head, entry[0], entry[1])
    for name, sub in nested.items():
        existing = builder.get(name)
        subtree = repo[existing.id] if existing is not None and existing.type_str == "tree" else None
        new_sub = apply_changes(repo, subtree, sub)
        if len(repo[new_sub]) == 0:
            if existing is not None:
                builder.remove(name)
        else:
            builder.insert(name, new_sub, TREE_MODE)
    return builder.write()


def _advance_head(repo: pygit2.Repository, old: pygit2.Commit | None, new: pygit2.Oid, log: str) -> None:
    """Move the current branch (or a detached HEAD) from `old` to `new`, refusing if it moved meanwhile."""
    if repo.head_is_detached:
        current = repo.head.target
        if old is None or current != old.id:
            raise StoreError("HEAD moved during the write; nothing was written")
        repo.set_head(new)
        return
    branch = repo.lookup_reference("HEAD").target  # e.g. refs/heads/main
    if not isinstance(branch, str):
        raise StoreError("HEAD is not a branch")
    ref = repo.references.get(branch)
    if ref is None:
        if old is not None:
            raise StoreError("HEAD moved during the write; nothing was written")
        repo.references.create(branch, new, message=log)
        return
    if old is None or ref.target != old.id:
        raise StoreError("HEAD moved during the write; nothing was written")
    ref.set_target(new, log)


def open_store(path: Path, *, create: bool = False) -> Store:
    """Open the store at `path`; with `create`, make it first if it does not exist yet."""
    path = Path(path)
    if create and not (path / ".git").exists() and not (path.exists() and any(path.iterdir())):
        return init_store(path)
    return Store(path)
