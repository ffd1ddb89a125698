"""Disk full, on a real tiny filesystem (a tmpfs the test mounts; skipped with the reason where it
cannot): every answer is the truth. A write that answered success is in Git; a write that failed
answered exit 4 with a message naming the store and what to free, and is not in Git; no answer is
an internal error. Once space is freed the next write succeeds and the working tree is whole."""

from __future__ import annotations

import errno
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tmpfs import tiny_tmpfs

pytestmark = pytest.mark.slow


@pytest.fixture
def tiny_fs(tmp_path):
    with tiny_tmpfs(tmp_path, "3m") as mnt:
        yield mnt


def run(env, *args, input=""):
    proc = subprocess.run([sys.executable, "-m", "kyb_cli", *args], input=input, capture_output=True,
                          text=True, env=env, timeout=60)
    return proc.returncode, proc.stdout, proc.stderr


def fill(mnt: Path, leave: int) -> Path:
    """Fill the filesystem, then give back `leave` bytes."""
    filler = mnt / "filler"
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    try:
        with open(filler, "ab") as f:  # the last page
            f.write(b"\0" * 4096)
    except OSError:
        pass
    size = filler.stat().st_size
    os.truncate(filler, max(0, size - leave))
    return filler


def git(store: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(store), *args], capture_output=True, text=True,
                          check=True).stdout


def test_disk_full_answers_tell_the_truth(kyb, tiny_fs):
    store = tiny_fs / "store"
    env = {**kyb.env, "KYB_STORE": str(store)}
    code, _out, err = run(env, "init", str(store))
    assert code == 0, err
    for i in range(3):
        assert run(env, "add", "--key", f"seed-{i}", "--title", "S", input=f"seed {i}")[0] == 0
    assert run(env, "query", "seed")[0] == 0
    rng = random.Random(7)
    filler = fill(tiny_fs, leave=160 * 1024)
    acknowledged, refused = {}, []
    for i in range(40):
        body = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789 \n") for _ in range(rng.randint(2000, 12000)))
        code, out, err = run(env, "add", "--key", f"x-{i}", "--title", "X", input=body)
        assert "internal error" not in err, err
        if code == 0:
            acknowledged[f"x-{i}"] = json.loads(out)["sha"]
        else:
            assert (code, out) == (4, ""), err
            line = err.strip().splitlines()[-1]
            assert line.startswith("kyb: ") and str(store) in line and "free" in line, line
            refused.append(f"x-{i}")
        if i % 5 == 4:  # reads on a full disk: an answer, or a clear store error
            qcode, _q, qerr = run(env, "query", "seed")
            assert qcode in (0, 4) and "internal error" not in qerr, qerr
    assert refused, "the filesystem never filled up: the test proves nothing"
    log = git(store, "log", "--format=%H %s").splitlines()
    in_git = {line.split()[3]: line.split()[0] for line in log if line.split()[1:3] == ["kyb:", "add"]}
    # every acknowledged write is in Git with the sha it answered, and no refused write is
    for key, sha in acknowledged.items():
        assert in_git.get(key) == sha
    assert not [key for key in refused if key in in_git]
    # the leftovers of failed writes do not keep the disk full: after freeing space all works
    filler.unlink()
    code, _out, err = run(env, "add", "--key", "after", "--title", "A", input="space again")
    assert code == 0, err
    assert git(store, "status", "--porcelain", "--untracked-files=all") == ""
    subprocess.run(["git", "-C", str(store), "fsck", "--strict", "--no-dangling"], check=True,
                   capture_output=True)
    assert run(env, "query", "space")[0] == 0


def test_failure_3_init_clone_onto_a_really_full_disk_refuses_with_what_to_do(kyb, tiny_fs, tmp_path):
    """Issue 24 failure 3 on a real full filesystem (the fault-step version runs in the fast lane:
    tests/test_hostile_round_two_more.py): exit 4 naming the fix, nothing left behind, then it works."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    for i in range(5):
        assert kyb("add", "--key", f"k-{i}", "--title", "K", input=os.urandom(3000).hex()).code == 0
    assert kyb("remote", str(remote)).code == 0 and kyb("sync").code == 0
    target = tiny_fs / "clone"
    for leave in (0, 16 * 1024, 96 * 1024):
        filler = fill(tiny_fs, leave=leave)
        code, out, err = run(kyb.env, "init", "--clone", str(remote), str(target))
        assert (code, out) == (4, ""), (leave, code, err)
        assert "is full" in err and "kyb init --clone" in err and "internal error" not in err, err
        assert sorted(p.name for p in tiny_fs.iterdir()) == ["filler"]
        filler.unlink()
    code, out, err = run(kyb.env, "init", "--clone", str(remote), str(target))
    assert code == 0, err
