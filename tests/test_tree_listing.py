"""canon/tree.TreeListing: the same answer as libgit2's own `tree[path]`, with each directory read once.

Sync's merge and the canon's move look up every key of a peer's commit at two paths (its bucket and
its old flat place): through `tree[folder]`, each absent bucket re-read a flat `knowledge/` of every
key (11 s for 50,000 records); the listing finds a folder through its parent's entries instead.
"""

from __future__ import annotations

import random

import pygit2

from kyb_cli.core.canon.tree import TreeListing


def _tree(repo: pygit2.Repository, files: dict[str, bytes]) -> pygit2.Oid:
    nested: dict[str, dict[str, bytes]] = {}
    builder = repo.TreeBuilder()
    for path, data in files.items():
        head, _, rest = path.partition("/")
        if rest:
            nested.setdefault(head, {})[rest] = data
        else:
            builder.insert(head, repo.create_blob(data), pygit2.enums.FileMode.BLOB)
    for name, inner in nested.items():
        builder.insert(name, _tree(repo, inner), pygit2.enums.FileMode.TREE)
    return builder.write()


def _libgit2(tree: pygit2.Tree, path: str):
    try:
        obj = tree[path]
    except KeyError:
        return None
    return (obj.id, int(obj.filemode))


def test_tree_listing_answers_as_libgit2_for_present_absent_and_blocked_paths(tmp_path):
    rng = random.Random(7)
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    files = {f"knowledge/flat-{n}.md": f"flat {n}".encode() for n in range(300)}
    files.update({f"knowledge/{n % 16:02x}/k{n}.md": f"bucket {n}".encode() for n in range(200)})
    files.update({"knowledge/ab/deep/er/x.md": b"deep", "notes.txt": b"n", "knowledge/file-not-dir": b"f"})
    tree = repo[_tree(repo, files)]
    asked = list(files) + [f"knowledge/{n:02x}/absent-{n}.md" for n in range(40)] + [
        "knowledge/file-not-dir/inside.md", "nothing/here.md", "knowledge/ab/deep", "knowledge/ab",
        "knowledge", "knowledge/ab/deep/er/y.md", "tasks/task-x.md"]
    rng.shuffle(asked)
    listing = TreeListing(tree)
    for path in asked:
        assert listing.get(path) == _libgit2(tree, path), path
    assert TreeListing(None).get("knowledge/a.md") is None


def test_tree_listing_reads_each_directory_once_however_many_buckets_are_absent(tmp_path, monkeypatch):
    repo = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    tree = repo[_tree(repo, {f"knowledge/flat-{n}.md": b"x" for n in range(500)})]
    reads: list[str] = []
    listing = TreeListing(tree)
    original = TreeListing._listing

    def counted(self, folder):
        if folder not in self.dirs:
            reads.append(folder)
        return original(self, folder)

    monkeypatch.setattr(TreeListing, "_listing", counted)
    for n in range(500):
        assert listing.get(f"knowledge/{n % 256:02x}/flat-{n}.md") is None  # the new place: absent
        assert listing.get(f"knowledge/flat-{n}.md") is not None  # the old flat place
    assert sorted(set(reads)) == sorted(reads)  # no directory read twice
    assert "knowledge" in reads and len(reads) == 2 + 256  # root, knowledge, and each absent bucket once
