"""`kyb sync` where the rule is about processes and the network part: real `kyb`/`git` subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kyb_cli.core.canon.repo import Store
from kyb_cli.core.records.keys import path_of_key
from support.sync_world import ROOT_ENV, World, git

DRIVER = """
import json, sys
from support.sync_world import ATTR
from kyb_cli.core.kinds.knowledge import add_knowledge
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.sync.flow import sync
path, name, rounds, also_sync = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
store = Store(path)
written = []
for i in range(rounds):
    for key in (f"{name}-{i}", "shared"):
        r = add_knowledge(store, key=key, title=key, body=f"{name} {i}", tags=[], refs=[], attribution=ATTR)
        written.append([key, r.sha])
    if also_sync:
        sync(store, attribution=ATTR)
print(json.dumps(written))
"""

SYNCER = """
import sys
from support.sync_world import ATTR
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.sync.flow import sync
for _ in range(int(sys.argv[2])):
    sync(Store(sys.argv[1]), attribution=ATTR)
"""


@pytest.fixture
def world(tmp_path):
    return World(tmp_path)


def _py(script: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, **ROOT_ENV}
    return subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_interleaved_syncs_from_concurrent_processes(world):
    stores = [world.clone(n) for n in ("a", "b", "c")]
    writers = [_py(DRIVER, str(s.path), s.path.name, "3", "1") for s in stores]
    extra = _py(SYNCER, str(stores[0].path), "3")  # a second process syncing clone a meanwhile
    for proc in [*writers, extra]:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        for key, sha in json.loads(out or "[]"):
            world.written.setdefault(key, set()).add(sha)
    assert sum(len(v) for v in world.written.values()) == 18
    world.settle(stores)
    world.check(stores)


def test_push_race_is_retried(world):
    """Another clone pushes between our fetch and our push (a pre-push hook makes it happen once)."""
    a, b = world.clone("a"), world.clone("b")
    world.add(b, "from-b", "pushed during a's sync")
    world.add(a, "from-a", "a's own write")
    hook = a.path / ".git" / "hooks" / "pre-push"
    hook.write_text(f"#!/bin/sh\n[ -e \"{a.path}/.git/raced\" ] && exit 0\ntouch \"{a.path}/.git/raced\"\n"
                    f"unset GIT_DIR\ngit -C \"{b.path}\" push -q origin main >/dev/null 2>&1\nexit 0\n")
    hook.chmod(0o755)
    reply = world.sync(a)
    assert reply["attempts"] == 2 and reply["merged"] and reply["pushed"]
    world.settle([a, b])
    world.check([a, b])


def test_unreachable_remote_is_exit_5_and_local_writes_keep_working(world, kyb):
    a = world.clone("a")
    kyb.store_path = a.path
    assert kyb("add", "--key", "before", "--title", "t", "--body", "x").code == 0
    assert kyb("sync").code == 0
    world.remote.rename(world.root / "gone.git")
    res = kyb("sync")
    assert res.code == 5 and res.stdout == ""
    assert "cannot reach remote 'origin'" in res.stderr and "local reads and writes keep working" in res.stderr
    # git's own reason is in the message, not its generic access-rights advice
    assert "does not appear to be a git repository" in res.stderr and "Please make sure" not in res.stderr
    assert kyb("add", "--key", "offline", "--title", "t", "--body", "y").code == 0
    assert kyb("get", "offline").code == 0
    (world.root / "gone.git").rename(world.remote)  # back online: the offline write goes out
    assert kyb("sync").json["pushed"] is True
    history = kyb("history", "offline").json
    assert len(history["versions"]) == 1


def test_store_without_remote_is_exit_5_with_a_hint(kyb):
    res = kyb("sync")
    assert res.code == 5 and "kyb remote URL" in res.stderr and res.stdout == ""


def test_git_never_waits_for_a_prompt(world, kyb):
    """A remote that never answers (an ssh command that hangs) ends at KYB_SYNC_TIMEOUT with exit 5."""
    a = world.clone("a")
    kyb.store_path = a.path
    git("config", "core.sshCommand", "sh -c 'sleep 30'", cwd=a.path)
    git("config", "ssh.variant", "simple", cwd=a.path)
    git("remote", "set-url", "origin", "ssh://nobody@unreachable.invalid/store.git", cwd=a.path)
    started = time.monotonic()
    res = kyb("sync", env={"KYB_SYNC_TIMEOUT": "1"})
    assert res.code == 5 and "no answer within 1 s" in res.stderr
    assert time.monotonic() - started < 10


def test_remote_command_shows_sets_and_respects_plain_git(world, kyb):
    a = world.clone("a")
    world.add(a, "alpha", "the team's")
    world.sync(a)
    assert kyb("add", "--key", "beta", "--title", "t", "--body", "mine").code == 0
    assert kyb("remote").json == {"remote": "origin", "url": None}
    empty = kyb("remote", " ")
    assert (empty.code, empty.stdout) == (2, "") and "remote URL is empty" in empty.stderr
    assert kyb("remote", str(world.remote)).json["url"] == str(world.remote)
    assert kyb("remote").json["url"] == str(world.remote)
    git("remote", "set-url", "origin", "/elsewhere.git", cwd=kyb.store_path)
    assert kyb("remote").json["url"] == "/elsewhere.git"
    git("remote", "set-url", "origin", str(world.remote), cwd=kyb.store_path)
    res = kyb("sync")
    assert res.code == 0 and res.json["merged"]  # an independent `kyb init` joins the team's history
    assert (kyb.store_path / path_of_key("alpha")).exists()


def test_init_clone_makes_a_working_store(world, kyb, tmp_path):
    target = tmp_path / "cloned"
    res = kyb("init", "--clone", str(world.remote), str(target))
    assert res.code == 0 and res.json["cloned_from"] == str(world.remote)
    kyb.store_path = target
    assert kyb("add", "--key", "k", "--title", "t", "--body", "b").code == 0
    assert kyb("sync").json["pushed"]
    assert kyb("init", "--clone", str(world.root / "missing.git"), str(tmp_path / "x")).code == 5


def _config(tmp_path: Path, auto: bool) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(f"[sync]\nauto = {'true' if auto else 'false'}\n")
    return {"KYB_CONFIG": str(path)}


def _wait_for(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_auto_sync_pushes_in_the_background(world, kyb, tmp_path):
    a = world.clone("a")
    kyb.store_path = a.path
    res = kyb("add", "--key", "auto", "--title", "t", "--body", "x", env=_config(tmp_path, True))
    assert res.code == 0 and res.stderr == ""
    sha = res.json["sha"]
    assert _wait_for(lambda: git("rev-parse", "main", cwd=world.remote).stdout.strip() == sha)
    assert _wait_for(lambda: '"ok": true' in (a.kyb_dir / "sync.log").read_text()
                     if (a.kyb_dir / "sync.log").exists() else False)


def test_auto_sync_never_blocks_the_write_and_logs_failures(world, kyb, tmp_path):
    """The remote hangs for 30 s; the write answers at once and the failure lands in .git/kyb/sync.log."""
    a = world.clone("a")
    kyb.store_path = a.path
    git("config", "core.sshCommand", "sh -c 'sleep 30'", cwd=a.path)
    git("config", "ssh.variant", "simple", cwd=a.path)
    git("remote", "set-url", "origin", "ssh://nobody@unreachable.invalid/store.git", cwd=a.path)
    env = {**_config(tmp_path, True), "KYB_SYNC_TIMEOUT": "2"}
    started = time.monotonic()
    res = kyb("add", "--key", "auto", "--title", "t", "--body", "x", env=env)
    elapsed = time.monotonic() - started
    assert res.code == 0 and res.stderr == "" and elapsed < 5
    log = a.kyb_dir / "sync.log"
    assert _wait_for(lambda: log.exists() and '"exit": 5' in log.read_text())


def test_auto_sync_off_starts_nothing(world, kyb, tmp_path):
    a = world.clone("a")
    kyb.store_path = a.path
    assert kyb("add", "--key", "k", "--title", "t", "--body", "x", env=_config(tmp_path, False)).code == 0
    time.sleep(0.5)
    assert not (a.kyb_dir / "sync.log").exists()
    assert Store(a.path).head_sha() != git("rev-parse", "main", cwd=world.remote).stdout.strip()
