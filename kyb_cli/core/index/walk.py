"""The index's catch-up in-process through pygit2, when only a few commits are new.

After a write the index has one or two commits to read; through the `git` program that was ~5
processes (rev-list x2, log, cat-file, merge-base) at ~2 ms each, ~10-20 ms of every `kyb add`,
while the write already has pygit2 loaded and answers these in microseconds. So: when pygit2 is
already imported (importing it just for this costs 70-110 ms, more than the processes), at most
SMALL commits are to be read and their tree diffs stay within WORK, `source` answers with `Walk`
(pygit2); otherwise with `gitlog.Program` (the `git` program: its tree diffs are faster, which
wins over a long history or a big folder). `KYB_CATCHUP=git` forces the program (A/B in
bench/bench_catchup.py).

Every answer is the git path's, exactly (tests/test_index_catchup_pygit2.py checks them against
each other): the order is git's `--topo-order` (commit.c sort_in_topological_order, re-done
here), a commit's changes are `git log --raw --diff-merges=separate` (a merge: paths that differ
from any parent, with the merged blob), paths git would quote are dropped as git's caller drops
them, and key_of_path keeps only record paths.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Iterator

from kyb_cli.core.errors import StoreError
from kyb_cli.core.index import gitlog
from kyb_cli.core.index.gitlog import Commit
from kyb_cli.core.records.keys import RECORD_DIRS
from kyb_cli.core.timestamps import clamp_epoch

SMALL = 200  # new commits read in-process at most; a catch-up after writes or a small sync is far below
# ...and at most this many record-folder entries diffed (new commits x entries in HEAD's record folders):
# libgit2's tree diff is slower than git's, so the processes' fixed cost is won back only for a few
# commits: at 1,000 keys, 20 commits 26.7 ms in-process vs 29.9 ms, 50 commits 53.4 vs 49.3 ms
# (bench/bench_catchup.py --keys 1000 --spans 1,20,50,200, docs/BENCHMARKS.md).
WORK = 30_000
# A record folder fans out into 256 bucket trees (records/keys.py): a tree of at most FANOUT entries is
# compared entry by entry for FANNED levels below the folder, so a diff reads the buckets that changed.
FANOUT = 1024
FANNED = 1


def source(store_path: Path, since: str | None, head: str | None):
    """Walk (pygit2) for a few commits after `since` when pygit2 is loaded, else the program."""
    program = gitlog.Program(store_path)
    if not head or os.environ.get("KYB_CATCHUP", "").strip().lower() == "git" or "pygit2" not in sys.modules:
        return program
    try:
        walk = Walk(store_path)
        found = walk.new(head, since) if walk.plain() else None
        if found is None or len(found) * walk.entries(head) > WORK or not all(map(_ordinary, found)):
            return program
    except Exception:  # noqa: BLE001 - anything odd (a missing object, a damaged repository): the program decides
        return program
    return walk


_COMMITTER = re.compile(rb"^committer [^\n<]*<[^\n>]*> ([0-9]{1,12}) [+-][0-9]{4}$", re.M)


def _ordinary(commit) -> bool:
    """A commit both readers read alike: one committer line of the standard form, whose time libgit2
    read as git does (a hostile date git and libgit2 would parse apart goes to the program), and no
    parent twice."""
    raw = commit.read_raw()
    header = raw.split(b"\n\n", 1)[0]
    found = _COMMITTER.findall(header)
    parents = commit.parent_ids
    return (len(found) == 1 and header.count(b"\ncommitter ") == 1 and int(found[0]) == commit.commit_time
            and len(set(parents)) == len(parents))


class Walk:
    """gitlog's questions answered through one pygit2.Repository (see the module docstring)."""

    def __init__(self, store_path: Path) -> None:
        import pygit2

        self.pygit2 = pygit2
        self.repo = pygit2.Repository(str(store_path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        self._new: dict[tuple[str, str | None], list | None] = {}
        self.key_of = gitlog.key_memo()  # shared with the Builder reading these commits

    def plain(self) -> bool:
        """No history rewriting that git honours and libgit2 does not: shallow, grafts, replace refs."""
        gdir = Path(self.repo.path)
        if (gdir / "shallow").exists() or (gdir / "info" / "grafts").exists():
            return False
        if (gdir / "refs" / "replace").is_dir() and any((gdir / "refs" / "replace").iterdir()):
            return False
        packed = gdir / "packed-refs"
        return not packed.exists() or b" refs/replace/" not in packed.read_bytes()

    def entries(self, head: str) -> int:
        """Entries a commit's tree diff walks in HEAD's record folders: each folder's entries (its
        buckets, or an old flat store's files) and, fanned out, one bucket's (records/keys.py)."""
        tree = self.repo[head].peel(self.pygit2.Commit).tree
        total = 0
        for sub in (_subtree(tree, folder) for folder in RECORD_DIRS):
            if sub is None:
                continue
            total += len(sub)
            bucket = next((e for e in sub if e.type_str == "tree"), None)
            total += len(self.repo[bucket.id]) if bucket is not None else 0
        return total

    def new(self, head: str, since: str | None) -> list | None:
        """The commits reachable from `head` and not from `since` (unordered), None above SMALL."""
        if (head, since) not in self._new and since is not None:
            chain = self._chain(head, since)
            if chain is not None:
                self._new[(head, since)] = chain
        if (head, since) not in self._new:
            walker = self.repo.walk(self.repo[head].id, self.pygit2.enums.SortMode.NONE)
            if since is not None:
                walker.hide(self.repo[since].id)
            found = []
            for commit in walker:
                found.append(commit)
                if len(found) > SMALL:
                    found = None
                    break
            self._new[(head, since)] = found
        return self._new[(head, since)]

    def _chain(self, head: str, since: str) -> list | None:
        """The commits after `since` when they are one line of single-parent commits from `head` down
        to it (a catch-up after writes): read parent by parent, without libgit2's walk, whose hidden
        commit is walked back through every ancestor dated after it (a clock years ahead on some
        commits made each write's catch-up read the whole history: 4-5 s at 100k keys). None
        otherwise (a merge, a root, `since` not met within SMALL): the walk decides."""
        stop = self.repo[since].peel(self.pygit2.Commit).id
        commit = self.repo[head].peel(self.pygit2.Commit)
        found: list = []
        while len(found) <= SMALL:
            if commit.id == stop:
                return found
            if len(commit.parent_ids) != 1:
                return None
            found.append(commit)
            commit = self.repo[commit.parent_ids[0]]
        return None

    def is_ancestor(self, old: str, new: str) -> bool:
        """`git merge-base --is-ancestor old new` (a commit is its own ancestor)."""
        try:
            a, b = self.repo[old].peel(self.pygit2.Commit).id, self.repo[new].peel(self.pygit2.Commit).id
            return a == b or self.repo.descendant_of(b, a)
        except (KeyError, ValueError, self.pygit2.GitError):
            return False

    def revisions(self, head: str, since: str | None = None) -> list[tuple[str, int]]:
        """gitlog.revisions: `rev-list --topo-order --reverse --timestamp`."""
        return [(str(c.id), clamp_epoch(c.commit_time)) for c in self._ordered(head, since)]

    def _ordered(self, head: str, since: str | None) -> list:
        """The new commits parents first, in git's --topo-order: commit.c's sort_in_topological_order
        with its LIFO queue (graph order); the one tip is `head`, so the walk's own order is irrelevant."""
        found = self.new(head, since)
        if found is None:
            raise ValueError("more commits than a catch-up reads in-process")
        by_id = {c.id: c for c in found}
        indegree = dict.fromkeys(by_id, 1)
        for c in found:
            for p in c.parent_ids:
                if indegree.get(p):
                    indegree[p] += 1
        stack = [c.id for c in found if indegree[c.id] == 1]
        out = []
        while stack:
            cid = stack.pop()
            for p in by_id[cid].parent_ids:
                if not indegree.get(p):
                    continue
                indegree[p] -= 1
                if indegree[p] == 1:
                    stack.append(p)
            indegree[cid] = 0
            out.append(by_id[cid])
        out.reverse()
        return out

    def replay(self, head: str) -> tuple[list[tuple[str, int]], list[tuple[str, int]], Iterator[Commit]]:
        """gitlog.replay: the order, the first-parent line and the commits of a whole history."""
        order = self.revisions(head)
        return order, self.first_parent_line(head) or [], self.commits(head, order=order)

    def first_parent_line(self, head: str, since: str | None = None) -> list[tuple[str, int]] | None:
        """gitlog.first_parent_line, for a `since` that is an ancestor of `head` (catch_up checks it)."""
        found = self.new(head, since)
        if found is None:
            raise ValueError("more commits than a catch-up reads in-process")
        members = {c.id for c in found}
        line = []
        commit = self.repo[head].peel(self.pygit2.Commit)
        if commit.id not in members:
            return []
        while commit.id in members:
            line.append((str(commit.id), clamp_epoch(commit.commit_time)))
            if not commit.parent_ids:
                return None if since is not None else list(reversed(line))
            commit = self.repo[commit.parent_ids[0]]
        if since is not None and str(commit.id) != since:
            return None
        return list(reversed(line))

    def commits(self, head: str, since: str | None = None,
                order: list[tuple[str, int]] | None = None) -> Iterator[Commit]:
        """gitlog.commits: each new commit, parents first, with its record changes (`order` is the
        program's shortcut past a second rev-list; here the order is computed once anyway)."""
        for c in self._ordered(head, since):
            changes: dict[str, str | None] = {}
            try:
                parents = [self.repo[p] for p in c.parent_ids]
                if not parents:
                    changes = self._changes(None, c.tree)
                for parent in parents:  # a merge: the paths that differ from any parent (git's -m)
                    changes.update(self._changes(parent.tree, c.tree))
            except (KeyError, ValueError, self.pygit2.GitError) as exc:  # a damaged repository: as `git log` failing
                raise StoreError(f"cannot read commit {c.id} of the store: {exc}") from None
            yield Commit(str(c.id), clamp_epoch(c.commit_time), [str(p) for p in c.parent_ids], changes)

    def _changes(self, old, new) -> dict[str, str | None]:
        """Record path -> new blob (None: deleted) between two trees, one record folder at a time."""
        out: dict[str, str | None] = {}
        for folder in RECORD_DIRS:
            self._diff(_subtree(old, folder), _subtree(new, folder), folder.encode(), out, FANNED)
        return out

    def _diff(self, a, b, prefix: bytes, out: dict[str, str | None], levels: int) -> None:
        """The changes between trees `a` and `b` (either None: absent) at path `prefix`, into `out`.

        libgit2's tree diff walks every entry below two trees even where a subtree is the same on both
        sides: at 100k keys a kind's 88k records, 0.12 s of each write's catch-up. So for `levels`
        more levels a tree of at most FANOUT entries (a kind's 256 buckets) is compared entry by
        entry, and only the subtrees whose ids differ are diffed: one bucket a write. A bigger tree
        (an old flat store) is diffed whole, as before."""
        if (a.id if a is not None else None) == (b.id if b is not None else None):
            return
        if a is None or b is None or levels <= 0 or len(a) + len(b) > 2 * FANOUT:
            if a is None:
                diff = b.diff_to_tree(swap=True)
            elif b is None:
                diff = a.diff_to_tree()
            else:
                diff = a.diff_to_tree(b)
            for delta in diff.deltas:
                gone = delta.status == self.pygit2.enums.DeltaStatus.DELETED
                f = delta.old_file if gone else delta.new_file
                self._put(out, prefix + b"/" + f.raw_path, None if gone else str(f.id))
            return
        olds = {e.raw_name: e for e in a}
        news = {e.raw_name: e for e in b}
        for name in sorted(olds.keys() | news.keys()):
            x, y = olds.get(name), news.get(name)
            if x is not None and y is not None and x.id == y.id and x.filemode == y.filemode:
                continue
            x_tree = x is not None and x.type_str == "tree"
            y_tree = y is not None and y.type_str == "tree"
            if x_tree or y_tree:
                self._diff(x if x_tree else None, y if y_tree else None, prefix + b"/" + name, out, levels - 1)
            path = prefix + b"/" + name
            if x is not None and not x_tree and (y is None or y_tree):
                self._put(out, path, None)  # a file gone (or become a folder)
            if y is not None and not y_tree:
                self._put(out, path, str(y.id))  # a file new or changed (or once a folder)

    def _put(self, out: dict[str, str | None], raw: bytes, blob: str | None) -> None:
        """One changed path into `out` as `git log --raw` reports it to gitlog's parser."""
        if any(ch < 0x20 or ch in (0x22, 0x5C, 0x7F) for ch in raw):
            return  # git quotes these ("..."), and gitlog's parser then sees no record path
        path = raw.decode("utf-8", errors="replace")
        if self.key_of(path) is None:
            return
        if blob is None:
            out.setdefault(path, None)
        else:  # a type change comes as a delete and an add: the add wins, as git's T shows it
            out[path] = blob

    def blobs(self, shas: list[str]) -> dict[str, bytes]:
        """gitlog.blobs: contents by sha (any object type, as `git cat-file --batch`); missing ones left out."""
        out = {}
        for sha in shas:
            try:
                out[sha] = self.repo.odb.read(sha)[1]
            except (KeyError, ValueError, self.pygit2.GitError):
                continue
        return out


def _subtree(tree, folder: str):
    """The tree at `folder`, or None (absent, or not a directory: git -r shows no record path there)."""
    if tree is None:
        return None
    try:
        entry = tree[folder]
    except KeyError:
        return None
    return entry if entry.type_str == "tree" else None


def big_history(store_path: Path, git_dir: Path, head: str, at: int) -> bool | None:
    """fresh.big_history's answer without `git rev-list --count` and `git count-objects`, when pygit2
    is loaded; None (ask the program) for anything but a plain local object store."""
    if os.environ.get("KYB_CATCHUP", "").strip().lower() == "git" or "pygit2" not in sys.modules:
        return None
    try:
        walk = Walk(store_path)
        commits = 0
        for _commit in walk.repo.walk(walk.repo[head].id, walk.pygit2.enums.SortMode.NONE):
            commits += 1
            if commits >= at:
                return True
        objects = object_count(git_dir / "objects")
    except Exception:  # noqa: BLE001 - anything odd: the program decides
        return None
    return None if objects is None else objects - 3 * commits >= at


def object_count(objects: Path) -> int | None:
    """`git count-objects -v`'s count + in-pack: loose objects and each local pack's .idx header.
    None where git would look further (alternates, a multi-pack-index) or an index looks odd."""
    import string

    if (objects / "info" / "alternates").exists() or (objects / "pack" / "multi-pack-index").exists():
        return None
    hexdigits = set(string.hexdigits.lower()) - set("ABCDEF")
    total = 0
    for sub in objects.iterdir():
        if len(sub.name) == 2 and set(sub.name) <= hexdigits and sub.is_dir():
            total += sum(1 for f in sub.iterdir() if len(f.name) == 38 and set(f.name) <= hexdigits)
    pack_dir = objects / "pack"
    for idx in (pack_dir.iterdir() if pack_dir.is_dir() else ()):
        if not idx.name.endswith(".idx") or not idx.with_suffix(".pack").is_file():
            continue
        data = idx.read_bytes()[:8 + 1024]
        fanout = data[8:] if data[:8] == b"\xfftOc\x00\x00\x00\x02" else None
        if fanout is None or len(fanout) != 1024:
            return None  # a version-1 or damaged index: git's own reading decides
        count = int.from_bytes(fanout[-4:], "big")
        if idx.stat().st_size < 8 + 1024 + count * 28 + 40:
            return None
        total += count
    return total
