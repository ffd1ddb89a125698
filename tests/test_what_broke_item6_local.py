"""Issue 37, item 6 (the local side of a sync and of the store's own files):

- fetch-disk-full-is-said: a full local disk during the fetch is the store error that names the
  store and what to free (exit 4), not "cannot reach remote" (exit 5); nothing is changed.
- remote-url-on-read-only-store: `kyb remote URL` on a store whose `.git` cannot be written is the
  documented store error (exit 4, the path and the fix), not exit 5; the config is unchanged.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.support.tmpfs import tiny_tmpfs

from support.hostile import BLOB, run_kyb
from test_sync_hostile import team, team_template  # noqa: F401 (fixtures)


@pytest.fixture
def tiny_fs(tmp_path):
    with tiny_tmpfs(tmp_path, "4m") as mnt:
        yield mnt


def test_fetch_disk_full_is_said(team, tiny_fs):
    store = tiny_fs / "victim"
    shutil.copytree(team.store, store, symlinks=True)
    head = subprocess.run(["git", "-C", str(store), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    team.peer.write({"data/big.bin": (BLOB, os.urandom(6 * 1024 * 1024))})  # more than the disk holds
    res = run_kyb(team.env, "sync", store=store)
    assert (res.returncode, res.stdout) == (4, ""), (res.returncode, res.stderr)
    assert "full" in res.stderr and str(store) in res.stderr and "free" in res.stderr, res.stderr
    assert "cannot reach" not in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert subprocess.run(["git", "-C", str(store), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout == head
    assert not [p for p in (store / ".git" / "kyb").iterdir() if p.name.startswith("quarantine-")]


def test_remote_url_on_read_only_store(team):
    import shlex

    from support.hostile import kyb_bound

    config = (team.store / ".git" / "config").read_text()
    target = team.store / ".git"
    target.chmod(0o555)
    try:
        res = kyb_bound(team.env, team.store, "remote", "/elsewhere/remote.git")
        assert (res.returncode, res.stdout) == (4, ""), (res.returncode, res.stderr)
        assert f"chmod u+w {shlex.quote(str(target))}" in res.stderr and "Errno" not in res.stderr, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    finally:
        target.chmod(0o755)
    assert (team.store / ".git" / "config").read_text() == config
    ok = kyb_bound(team.env, team.store, "remote", "/elsewhere/remote.git")
    assert ok.returncode == 0, ok.stderr
