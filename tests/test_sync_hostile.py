"""A peer's push is input we do not trust: every attack a hostile remote can make, through the CLI.

Rule names used below (docs/guide/sharing.md "Sharing a store", docs/ARCHITECTURE.md "Trusting a peer"):
- refuse-unsafe: what is unsafe at the incoming tip (a `..` or `.git` component in any case, a
  symlink, a gitlink, an odd mode under a record directory, a blob over the cap, an object Git's
  own checks reject) refuses the whole sync or clone: exit 4, stdout empty, stderr one `kyb:` line
  and one JSON line `{"refused": [{"commit", "path", "reason"}]}`, nothing written (HEAD, working
  tree, Git index, hooks, config), no half-made clone.
- held-out: a record file that breaks the write rules (unparseable, a secret, too big, a key that
  does not match its path) is never served as a record; the sync succeeds and lists it under
  `held_out` on every sync and clone while the tip holds it; it never wins a conflict.
- sync-clone-parity: `kyb init --clone` applies exactly the rules `kyb sync` applies.
Every refused case also checks that nothing appeared outside the store and that the next
`kyb add` works.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from support.hostile import (
    BLOB, EXEC, GITLINK, LINK, Entry, Peer, git, kyb_env, outside_files, record_text, refused_report,
    run_kyb, snapshot,
)
from kyb_cli.core.records.keys import path_of_key


class Team:
    """A bare remote, a victim store cloned from it with one record, and a peer with push rights."""

    def __init__(self, root: Path, home: Path, *, background: bool = True) -> None:
        self.root = root
        self.env = self._env(home)
        if not background:  # a template that tests copy: no detached filler may write in it meanwhile
            self.env["KYB_BACKGROUND"] = "off"
        self.remote = root / "remote.git"
        git("init", "--quiet", "--bare", "-b", "main", str(self.remote))
        self.outside = root / "outside"
        self.outside.mkdir()
        (self.outside / "secret.txt").write_text("LEAKED-OUTSIDE-CONTENT\n")
        self.store = root / "victim"
        res = self.kyb("init", "--clone", str(self.remote), str(self.store), store=None)
        assert res.returncode == 0, res.stderr
        assert self.kyb("add", "--key", "seed", "--title", "Seed", "--body", "seed body").returncode == 0
        assert self.kyb("task", "--key", "task-a", "--title", "Task A", "--body", "do a").returncode == 0
        assert self.sync().returncode == 0
        self.peer = Peer(self.remote)

    @classmethod
    def copied(cls, root: Path, home: Path) -> "Team":
        """The Team of a world copied to `root` (see the `team` fixture), without building it again."""
        team = cls.__new__(cls)
        team.root, team.env = root, cls._env(home)
        team.remote, team.outside, team.store = root / "remote.git", root / "outside", root / "victim"
        git("-C", str(team.store), "remote", "set-url", "origin", str(team.remote))
        team.peer = Peer(team.remote)
        return team

    @staticmethod
    def _env(home: Path) -> dict[str, str]:
        env = kyb_env(home)
        env.update(GIT_AUTHOR_NAME="victim", GIT_AUTHOR_EMAIL="victim@example.invalid",
                   GIT_COMMITTER_NAME="victim", GIT_COMMITTER_EMAIL="victim@example.invalid")
        return env

    def kyb(self, *args: str, store: Path | None | str = "victim", input: str = "", extra=None):
        target = self.store if store == "victim" else store
        return run_kyb(self.env, *args, store=target, input=input, extra=extra)

    def sync(self, extra=None):
        return self.kyb("sync", extra=extra)

    def clone(self, name: str = "fresh", extra=None):
        return self.kyb("init", "--clone", str(self.remote), str(self.root / name), store=None, extra=extra)

    def outside_now(self) -> set[str]:
        return outside_files(self.root, skip=(self.remote, self.store, self.root / "fresh",
                                              self.root / "again", self.root / "empty"))


def _levels():
    import pygit2

    return (pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG, pygit2.enums.ConfigLevel.SYSTEM)


_GIT_LEVELS = _levels()


@pytest.fixture(scope="module")
def team_template(tmp_path_factory):
    """The team world built once per module (init --clone, two writes, a sync); each test copies it."""
    import pygit2

    home = tmp_path_factory.mktemp("team-home")
    saved = {level: pygit2.settings.search_path[level] for level in _GIT_LEVELS}
    for level in _GIT_LEVELS:  # hermetic like conftest's isolated_dirs, which runs only per test
        pygit2.settings.search_path[level] = str(home / "no-git-config")
    root = tmp_path_factory.mktemp("team")
    try:
        Team(root, home, background=False)
    finally:
        for level, path in saved.items():
            pygit2.settings.search_path[level] = path
    return root


@pytest.fixture
def team(team_template, tmp_path, isolated_dirs):
    """A copy of the module's team world in this test's tmp_path (a cp -a: milliseconds), its
    victim's origin pointed at the copied remote, run with this test's HOME."""
    shutil.copytree(team_template, tmp_path, symlinks=True, dirs_exist_ok=True)
    return Team.copied(tmp_path, isolated_dirs)


def _assert_refused(team: Team, res, commit: str, path: str) -> list[dict]:
    assert res.returncode == 4, (res.returncode, res.stdout, res.stderr)
    assert res.stdout == ""
    refused = refused_report(res.stderr)
    assert {"commit": commit, "path": path} in [{"commit": r["commit"], "path": r["path"]} for r in refused], refused
    return refused


def _assert_refused_everywhere(team: Team, commit: str, path: str, *, door: str) -> None:
    """refuse-unsafe through the named door, then the store still works for local writes."""
    outside = team.outside_now()
    if door == "sync":
        before = snapshot(team.store)
        _assert_refused(team, team.sync(), commit, path)
        assert snapshot(team.store) == before
        _assert_refused(team, team.sync(), commit, path)  # reported again, never half-applied
        assert snapshot(team.store) == before
    else:
        _assert_refused(team, team.clone(), commit, path)
        assert not (team.root / "fresh").exists(), "a refused clone leaves no directory behind"
        (team.root / "empty").mkdir()
        res = team.kyb("init", "--clone", str(team.remote), str(team.root / "empty"), store=None)
        _assert_refused(team, res, commit, path)
        assert list((team.root / "empty").iterdir()) == []
    assert team.outside_now() == outside, "nothing is ever written outside the store"
    assert sorted(p.name for p in (team.store / ".git" / "hooks").iterdir()) == snapshot(team.store)["hooks"]
    res = team.kyb("add", "--key", "after-refusal", "--title", "After", "--body", "still works")
    assert res.returncode == 0, res.stderr
    got = team.kyb("get", "seed")
    assert got.returncode == 0 and json.loads(got.stdout)["body"] == "seed body"


# -- refuse-unsafe: one test per attack, through sync and clone ------------------------------------

DOORS = pytest.mark.parametrize("door", ["sync", "clone"])


@DOORS
@pytest.mark.parametrize("path", ["../pwned.md", "knowledge/../../pwned.md", "../../outside/pwned.md"])
def test_refuse_unsafe_tree_entry_dotdot(team, door, path):
    commit = team.peer.write({path: (BLOB, record_text("pwned"))})
    _assert_refused_everywhere(team, commit, path, door=door)
    assert not (team.root / "pwned.md").exists() and not (team.outside / "pwned.md").exists()


@DOORS
@pytest.mark.parametrize("path", [".git/hooks/pre-push", ".GIT/hooks/post-checkout", ".Git/config",
                                  "knowledge/.git/hooks/pre-push", ".git. /hooks/pre-push"])
def test_refuse_unsafe_dot_git_component_in_any_case(team, door, path):
    marker = team.outside / "HOOK-RAN"
    commit = team.peer.write({path: (EXEC, f"#!/bin/sh\ntouch {marker}\n")})
    _assert_refused_everywhere(team, commit, path, door=door)
    assert not marker.exists(), "a hook from a peer's tree never runs"


@DOORS
def test_refuse_unsafe_record_directory_replaced_by_symlink(team, door):
    files = {p: None for p in team.peer.files() if p.startswith("tasks/")}
    commit = team.peer.write({**files, "tasks": (LINK, str(team.outside))})
    _assert_refused_everywhere(team, commit, "tasks", door=door)
    res = team.kyb("task", "--key", "task-z", "--title", "Z", "--body", "z")
    assert res.returncode == 0 and json.loads(res.stdout)["action"] == "created"
    assert (team.store / path_of_key("task-z")).is_file() and not (team.outside / "task-z.md").exists()


@DOORS
def test_refuse_unsafe_record_file_replaced_by_symlink(team, door):
    commit = team.peer.write({path_of_key("task-leak"): (LINK, str(team.outside / "secret.txt"))})
    _assert_refused_everywhere(team, commit, path_of_key("task-leak"), door=door)
    for args in (("context",), ("tasks", "--all"), ("deadlines",), ("query", "leaked")):
        res = team.kyb(*args)
        assert "LEAKED-OUTSIDE-CONTENT" not in res.stdout + res.stderr


@DOORS
@pytest.mark.parametrize("path", ["knowledge/sub", "vendor"])
def test_refuse_unsafe_gitlink(team, door, path):
    commit = team.peer.write({path: Entry(GITLINK, "1" * 40)})
    _assert_refused_everywhere(team, commit, path, door=door)


@DOORS
def test_refuse_unsafe_executable_record(team, door):
    commit = team.peer.write({path_of_key("run"): (EXEC, record_text("run", body="#!/bin/sh"))})
    _assert_refused_everywhere(team, commit, path_of_key("run"), door=door)


@DOORS
def test_refuse_unsafe_blob_over_the_cap(team, door, monkeypatch):
    cap = {"KYB_SYNC_MAX_BLOB": str(2 * 1024 * 1024)}
    team.env.update(cap)
    big = record_text("big", body="x" * (3 * 1024 * 1024))
    commit = team.peer.write({path_of_key("big"): (BLOB, big)})
    refused = None
    if door == "sync":
        res = team.sync()
        refused = _assert_refused(team, res, commit, path_of_key("big"))
    _assert_refused_everywhere(team, commit, path_of_key("big"), door=door)
    if refused:
        assert "cap" in refused[0]["reason"] or "bytes" in refused[0]["reason"]
    index = team.store / ".git" / "kyb" / "index.sqlite"
    team.kyb("query", "x")
    assert not index.exists() or index.stat().st_size < 1024 * 1024, "the big blob is never indexed"


@DOORS
def test_refuse_unsafe_commit_time_git_cannot_hold(team, door):
    """2^64-1 is refused by Git's own object checks (badDateOverflow): the commit is named."""
    commit = team.peer.write({path_of_key("late"): (BLOB, record_text("late"))}, when=2**64 - 1)
    outside = team.outside_now()
    if door == "sync":
        before = snapshot(team.store)
        refused = _assert_refused(team, team.sync(), commit, "")
        assert snapshot(team.store) == before
    else:
        refused = _assert_refused(team, team.clone(), commit, "")
        assert not (team.root / "fresh").exists()
    assert refused[0]["reason"]
    assert team.outside_now() == outside
    assert team.kyb("add", "--key", "after", "--title", "A", "--body", "b").returncode == 0


def test_refuse_unsafe_names_the_commit_that_wrote_it_not_a_later_one(team):
    bad = team.peer.write({path_of_key("run"): (EXEC, record_text("run"))})
    team.peer.write({path_of_key("fine"): (BLOB, record_text("fine"))})
    refused = _assert_refused(team, team.sync(), bad, path_of_key("run"))
    assert len(refused) == 1


def test_refuse_unsafe_dotdot_in_history_only_is_refused_by_git_checks(team):
    """A `..` entry that a later commit removed is still an object Git's checks reject on fetch."""
    bad = team.peer.write({"../pwned.md": (BLOB, "x")})
    team.peer.write({"../pwned.md": None})
    res = team.sync()
    assert res.returncode == 4 and res.stdout == ""
    refused = refused_report(res.stderr)
    assert refused[0]["commit"] == bad and refused[0]["path"] == "../pwned.md"


def test_a_worktree_symlink_is_never_written_or_read_through(team):
    """Whatever is in the working tree: a record directory swapped for a link by hand."""
    tasks = team.store / "tasks"
    shutil.rmtree(tasks)
    tasks.symlink_to(team.outside)
    res = team.kyb("task", "--key", "task-y", "--title", "Y", "--body", "y")
    assert res.returncode == 4 and res.stdout == "" and res.stderr.startswith("kyb: ")
    assert not (team.outside / "task-y.md").exists()
    (team.outside / "task-leak.md").write_text(record_text("task-leak", body="LEAKED-OUTSIDE-CONTENT",
                                                          status="open", due="2020-01-01"))
    for args in (("context",), ("deadlines",), ("tasks",)):
        res = team.kyb(*args, extra={"KYB_DEADLINES": "on"})
        assert "LEAKED" not in res.stdout + res.stderr and "task-leak" not in res.stdout + res.stderr
    tasks.unlink()
    res = team.kyb("task", "--key", "task-y", "--title", "Y", "--body", "y")
    assert res.returncode == 0, res.stderr


# -- held-out: records that break the write rules ----------------------------------------------------


def _sync_ok(team: Team, extra=None) -> dict:
    res = team.sync(extra=extra)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _clone_ok(team: Team, name: str) -> dict:
    res = team.kyb("init", "--clone", str(team.remote), str(team.root / name), store=None)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _held(reply: dict) -> list[tuple[str, str]]:
    for item in reply["held_out"]:
        assert set(item) == {"commit", "path", "reason"} and item["reason"], item
    return [(h["commit"], h["path"]) for h in reply["held_out"]]


def test_held_out_key_path_mismatch_never_writes_the_other_key(team):
    commit = team.peer.write({path_of_key("task-a"): (BLOB, record_text("task-b", status="open"))})
    reply = _sync_ok(team)
    assert _held(reply) == [(commit, path_of_key("task-a"))]
    assert "task-b" in reply["held_out"][0]["reason"]
    res = team.kyb("done", "task-a", "--resolution", "done")
    assert res.returncode != 0 and res.stdout == ""
    assert team.kyb("get", "task-b").returncode == 1
    assert team.kyb("history", "task-b").returncode == 1
    got = team.kyb("get", "task-a")
    assert got.returncode == 4 and got.stdout == "" and path_of_key("task-a") in got.stderr
    assert "task-b" not in team.kyb("tasks", "--all").stdout
    # reported on every sync and every clone while the remote holds it
    assert _held(_sync_ok(team)) == [(commit, path_of_key("task-a"))]
    assert _held(_clone_ok(team, "again")) == [(commit, path_of_key("task-a"))]
    # the repair is an ordinary write, and then nobody hears about it again
    fix = team.kyb("task", "--key", "task-a", "--title", "Task A", "--body", "fixed")
    assert fix.returncode == 0, fix.stderr
    assert _held(_sync_ok(team)) == []
    assert team.kyb("get", "task-a").returncode == 0


def test_held_out_knowledge_key_mismatch_is_not_served_under_either_key(team):
    commit = team.peer.write({path_of_key("alpha"): (BLOB, record_text("beta", body="who am i"))})
    assert _held(_sync_ok(team)) == [(commit, path_of_key("alpha"))]
    assert team.kyb("get", "beta").returncode == 1
    assert team.kyb("get", "alpha").returncode == 4
    hits = json.loads(team.kyb("query", "who am i").stdout)["hits"]
    assert [h for h in hits if h["key"] in ("alpha", "beta")] == []


def test_held_out_one_key_under_two_directories(team):
    inc = record_text("inc-d", body="database on fire", service="db", severity="high", status="open")
    commit = team.peer.write({path_of_key("inc-d"): (BLOB, inc),
                              "knowledge/inc-d.md": (BLOB, record_text("inc-d", body="shadow"))})
    reply = _sync_ok(team)
    assert _held(reply) == [(commit, "knowledge/inc-d.md")]
    got = json.loads(team.kyb("get", "inc-d").stdout)
    assert got["body"] == "database on fire" and got.get("state", "active") == "active"
    hits = json.loads(team.kyb("query", "database fire").stdout)["hits"]
    assert [h["key"] for h in hits] == ["inc-d"]
    assert "shadow" not in team.kyb("query", "shadow").stdout


def test_held_out_task_key_in_the_knowledge_directory(team):
    commit = team.peer.write({"knowledge/task-k.md": (BLOB, record_text("task-k", status="open"))})
    assert _held(_sync_ok(team)) == [(commit, "knowledge/task-k.md")]
    assert "task-k" not in team.kyb("tasks", "--all").stdout
    res = team.kyb("done", "task-k", "--resolution", "r")
    assert res.returncode == 1 and "no record" in res.stderr
    assert team.kyb("get", "task-k").returncode == 1


@pytest.mark.parametrize("name,text,reason", [
    ("secret", record_text("secret", body="token ghp_" + "k3Jq9ZpX2mVt7RwL5nYc8Hs4Fd6Gb1Ae0UoQ"), "secret"),
    ("huge", record_text("huge", body="y" * (1024 * 1024 + 10)), "bytes"),
    ("broken", "+++\nkey = \"broken\"\ntitle = [oops\n+++\n", "TOML"),
    ("nofront", "just text\n", "front matter"),
])
def test_held_out_rule_breaking_records_are_never_served(team, name, text, reason):
    commit = team.peer.write({f"knowledge/{name}.md": (BLOB, text)})
    for reply in (_sync_ok(team), _clone_ok(team, "again")):
        assert _held(reply) == [(commit, f"knowledge/{name}.md")]
        assert reason.lower() in reply["held_out"][0]["reason"].lower()
    got = team.kyb("get", name)
    assert got.returncode == 4 and got.stdout == ""
    for args in (("query", "token"), ("query", "y"), ("export",), ("context",), ("query", "--history", name)):
        res = team.kyb(*args)
        assert res.returncode == 0, (args, res.stderr)
        assert "ghp_" not in res.stdout and "yyyyyyyy" not in res.stdout
    assert team.kyb("add", "--key", "next", "--title", "N", "--body", "n").returncode == 0


def test_held_out_version_never_wins_a_conflict(team):
    team.kyb("add", "--key", "seed", "--title", "Seed", "--body", "local edit")
    commit = team.peer.write({path_of_key("seed"): (BLOB, record_text("seed", body="ghp_" + "Q7wE3rT9yU1iO5pA2sD8fG4hJ6kL0zXcVbNm"))},
                             when=int(time.time()) + 60)
    reply = _sync_ok(team)
    assert _held(reply) == [(commit, path_of_key("seed"))]
    assert json.loads(team.kyb("get", "seed").stdout)["body"] == "local edit"
    assert [c["kept_side"] for c in reply["conflicts"]] in ([], ["local"])
    # our merge was pushed: the remote no longer holds it at its tip
    assert _held(_clone_ok(team, "again")) == []


# -- wedges ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("journal", [
    '{"commit": "%s", "paths": ["knowledge/sub"]}',
    '{"commit": "0000000000000000000000000000000000000000", "paths": ["knowledge/x.md"]}',
    '{"commit": "%s", "paths": ["../../escape.md"]}',
    'not json at all',
])
def test_recovery_never_wedges_on_a_journal_it_cannot_apply(team, journal):
    if "knowledge/sub" in journal:  # HEAD holds a gitlink there (as a peer's tree once could)
        git("update-index", "--add", "--cacheinfo", f"160000,{'1' * 40},knowledge/sub", cwd=team.store)
        git("commit", "-q", "-m", "gitlink", cwd=team.store)
    head = git("rev-parse", "HEAD", cwd=team.store)
    path = team.store / ".git" / "kyb" / "pending.json"
    path.write_text(journal.replace("%s", head) if "%s" in journal else journal)
    first = team.kyb("add", "--key", "w1", "--title", "W", "--body", "one")
    assert first.returncode == 0, first.stderr
    assert "set aside" in first.stderr
    assert not path.exists()
    second = team.kyb("add", "--key", "w2", "--title", "W", "--body", "two")
    assert second.returncode == 0 and "set aside" not in second.stderr  # reported once
    assert not (team.root / "escape.md").exists()


def _hand_commit(store: Path, when: int, key: str = "far", body: str = "far future") -> str:
    """A commit with any time, made in the store with plumbing (no kyb, no datetime)."""
    blob = git("hash-object", "-w", "--stdin", cwd=store, input=record_text(key, body=body))
    git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path_of_key(key)}", cwd=store)
    tree = git("write-tree", cwd=store)
    head = git("rev-parse", "HEAD", cwd=store)
    raw = (f"tree {tree}\nparent {head}\nauthor h <h@x> {when} +0000\ncommitter h <h@x> {when} +0000\n\n"
           f"hand: {key}\n")
    commit = git("hash-object", "-t", "commit", "-w", "--stdin", "--literally", cwd=store, input=raw)
    git("update-ref", "HEAD", commit, cwd=store)
    (store / path_of_key(key)).parent.mkdir(parents=True, exist_ok=True)
    (store / path_of_key(key)).write_text(record_text(key, body=body))
    return commit


@pytest.mark.parametrize("when", [300_000_000_000, 2**63 - 1])
def test_any_commit_time_is_handled_in_every_read(team, when):
    _hand_commit(team.store, when)
    for args in (("query", "far"), ("get", "far"), ("history", "far"), ("export",), ("context",),
                 ("query", "--as-of", "2026-06-01", "far"), ("query", "--history", "far"), ("tags",)):
        res = team.kyb(*args)
        assert res.returncode == 0, (args, res.stderr)
    hit = json.loads(team.kyb("get", "far").stdout)
    assert hit["body"] == "far future"
    assert team.kyb("add", "--key", "after", "--title", "A", "--body", "b").returncode == 0


def test_far_future_commit_from_a_peer_is_clamped_and_reported(team):
    commit = team.peer.write({path_of_key("far"): (BLOB, record_text("far", body="from the future"))},
                             when=300_000_000_000)
    reply = _sync_ok(team)
    assert commit in [c["commit"] for c in reply["clamped"]]
    assert json.loads(team.kyb("get", "far").stdout)["body"] == "from the future"
    assert _clone_ok(team, "again")["head"] == commit


# -- bounded clocks and conflict reports ---------------------------------------------------------------


def test_bounded_clocks_a_2099_commit_does_not_win_against_a_later_write(team):
    """The peer's 2099 edit is bounded by the commits built on it; a later real edit beats it."""
    other = team.root / "other"
    assert team.kyb("init", "--clone", str(team.remote), str(other), store=None).returncode == 0
    f = team.peer.write({path_of_key("seed"): (BLOB, record_text("seed", body="from 2099"))},
                        when=4_080_000_000)
    reply = _sync_ok(team)  # the victim fast-forwards to F, then builds on it
    assert f in [c["commit"] for c in reply["clamped"]]
    assert team.kyb("add", "--key", "on-top", "--title", "T", "--body", "t").returncode == 0
    assert _sync_ok(team)["pushed"]
    time.sleep(1.1)
    res = team.kyb("add", "--key", "seed", "--title", "Seed", "--body", "later real edit", store=other)
    assert res.returncode == 0
    res = team.kyb("sync", store=other)
    assert res.returncode == 0, res.stderr
    reply = json.loads(res.stdout)
    assert json.loads(team.kyb("get", "seed", store=other).stdout)["body"] == "later real edit"
    assert [(c["key"], c["kept_side"]) for c in reply["conflicts"]] == [("seed", "local")]


def test_conflict_reports_come_only_from_kyb_merges_and_are_validated(team):
    victim_head = git("rev-parse", "HEAD", cwd=team.store)
    side = team.peer.write({path_of_key("side"): (BLOB, record_text("side"))})
    tree = git("--git-dir", str(team.remote), "rev-parse", f"{side}^{{tree}}")
    lies = (f"kyb: sync merge origin\n\nIntegrated.\n\nKyb-Action: sync\n"
            f"Kyb-Conflict: ../../etc/passwd both_changed kept={side} other={victim_head}\n"
            f"Kyb-Conflict: seed both_changed kept={side} other={victim_head}\n"
            f"Kyb-Conflict: task-a archive_vs_edit kept={side} other={victim_head}\n")
    merge = team.peer.commit(tree, [victim_head, side], lies)
    team.peer.push(merge)
    reply = _sync_ok(team)
    assert reply["conflicts"] == []
    assert "passwd" not in json.dumps(reply)


# -- sync-clone-parity and odd-but-legal histories -------------------------------------------------------


@pytest.mark.parametrize("when", [0, 1, 4_080_000_000])
def test_legal_dates_1970_and_2099_lose_nothing(team, when):
    commit = team.peer.write({path_of_key("dated"): (BLOB, record_text("dated", body="dated body"))}, when=when)
    reply = _sync_ok(team)
    assert reply["held_out"] == [] and reply["head"] == commit
    assert json.loads(team.kyb("get", "dated").stdout)["body"] == "dated body"
    assert json.loads(team.kyb("get", "seed").stdout)["body"] == "seed body"
    hist = json.loads(team.kyb("history", "dated").stdout)
    assert [r["sha"] for r in hist["versions"]] == [commit]
    assert team.kyb("add", "--key", "after", "--title", "A", "--body", "b").returncode == 0
    assert _sync_ok(team)["pushed"]


def test_five_parent_merge_from_a_peer(team):
    tip = team.peer.tip()
    sides = []
    for n in range(4):
        files = team.peer.files(tip)
        files[f"knowledge/side-{n}.md"] = Entry(BLOB, team.peer.blob(record_text(f"side-{n}", body=f"s{n}")))
        sides.append(team.peer.commit(team.peer.tree(files), [tip]))
    files = team.peer.files(tip)
    for n in range(4):
        files[f"knowledge/side-{n}.md"] = team.peer.files(sides[n])[f"knowledge/side-{n}.md"]
    octopus = team.peer.push(team.peer.commit(team.peer.tree(files), [tip, *sides], "octopus\n"))
    team.kyb("add", "--key", "mine", "--title", "M", "--body", "mine")
    reply = _sync_ok(team)
    assert reply["merged"] and reply["pushed"]
    for n in range(4):
        assert json.loads(team.kyb("get", f"side-{n}").stdout)["body"] == f"s{n}"
        hist = json.loads(team.kyb("history", f"side-{n}").stdout)
        assert sides[n] in json.dumps(hist)
    assert octopus in git("rev-list", "HEAD", cwd=team.store)


def test_force_pushed_remote_loses_nothing_local(team):
    team.kyb("add", "--key", "mine", "--title", "M", "--body", "mine")
    root_only = team.peer.commit(team.peer.tree({path_of_key("new"): Entry(BLOB, team.peer.blob(
        record_text("new", body="rewritten history")))}), [], "rewrite\n")
    team.peer.push(root_only)
    reply = _sync_ok(team)
    assert reply["merged"]
    for key, body in (("mine", "mine"), ("seed", "seed body"), ("new", "rewritten history")):
        assert json.loads(team.kyb("get", key).stdout)["body"] == body


def test_readme_at_the_root_is_legal_and_kept(team):
    commit = team.peer.write({"README.md": (BLOB, "# our team store\n"), "docs/notes.txt": (BLOB, "n\n")})
    reply = _sync_ok(team)
    assert reply["held_out"] == [] and reply["head"] == commit
    assert (team.store / "README.md").read_text() == "# our team store\n"
    assert git("status", "--porcelain", cwd=team.store) == ""
    assert team.kyb("add", "--key", "after", "--title", "A", "--body", "b").returncode == 0


def test_init_clone_and_sync_give_the_same_answer(team):
    """sync-clone-parity: the same remote is refused or held out the same way by both doors."""
    commit = team.peer.write({path_of_key("broken"): (BLOB, "nope\n")})
    synced = _sync_ok(team)
    cloned = _clone_ok(team, "again")
    assert synced["held_out"] == cloned["held_out"] == [
        {"commit": commit, "path": path_of_key("broken"), "reason": synced["held_out"][0]["reason"]}]
    bad = team.peer.write({path_of_key("run"): (EXEC, record_text("run"))})
    a, b = team.sync(), team.clone()
    assert a.returncode == b.returncode == 4
    assert refused_report(a.stderr) == refused_report(b.stderr)
    assert refused_report(a.stderr)[0]["commit"] == bad


# -- scale -----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_50000_records_in_one_commit_sync_in_bounded_time(team):
    files = team.peer.files()
    shas = team.peer.blobs([record_text(f"bulk-{n}", body=f"bulk record number {n}").encode()
                            for n in range(50_000)])
    for n, sha in enumerate(shas):
        files[f"knowledge/bulk-{n}.md"] = Entry(BLOB, sha)
    commit = team.peer.push(team.peer.commit(team.peer.tree(files), [team.peer.tip()], "bulk\n"))
    team.kyb("add", "--key", "mine", "--title", "M", "--body", "mine")
    started = time.monotonic()
    reply = _sync_ok(team)
    took = time.monotonic() - started
    assert reply["merged"] and reply["held_out"] == []
    assert took <= 30 * max(1.0, os.getloadavg()[0] / 2), took
    assert json.loads(team.kyb("get", "bulk-49999").stdout)["body"] == "bulk record number 49999"
    assert commit in git("rev-list", "HEAD", cwd=team.store)
