"""A writer SIGKILLed mid-write leaves the canon exactly as before or exactly as after; the next write
heals the working tree through the journal. Deterministic points use the test-only fault runner
(tests/support/faults.py); tests/test_faults.py covers every write command and every step."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.kinds.knowledge import add_knowledge
from kyb_cli.core.records.model import parse
from kyb_cli.core.canon.repo import Store
from support import oracle
from support.worktree_check import fsck_clean, worktree_matches_head
from kyb_cli.core.records.keys import path_of_key

WHO = Attribution("test", "", "", "cli")


def git(store, *args: str) -> str:
    return subprocess.run(["git", "-C", str(store), *args], check=True, capture_output=True, text=True).stdout


def head(store) -> str:
    return git(store, "rev-parse", "HEAD").strip()


def write(kyb, *args: str, body: str, fault: str | None = None):
    if fault is None:
        return kyb(*args, input=body)
    return faulted(kyb, fault, *args, input=body)


def faulted(kyb, point: str, *args: str, input: str = ""):
    root = Path(__file__).resolve().parents[1]
    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH", "")]))}
    proc = subprocess.run([sys.executable, "-m", "tests.support.faults", point, "kill", *args], input=input,
                          capture_output=True, text=True, env={**kyb.env, "KYB_STORE": str(kyb.store_path), **env},
                          timeout=60)
    return type("Res", (), {"code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr})()


@pytest.fixture
def seeded(kyb, store_path):
    assert write(kyb, "add", "--key", "k", "--title", "T", body="version one").code == 0
    assert write(kyb, "add", "--key", "other", "--title", "O", body="other").code == 0
    return head(store_path)


@pytest.mark.parametrize("point,moved", [("before-ref", False), ("after-ref", True), ("after-worktree", True)])
def test_kill_mid_update_leaves_before_or_after(kyb, store_path, seeded, point, moved):
    res = write(kyb, "add", "--key", "k", "--title", "T", body="version two", fault=point)
    assert res.code == -signal.SIGKILL and res.stdout == ""
    after = head(store_path)
    assert (after != seeded) is moved
    if moved:
        assert git(store_path, "rev-parse", "HEAD~1").strip() == seeded
        assert git(store_path, "show", "--name-only", "--format=", "HEAD").split() == [path_of_key("k")]
    fsck_clean(store_path)
    expected = "version two" if moved else "version one"
    assert kyb("get", "k").json["body"] == expected  # reads come from Git, right away
    # the next write (of another key) heals the working tree
    assert write(kyb, "add", "--key", "third", "--title", "3", body="three").code == 0
    worktree_matches_head(store_path)
    assert parse((store_path / path_of_key("k")).read_bytes()).body == expected
    # and the interrupted write can simply be made again
    again = write(kyb, "add", "--key", "k", "--title", "T", body="version two").json
    assert again == ({"changed": False, "key": "k"} if moved else {**again, "action": "updated"})


@pytest.mark.parametrize("point,moved", [("before-ref", False), ("after-ref", True)])
def test_kill_mid_retract_leaves_before_or_after(kyb, store_path, seeded, point, moved):
    res = faulted(kyb, point, "rm", "k", "--reason", "wrong")
    assert res.code == -signal.SIGKILL
    assert (head(store_path) != seeded) is moved
    fsck_clean(store_path)
    assert write(kyb, "add", "--key", "k" if not moved else "third", "--title", "T",
                 body="version one" if not moved else "x").code == 0
    worktree_matches_head(store_path)
    assert (store_path / path_of_key("k")).exists() is (not moved)


def test_same_key_write_after_crash_is_not_mistaken_for_a_hand_edit(kyb, store_path, seeded):
    write(kyb, "add", "--key", "k", "--title", "T", body="version two", fault="after-ref")
    res = write(kyb, "add", "--key", "k", "--title", "T", body="version three")
    assert res.code == 0 and res.json["action"] == "updated"
    worktree_matches_head(store_path)


def test_libgit2_leftovers_of_a_killed_writer_are_cleaned(kyb, store_path, seeded):
    """Killed inside index.write or before a rename: a stale index.lock and our temp file remain."""
    write(kyb, "add", "--key", "k", "--title", "T", body="version two", fault="after-ref")
    (store_path / ".git" / "index.lock").write_bytes(b"partial")
    bucket = (store_path / path_of_key("third")).parent  # the directory the next write touches
    bucket.mkdir(parents=True, exist_ok=True)
    (bucket / ".k.md.kyb-99999.tmp").write_text("partial")
    assert write(kyb, "add", "--key", "third", "--title", "3", body="three").code == 0
    worktree_matches_head(store_path)
    assert not (store_path / ".git" / "index.lock").exists()


LOOP_WRITER = """
import sys
from pathlib import Path
from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.kinds.knowledge import add_knowledge, retract_knowledge
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.errors import KybError
store = Store(Path(sys.argv[1]))
who = Attribution("loop", "", "", "cli")
print("ready", flush=True)
i = 0
while True:
    i += 1
    key = f"r{i % 3}"
    try:
        if i % 5 == 0:
            retract_knowledge(store, key, "loop", who)
        else:
            add_knowledge(store, key=key, title="T", body=f"{sys.argv[2]} {i}", tags=[], refs=[], attribution=who)
    except KybError:
        pass
"""


@pytest.mark.slow  # dozens of killed writer processes: ~6 s
def test_random_kills_keep_the_invariants(store_path):
    rng = random.Random(20261129)
    store = Store(store_path)
    for round_ in range(10):
        before = head(store_path)
        proc = subprocess.Popen([sys.executable, "-c", LOOP_WRITER, str(store_path), str(round_)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        after = head(store_path)
        fsck_clean(store_path)
        # every commit the writer made is a whole kyb commit touching exactly one record file
        for sha in git(store_path, "rev-list", f"{before}..{after}").split():
            assert git(store_path, "log", "-1", "--format=%s", sha).startswith("kyb: ")
            assert len(git(store_path, "show", "--name-only", "--format=", sha).split()) == 1
        # HEAD's records all parse, and the next write heals the working tree
        records, broken = oracle.live_records(store)
        assert broken == []
        add_knowledge(store, key="heal", title="H", body=f"heal {round_}", tags=[], refs=[], attribution=WHO)
        worktree_matches_head(store_path)
