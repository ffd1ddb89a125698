"""The index's in-process catch-up (core/index/walk.py) answers exactly as the `git` program does.

The oracle is gitlog.Program (git rev-list, git log --raw, git cat-file): on random histories with
merges (two and three parents, a side kept or dropped), deletions, rename-like moves, empty commits,
clocks going backwards, non-record and oddly named files, both give the same revisions, first-parent
line, commits (sha, time, parents, changes) and blobs, for every indexed ancestor of every head.
"""

from __future__ import annotations

import random
import subprocess

import pygit2
import pytest

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.index import gitlog, walk
from kyb_cli.core.kinds.knowledge import add_knowledge

ATTR = Attribution("test-agent", "s1", "w1", "cli")
PATHS = ("knowledge/alpha.md", "knowledge/beta.md", "incidents/inc-one.md", "tasks/task-two.md",
         "knowledge/inc-misplaced.md", "knowledge/Bad Key.md", 'knowledge/quo"te.md', "knowledge/tab\there.md",
         "knowledge/sub/deep.md", "notes.txt", "knowledge/caf\u00e9.md",
         # the fanned-out shape (records/keys.py): buckets changed, added, emptied; two keys in one bucket
         # (alpha, k254: "be"), a wrong bucket, a deeper path, a file where a bucket is (a type change)
         "knowledge/be/alpha.md", "knowledge/be/k254.md", "knowledge/a2/beta.md", "incidents/35/inc-one.md",
         "tasks/3e/task-two.md", "knowledge/ff/alpha.md", "knowledge/be/sub/deep.md", "knowledge/a2",
         "knowledge/73/delta.md")


def _tree(repo: pygit2.Repository, files: dict[str, bytes], memo: dict | None = None) -> pygit2.Oid:
    """The tree of `files` (path -> content), folders at any depth; a path that is both a file and a
    folder's prefix keeps the folder. `memo` (shared by the calls building one history): each blob
    and folder content written once (the same objects; rewriting an existing one is an odb write)."""
    memo = {} if memo is None else memo
    whole = ("tree", tuple(sorted(files.items())))
    if whole in memo:
        return memo[whole]
    nested: dict[str, dict[str, bytes]] = {}
    top: dict[str, bytes] = {}
    for path, data in files.items():
        head, _, rest = path.partition("/")
        if rest:
            nested.setdefault(head, {})[rest] = data
        else:
            top[head] = data
    builder = repo.TreeBuilder()
    for name, data in top.items():
        if name not in nested:
            if data not in memo:
                memo[data] = repo.create_blob(data)
            builder.insert(name, memo[data], pygit2.enums.FileMode.BLOB)
    for name, inner in nested.items():
        builder.insert(name, _tree(repo, inner, memo), pygit2.enums.FileMode.TREE)
    memo[whole] = builder.write()
    return memo[whole]


def _history(path, seed: int) -> tuple[pygit2.Repository, list[str]]:
    """A random DAG of commits on one repository; returns it and every commit made."""
    rng = random.Random(seed)
    repo = pygit2.init_repository(str(path), bare=False, initial_head="main")
    states: dict[str, dict[str, bytes]] = {}
    made: list[str] = []
    tips: list[str] = []
    memo: dict = {}
    when = 1_700_000_000
    for step in range(40):
        when += rng.choice((60, 60, 60, 0, -3600))  # mostly forward; equal and backwards too
        sig = pygit2.Signature("t", "t@x", when, 0)
        roll = rng.random()
        if not made or (roll < 0.04 and step < 5):
            parents: list[str] = []
            files: dict[str, bytes] = {}
        elif roll < 0.3 and len(tips) >= 2:  # a merge of two or three lines
            parents = rng.sample(tips, min(len(tips), rng.choice((2, 2, 3))))
            files = dict(states[rng.choice(parents)])
            for p in parents:  # take some paths from each side, drop others
                for k, v in states[p].items():
                    if rng.random() < 0.4:
                        files[k] = v
            if rng.random() < 0.3 and files:
                files.pop(rng.choice(sorted(files)))
        else:
            parents = [rng.choice(tips[-3:] or made)]
            files = dict(states[parents[0]])
            for _ in range(rng.choice((0, 1, 1, 2, 3))):
                p = rng.choice(PATHS)
                action = rng.random()
                if action < 0.2 and p in files:
                    del files[p]
                elif action < 0.35 and p in files:  # rename-like: the same blob moves to another path
                    files[rng.choice(PATHS)] = files.pop(p)
                else:
                    files[p] = f"{p} {step} {rng.random()}\n".encode()
        sha = str(repo.create_commit(None, sig, sig, f"c{step}", _tree(repo, files, memo),
                                     [pygit2.Oid(hex=p) for p in parents]))
        states[sha] = files
        made.append(sha)
        tips = [t for t in tips if t not in parents] + [sha]
    repo.references.create("refs/heads/main", made[-1], force=True)
    return repo, made


def _ancestors(repo: pygit2.Repository, sha: str) -> list[str]:
    return [str(c.id) for c in repo.walk(pygit2.Oid(hex=sha))]


class _Program:
    """The oracle, gitlog.Program, asking git about each blob once: a blob's content never changes, so
    `blobs(shas)` is the answers of every earlier ask plus one `git cat-file --batch` of the new shas."""

    def __init__(self, store_path) -> None:
        self.program = gitlog.Program(store_path)
        self.known: dict[str, bytes | None] = {}

    def __getattr__(self, name: str):
        return getattr(self.program, name)

    def blobs(self, shas: list[str]) -> dict[str, bytes]:
        new = [sha for sha in shas if sha not in self.known]
        if new:
            got = self.program.blobs(new)
            self.known.update((sha, got.get(sha)) for sha in new)
        return {sha: self.known[sha] for sha in shas if self.known[sha] is not None}


def _compare(store, program: _Program, inproc: walk.Walk, head: str, since: str | None) -> None:
    assert inproc.is_ancestor(since, head) == program.is_ancestor(since, head) if since else True
    order = program.revisions(head, since)  # what program.commits would ask git again for its order
    assert inproc.revisions(head, since) == order, (head, since)
    assert inproc.first_parent_line(head, since) == program.first_parent_line(head, since), (head, since)
    got = [vars(c) for c in inproc.commits(head, since)]
    want = [vars(c) for c in program.commits(head, since, order)]
    assert got == want, (head, since)
    shas = sorted({b for c in want for b in c["changes"].values() if b} | {"0" * 40})
    assert inproc.blobs(shas) == program.blobs(shas)


@pytest.mark.parametrize("seed", range(6))
def test_in_process_catch_up_equals_the_git_program_on_merges_deletions_and_moves(tmp_path, seed):
    repo, made = _history(tmp_path / "s", seed)
    program, inproc = _Program(tmp_path / "s"), walk.Walk(tmp_path / "s")
    rng = random.Random(seed)
    heads = rng.sample(made, 8) + [made[-1]]
    for head in heads:
        _compare(tmp_path, program, inproc, head, None)
        for since in rng.sample(_ancestors(repo, head), min(6, len(_ancestors(repo, head)))):
            _compare(tmp_path, program, inproc, head, since)


def test_in_process_order_equals_the_git_program_with_a_commit_graph(tmp_path):
    """With a commit-graph git orders --topo-order by its incremental walk: the same order still."""
    repo, made = _history(tmp_path / "s", 11)
    subprocess.run(["git", "-C", str(tmp_path / "s"), "commit-graph", "write", "--reachable"], check=True,
                   capture_output=True)
    program, inproc = _Program(tmp_path / "s"), walk.Walk(tmp_path / "s")
    for head in made[-5:]:
        _compare(tmp_path, program, inproc, head, None)
        _compare(tmp_path, program, inproc, head, made[len(made) // 3])


def test_not_an_ancestor_is_not_an_ancestor_in_process(tmp_path):
    repo, made = _history(tmp_path / "s", 3)
    program, inproc = _Program(tmp_path / "s"), walk.Walk(tmp_path / "s")
    for old in made[::5]:
        for new in made[::7]:
            assert inproc.is_ancestor(old, new) == program.is_ancestor(old, new), (old, new)
    assert inproc.is_ancestor("f" * 40, made[-1]) is False


def test_more_than_small_new_commits_go_to_the_git_program(tmp_path, monkeypatch):
    _repo, made = _history(tmp_path / "s", 5)
    monkeypatch.setattr(walk, "SMALL", 3)
    assert isinstance(walk.source(tmp_path / "s", made[0], made[-1]), gitlog.Program)
    assert isinstance(walk.source(tmp_path / "s", made[-2], made[-1]), walk.Walk)


def test_kyb_catchup_git_forces_the_git_program(tmp_path, monkeypatch):
    _repo, made = _history(tmp_path / "s", 5)
    monkeypatch.setenv("KYB_CATCHUP", "git")
    assert isinstance(walk.source(tmp_path / "s", made[-2], made[-1]), gitlog.Program)


def test_a_write_then_a_read_spawns_no_git_process_to_catch_up(store, monkeypatch):
    from kyb_cli.core.index import reads

    add_knowledge(store, key="port", title="Port", body="listens on 8080", tags=[], refs=[], attribution=ATTR)
    reads.read(store.path, "port")  # the index exists and is at HEAD
    spawned: list[list[str]] = []
    real = subprocess.Popen

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self, args, *a, **kw):
            spawned.append(list(args))
            super().__init__(args, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", Counting)
    runner: list[tuple] = []  # the catch-up's git runner (gitlog): never asked
    monkeypatch.setattr(gitlog, "_git", lambda *a, **kw: runner.append(a) or pytest.fail(f"git {a}"))
    monkeypatch.setattr(gitlog, "_popen", lambda *a, **kw: runner.append(a) or pytest.fail(f"git {a}"))
    add_knowledge(store, key="port", title="Port", body="listens on 9090", tags=[], refs=[], attribution=ATTR)
    add_knowledge(store, key="disk", title="Disk", body="full at 90%", tags=[], refs=[], attribution=ATTR)
    assert "9090" in reads.read(store.path, "port").to_json()["body"]
    assert reads.read(store.path, "disk").to_json()["key"] == "disk"
    assert runner == []
    catch_up = {"rev-list", "log", "merge-base", "count-objects"}
    assert [a for a in spawned if "git" in str(a[0]) and catch_up & set(a)] == []
    # what is left is the read's own `git cat-file` of the commit it shows (reads.py), one per read
    assert len([a for a in spawned if "git" in str(a[0])]) <= 2


def test_object_count_in_process_equals_git_count_objects_loose_and_packed(tmp_path):
    _repo, made = _history(tmp_path / "s", 7)
    objects = tmp_path / "s" / ".git" / "objects"
    assert walk.object_count(objects) == gitlog.object_count(tmp_path / "s")
    subprocess.run(["git", "-C", str(tmp_path / "s"), "repack", "-q", "-d"], check=True, capture_output=True)
    _history_more = pygit2.Repository(str(tmp_path / "s")).create_blob(b"one more loose object")
    assert walk.object_count(objects) == gitlog.object_count(tmp_path / "s") > 0


def test_big_history_in_process_equals_the_git_program_at_every_threshold(tmp_path, monkeypatch):
    from kyb_cli.core.index import fresh

    _repo, made = _history(tmp_path / "s", 8)
    gdir = tmp_path / "s" / ".git"
    for at in (0, 1, 10, 40, 41, 60, 150, 400):
        commits = gitlog.count(tmp_path / "s", made[-1])
        want = commits >= at or gitlog.object_count(tmp_path / "s") - 3 * commits >= at
        assert walk.big_history(tmp_path / "s", gdir, made[-1], at) == want, at
        monkeypatch.setenv("KYB_STAGE_AT", str(at))
        assert fresh.big_history(tmp_path / "s", made[-1]) == want, at


def test_big_history_by_the_git_program_counts_only_up_to_the_threshold(tmp_path, monkeypatch):
    """The program's path (no pygit2 loaded, as a first `kyb query`) stops its count at the threshold
    (issue 39: a full `rev-list --count` was 2.4 s of a 100k clone's first answer); same answers."""
    from kyb_cli.core.index import fresh

    _repo, made = _history(tmp_path / "s", 8)
    monkeypatch.setenv("KYB_CATCHUP", "git")
    commits = gitlog.count(tmp_path / "s", made[-1])
    for at in (0, 1, 10, 40, 41, 60, 150, 400):
        assert gitlog.count(tmp_path / "s", made[-1], most=at) == min(commits, at), at
        want = commits >= at or gitlog.object_count(tmp_path / "s") - 3 * commits >= at
        monkeypatch.setenv("KYB_STAGE_AT", str(at))
        assert fresh.big_history(tmp_path / "s", made[-1]) == want, at


def test_ordinary_histories_are_read_in_process(tmp_path):
    _repo, made = _history(tmp_path / "s", 2)
    assert isinstance(walk.source(tmp_path / "s", made[-6], made[-1]), walk.Walk)
    assert isinstance(walk.source(tmp_path / "s", None, made[-1]), walk.Walk)


def _raw_commit(repo: pygit2.Repository, parent: str, committer_date: bytes) -> str:
    raw = (b"tree " + str(repo[parent].tree_id).encode() + b"\nparent " + parent.encode()
           + b"\nauthor a <a@x> 1700000000 +0000\ncommitter a <a@x> " + committer_date + b"\n\nodd date\n")
    return str(repo.odb.write(pygit2.enums.ObjectType.COMMIT, raw))


@pytest.mark.parametrize("date", [b"99999999999999999999 +0000", b"-5 +0000", b"1700000000", b"17e8 +0000"])
def test_a_commit_date_git_and_libgit2_may_read_apart_goes_to_the_git_program(tmp_path, date):
    repo, made = _history(tmp_path / "s", 4)
    odd = _raw_commit(repo, made[-1], date)
    assert isinstance(walk.source(tmp_path / "s", made[-1], odd), gitlog.Program)


def test_replace_refs_and_shallow_clones_go_to_the_git_program(tmp_path):
    repo, made = _history(tmp_path / "s", 4)
    repo.references.create(f"refs/replace/{made[-2]}", made[-3])
    assert isinstance(walk.source(tmp_path / "s", made[-3], made[-1]), gitlog.Program)
    repo.references.delete(f"refs/replace/{made[-2]}")
    assert isinstance(walk.source(tmp_path / "s", made[-3], made[-1]), walk.Walk)
    (tmp_path / "s" / ".git" / "shallow").write_text(made[-3] + "\n")
    assert isinstance(walk.source(tmp_path / "s", made[-3], made[-1]), gitlog.Program)


def test_many_record_entries_times_new_commits_go_to_the_git_program(tmp_path, monkeypatch):
    """libgit2's tree diff is slower than git's: a big folder diffed many times is the program's work."""
    _repo, made = _history(tmp_path / "s", 5)
    inproc = walk.Walk(tmp_path / "s")
    n = len(inproc.new(made[-1], made[-4]))
    monkeypatch.setattr(walk, "WORK", n * inproc.entries(made[-1]))
    assert isinstance(walk.source(tmp_path / "s", made[-4], made[-1]), walk.Walk)
    monkeypatch.setattr(walk, "WORK", n * inproc.entries(made[-1]) - 1)
    assert isinstance(walk.source(tmp_path / "s", made[-4], made[-1]), gitlog.Program)


def test_a_missing_tree_goes_to_the_program_and_is_a_store_error_either_way(tmp_path):
    from kyb_cli.core.errors import StoreError

    repo, made = _history(tmp_path / "s", 6)
    tree = str(repo[made[-1]].tree_id)
    if tree == str(repo[made[-2]].tree_id):
        pytest.skip("the last commit kept its parent's tree")
    (tmp_path / "s" / ".git" / "objects" / tree[:2] / tree[2:]).unlink()
    assert isinstance(walk.source(tmp_path / "s", made[-2], made[-1]), gitlog.Program)  # seen up front
    with pytest.raises(StoreError):
        list(walk.Walk(tmp_path / "s").commits(made[-1], made[-2]))
    with pytest.raises(StoreError):
        list(gitlog.Program(tmp_path / "s").commits(made[-1], made[-2]))


def test_a_line_of_writes_is_read_parent_by_parent_whatever_the_ancestors_dates(tmp_path, monkeypatch):
    """Writes on top of a history dated years ahead (a clock in the future): the catch-up reads the new
    line parent by parent, not through libgit2's walk with a hidden commit (which walks back through
    every ancestor dated after it: 4-5 s a write at 100k keys); same answers as the git program."""
    repo, made = _history(tmp_path / "s", 5)
    tip = pygit2.Oid(hex=made[-1])
    future, now = 2_000_000_000, 1_700_000_000
    line = []
    for i in range(8):  # 3 commits dated in 2033, then 5 writes dated before them
        when = future + i if i < 3 else now + i
        sig = pygit2.Signature("t", "t@x", when, 0)
        tip = repo.create_commit(None, sig, sig, f"w{i}", _tree(repo, {f"knowledge/w{i}.md": b"x\n"}), [tip])
        line.append(str(tip))
    repo.references.create("refs/heads/main", line[-1], force=True)
    program, inproc = _Program(tmp_path / "s"), walk.Walk(tmp_path / "s")
    for since in (line[-2], line[3], line[0], made[-1]):
        _compare(tmp_path, program, inproc, line[-1], since)

    def no_walk(*_a, **_k):
        raise AssertionError("a line of single-parent commits needs no revwalk")

    monkeypatch.setattr(pygit2.Repository, "walk", no_walk)
    fresh = walk.Walk(tmp_path / "s")
    assert [str(c.id) for c in fresh.new(line[-1], line[-2])] == [line[-1]]
    assert [str(c.id) for c in fresh.new(line[-1], line[3])] == line[:3:-1]
    assert fresh.new(line[-1], line[-1]) == []


def _fanned_store(path, keys: int) -> tuple[pygit2.Repository, list[str]]:
    """A line of commits on a store of `keys` records: the old flat shape, the migrate commit that moves
    every record to its bucket, then writes into one bucket, a new bucket, a deletion emptying a bucket,
    and a move back to the flat shape."""
    from kyb_cli.core.records.keys import old_path_of_key, path_of_key

    repo = pygit2.init_repository(str(path), bare=False, initial_head="main")
    names = [f"k{i}" for i in range(keys)] + ["inc-one", "task-two"]
    flat = {old_path_of_key(k): f"{k}\n".encode() for k in names} | {"notes.txt": b"n\n"}
    fanned = {path_of_key(k): f"{k}\n".encode() for k in names} | {"notes.txt": b"n\n"}
    one_bucket = dict(fanned) | {path_of_key("k254"): b"k254 changed\n", path_of_key("alpha"): b"alpha\n"}
    lone = next(k for k in names if sum(path_of_key(n).split("/")[1] == path_of_key(k).split("/")[1]
                                        for n in names) == 1)
    emptied = {p: d for p, d in one_bucket.items() if p != path_of_key(lone)}
    states = [flat, fanned, one_bucket, emptied, dict(emptied) | {"knowledge/zz/new-one.md": b"wrong bucket\n"},
              {old_path_of_key(k) if path_of_key(k) in emptied else k: d for k, d in
               ((k, emptied.get(path_of_key(k))) for k in names) if d is not None}]
    made: list[str] = []
    memo: dict = {}
    for i, files in enumerate(states):
        sig = pygit2.Signature("t", "t@x", 1_700_000_000 + 60 * i, 0)
        made.append(str(repo.create_commit(None, sig, sig, f"s{i}", _tree(repo, files, memo),
                                           [pygit2.Oid(hex=made[-1])] if made else [])))
    repo.references.create("refs/heads/main", made[-1], force=True)
    return repo, made


@pytest.fixture(scope="module")
def fanned(tmp_path_factory) -> tuple:
    """(path, commits) of `_fanned_store(600)`, built once a module: the tests below only read it."""
    path = tmp_path_factory.mktemp("fanned") / "s"
    return path, _fanned_store(path, 600)[1]


def test_in_process_catch_up_equals_the_git_program_across_a_migrate_and_bucket_writes(fanned):
    path, made = fanned
    program, inproc = _Program(path), walk.Walk(path)
    for i, head in enumerate(made):
        _compare(path, program, inproc, head, None)
        for since in made[:i]:
            _compare(path, program, inproc, head, since)


def test_a_write_into_one_bucket_diffs_that_bucket_alone(fanned, monkeypatch):
    """A kind's folder of 256 buckets is compared entry by entry: only the buckets whose ids differ are
    diffed below it (libgit2's diff of the two folders walked every record: 0.12 s at 100k keys)."""
    path, made = fanned
    whole: list[bytes] = []  # the trees diffed whole (diff_to_tree), by path
    real = walk.Walk._diff

    def spy(self, a, b, prefix, out, levels):
        same = (a.id if a is not None else None) == (b.id if b is not None else None)
        if not same and (a is None or b is None or levels <= 0 or len(a) + len(b) > 2 * walk.FANOUT):
            whole.append(prefix)
        return real(self, a, b, prefix, out, levels)

    monkeypatch.setattr(walk.Walk, "_diff", spy)
    [commit] = walk.Walk(path).commits(made[2], made[1])
    assert sorted(commit.changes) == ["knowledge/be/alpha.md", "knowledge/be/k254.md"]
    assert whole == [b"knowledge/be"]
