"""The answer tells the truth, for every write command with a fault at every step of its write.

Black-box: the real `kyb` in a subprocess (through tests/support/faults.py, the test-only fault
hook), the answer checked against Git afterwards. The line is the branch move:
- before it (`before-commit`, `before-ref`) nothing is visible: a killed writer leaves HEAD as it was,
  a failed one answers exit 4 with empty stdout;
- after it (`after-ref`, `after-worktree`) the write happened: a killed writer leaves HEAD moved, a
  failed one answers success (exit 0, the JSON with the new sha) plus a warning on stderr about what
  it could not finish;
- either way the next call repairs the working tree (and leaves no journal or temp file);
- one user action moves the branch once, closing included (the closing version and the archive are
  two commits built in memory, the ref moves from before to the archive in one update).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kyb_cli.core.records.keys import path_of_key
from support.worktree_check import fsck_clean, worktree_matches_head

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("before-commit", "before-ref", "after-ref", "after-worktree")
MOVED = {"before-commit": False, "before-ref": False, "after-ref": True, "after-worktree": True}


def git(path: Path, *args: str, check: bool = True) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", "-C", str(path), *args], check=check, capture_output=True, text=True,
                          env=env).stdout


def head(store: Path) -> str:
    return git(store, "rev-parse", "HEAD").strip()


def reflog_len(store: Path) -> int:
    return len(git(store, "reflog", "show", "--format=%H", "refs/heads/main").split())


class Run:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr

    @property
    def json(self):
        return json.loads(self.stdout)


def faulted(kyb_env: dict[str, str], store: Path, point: str, action: str, *args: str,
            input: str = "") -> Run:
    env = {**kyb_env, "KYB_STORE": str(store),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), kyb_env.get("PYTHONPATH", "")]))}
    proc = subprocess.run([sys.executable, "-m", "tests.support.faults", point, action, *args],
                          input=input, capture_output=True, text=True, env=env, timeout=60)
    return Run(proc.returncode, proc.stdout, proc.stderr)


def _blob(store: Path, rev: str, path: str) -> str | None:
    out = subprocess.run(["git", "-C", str(store), "show", f"{rev}:{path}"], capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else None


def _close_happened(store: Path, before: str, path: str, status: str) -> None:
    assert git(store, "rev-parse", "HEAD~2").strip() == before
    assert _blob(store, "HEAD", path) is None
    closing = _blob(store, "HEAD~1", path)
    assert closing is not None and f'status = "{status}"' in closing
    assert git(store, "log", "-1", "--format=%s").strip().startswith("kyb: archive ")


COMMANDS = {
    "add": (["add", "--key", "k", "--title", "T"], "version two",
            lambda s, b: "version two" in (_blob(s, "HEAD", path_of_key("k")) or "")),
    "rm": (["rm", "k", "--reason", "it was wrong"], "",
           lambda s, b: _blob(s, "HEAD", path_of_key("k")) is None),
    "incident": (["incident", "--key", "inc-a", "--title", "A", "--service", "orders", "--severity", "high"],
                 "second report", lambda s, b: "second report" in (_blob(s, "HEAD", path_of_key("inc-a")) or "")),
    "resolve": (["resolve", "inc-a", "--resolution", "heap raised"], "",
                lambda s, b: _close_happened(s, b, path_of_key("inc-a"), "resolved") is None),
    "task": (["task", "--key", "task-a", "--title", "A"], "second text",
             lambda s, b: "second text" in (_blob(s, "HEAD", path_of_key("task-a")) or "")),
    "task-status": (["task-status", "task-a", "--status", "in_progress"], "",
                    lambda s, b: 'status = "in_progress"' in (_blob(s, "HEAD", path_of_key("task-a")) or "")),
    "done": (["done", "task-a", "--resolution", "shipped"], "",
             lambda s, b: _close_happened(s, b, path_of_key("task-a"), "done") is None),
}


SEEDS = (
    (["add", "--key", "k", "--title", "T"], "version one"),
    (["add", "--key", "other", "--title", "O"], "other"),
    (["incident", "--key", "inc-a", "--title", "A", "--service", "orders", "--severity", "high"], "first"),
    (["task", "--key", "task-a", "--title", "A"], "first"),
)


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """One seeded store per module, copied for each test (seeding costs four kyb processes)."""
    from kyb_cli.core.canon.repo import init_store

    home = tmp_path_factory.mktemp("seed-home")
    path = tmp_path_factory.mktemp("template") / "store"
    init_store(path)
    env = {**os.environ, "KYB_STORE": str(path), "XDG_CONFIG_HOME": str(home / "config"),
           "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"), "KYB_DEADLINES": "off",
           "KYB_BACKGROUND": "off"}  # no detached filler writing the index while a test copies the template
    for args, body in SEEDS:
        proc = subprocess.run([sys.executable, "-m", "kyb_cli", *args], input=body, capture_output=True,
                              text=True, env=env, timeout=60)
        assert proc.returncode == 0, proc.stderr
    return path


@pytest.fixture
def seeded(template, store_path):
    import shutil

    shutil.rmtree(store_path)
    shutil.copytree(template, store_path, symlinks=True)
    return store_path


def _check_answer(res: Run, store: Path, before: str, point: str, action: str, happened,
                  answered=lambda reply: (reply.get("archive_sha"), reply.get("sha"))) -> None:
    moved = MOVED[point]
    after = head(store)
    assert (after != before) is moved, (point, action, res.stderr)
    if action == "kill":
        assert res.code == -signal.SIGKILL and res.stdout == ""
    elif moved:  # the write happened: success, plus a warning about what was left
        assert res.code == 0, res.stderr
        assert after in answered(res.json)
        assert "warning" in res.stderr and "internal error" not in res.stderr
    else:  # nothing happened: a clear store error, nothing on stdout
        assert (res.code, res.stdout) == (4, "")
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("kyb: ") and "internal error" not in lines[0]
    if moved:
        assert happened(store, before), point
        # one user action, one branch move (closing included)
        assert git(store, "reflog", "show", "--format=%H", "-n", "1", "refs/heads/main").strip() == after
    fsck_clean(store)


def _matrix():
    """Every command x step x action; the fast lane (`-m "not slow"`) keeps both sides of the branch
    move for `add` and the close path just after it; the full suite runs all of it."""
    for command in COMMANDS:
        for point in STEPS:
            for action in ("kill", "enospc"):
                fast = (command == "add" and point in ("before-ref", "after-ref")) or \
                    (command == "done" and point == "after-ref")
                yield pytest.param(command, point, action, id=f"{command}-{point}-{action}",
                                   marks=() if fast else pytest.mark.slow)


@pytest.mark.parametrize("command,point,action", list(_matrix()))
def test_write_answer_matches_git_with_a_fault_at_each_step(kyb, seeded, command, point, action):
    store = seeded
    args, body, happened = COMMANDS[command]
    before, moves_before = head(store), reflog_len(store)
    res = faulted(kyb.env, store, point, action, *args, input=body)
    _check_answer(res, store, before, point, action, happened)
    assert reflog_len(store) - moves_before == (1 if MOVED[point] else 0)
    # reads answer from Git at once, whatever the working tree looks like
    key = {"add": "k", "rm": "k", "incident": "inc-a", "resolve": "inc-a", "task": "task-a",
           "task-status": "task-a", "done": "task-a"}[command]
    got = kyb("get", key)
    if command == "rm" and MOVED[point]:
        assert got.code == 1
    else:
        assert got.code == 0, got.stderr
        if command in ("resolve", "done"):
            assert got.json["state"] == ("archived" if MOVED[point] else "active")
    # the next call repairs the working tree and leaves nothing behind
    assert kyb("add", "--key", "next", "--title", "N", input="heal").code == 0
    worktree_matches_head(store)
    # and the interrupted action can simply be made again
    again = kyb(*args, input=body)
    if MOVED[point]:
        assert again.code in (0, 1), again.stderr  # already done: unchanged, or "already retracted"
        if again.code == 0:
            assert again.json["changed"] is False
    else:
        assert again.code == 0 and again.json["changed"] is True, again.stderr
    worktree_matches_head(store)


# -- sync: the integration moves the branch once, with the same truth rule ---------------------------

@pytest.fixture
def synced(kyb, seeded, tmp_path):
    """A remote with one commit our store lacks, and one local commit the remote lacks (a merge)."""
    store = seeded
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(store, "remote", "add", "origin", str(remote))
    git(store, "push", "-q", "origin", "main")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(remote), str(other))
    (other / "knowledge").mkdir(exist_ok=True)
    (other / path_of_key("from-other")).parent.mkdir(parents=True, exist_ok=True)
    (other / path_of_key("from-other")).write_text('+++\nkey = "from-other"\ntitle = "F"\n+++\n\nremote\n')
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "kyb: add from-other")
    git(other, "push", "-q", "origin", "main")
    assert kyb("add", "--key", "local", "--title", "L", input="local").code == 0
    return store, remote


@pytest.mark.slow
@pytest.mark.parametrize("action", ("kill", "enospc"))
@pytest.mark.parametrize("point", STEPS)
def test_sync_answer_matches_git_with_a_fault_at_each_step(kyb, synced, point, action):
    store, remote = synced
    before = head(store)
    res = faulted(kyb.env, store, point, action, "sync")

    def happened(s: Path, b: str) -> bool:
        return _blob(s, "HEAD", path_of_key("from-other")) is not None and \
            _blob(s, "HEAD", path_of_key("local")) is not None

    _check_answer(res, store, before, point, action, happened, answered=lambda reply: (reply["head"],))
    assert kyb("sync").code == 0
    worktree_matches_head(store)
    assert git(remote, "rev-parse", "main").strip() == head(store)


@pytest.mark.parametrize("command", ["add", "done"])
def test_a_read_after_an_unfinished_write_finishes_it(kyb, seeded, command):
    """The write moved the branch but could not update the working tree: the next call, even a
    read, brings it along (when no writer holds the lock)."""
    args, body, _happened = COMMANDS[command]
    res = faulted(kyb.env, seeded, "after-ref", "enospc", *args, input=body)
    assert res.code == 0 and "warning" in res.stderr
    assert (seeded / ".git" / "kyb" / "pending.json").exists()
    assert kyb("get", "k" if command == "add" else "task-a").code == 0
    worktree_matches_head(seeded)


def test_the_fault_hook_is_not_reachable_from_a_normal_run(kyb, seeded):
    """The write path reads no fault setting: the old KYB_FAULT variable does nothing to a write
    (its steps are faults.step, replaced only by tests/support/faults.py in its own process)."""
    before = head(seeded)
    res = kyb("add", "--key", "k", "--title", "T", input="version two",
              env={"KYB_FAULT": "before-ref", "KYB_FAULTS": "before-ref:kill"})
    assert res.code == 0 and head(seeded) != before
    for room in ("canon", "kinds", "records", "sync"):
        source = "\n".join(p.read_text() for p in (ROOT / "kyb_cli" / "core" / room).rglob("*.py"))
        assert "KYB_FAULT" not in source, room
