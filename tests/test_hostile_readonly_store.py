"""Issue 24, a read-only store: a write when `.git/kyb`, `knowledge/`, `.git/objects` (or `.git`
itself, or `.git/refs/heads`) cannot be written by this user is a clear store error (exit 4) that
names the directory and a fix that works, with empty stdout and the canon unchanged; reads keep
answering. Subprocesses that the file modes bind (support/hostile.py: root drops the capabilities
that bypass them, or the test is skipped)."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from support.hostile import kyb_bound
from test_sync_hostile import team, team_template  # noqa: F401  (the fixture: a victim store, a bare remote, a peer)
from kyb_cli.core.records.keys import path_of_key

READ_ONLY = [".git/kyb", "knowledge", ".git/objects", ".git", ".git/refs/heads", "(root, tasks/ not made yet)"]


def _state(store: Path) -> tuple[str, str, list[str]]:
    """HEAD, `git status` and the journal files: what a refused write must leave as it was."""
    head = subprocess.run(["git", "-C", str(store), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    status = subprocess.run(["git", "-C", str(store), "status", "--porcelain", "--untracked-files=all"],
                            capture_output=True, text=True).stdout
    return head, status, sorted(p.name for p in (store / ".git" / "kyb").glob("pending*"))


@pytest.fixture
def seeded(store, tmp_path):
    from kyb_cli.api.records import add_knowledge
    from kyb_cli.core.canon.attribution import detect

    home = tmp_path / "home"
    home.mkdir()
    who = detect(environ={"KYB_AGENT": "a", "KYB_SESSION": "s", "KYB_WORKSPACE": "w"})
    assert add_knowledge(store, key="port", title="Port", body="the port is 8080", tags=[], refs=[],
                         attribution=who).changed
    return home, Path(store.path)


@pytest.mark.parametrize("where", READ_ONLY)
def test_a_write_to_a_read_only_store_dir_is_refused_naming_the_path_and_a_fix_that_works(seeded, where):
    home, store = seeded
    before = _state(store)
    target = store if where.startswith("(root") else store / where
    target.chmod(0o555)
    try:
        res = kyb_bound(home, store, "add", "--key", "new", "--title", "New", "--body", "b")
        assert res.returncode == 4 and res.stdout == "", (res.returncode, res.stdout, res.stderr)
        said = res.stderr
        assert str(target) in said and f"chmod u+w {shlex.quote(str(target))}" in said, said
        assert "Permission denied" not in said and "Errno" not in said and "internal error" not in said, said
        assert _state(store) == before
        got = kyb_bound(home, store, "get", "port")
        assert got.returncode == 0 and json.loads(got.stdout)["body"] == "the port is 8080", got.stderr
        hits = kyb_bound(home, store, "query", "port")
        assert hits.returncode == 0 and "port" in hits.stdout, hits.stderr
    finally:
        target.chmod(0o755)
    fixed = kyb_bound(home, store, "add", "--key", "new", "--title", "New", "--body", "b")  # after the advice
    assert fixed.returncode == 0 and json.loads(fixed.stdout)["action"] == "created", fixed.stderr


def test_a_store_dir_owned_by_another_user_advises_running_as_its_owner(seeded):
    import os
    import pwd

    home, store = seeded
    if os.geteuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    nobody = pwd.getpwnam("nobody")
    target = store / "knowledge"
    os.chown(target, nobody.pw_uid, nobody.pw_gid)
    try:
        res = kyb_bound(home, store, "add", "--key", "new", "--title", "New", "--body", "b")
    finally:
        os.chown(target, 0, 0)
    assert res.returncode == 4 and res.stdout == "", res.stderr
    assert f"run kyb as {nobody.pw_name}" in res.stderr and str(target) in res.stderr, res.stderr


@pytest.mark.parametrize("where", [".git/kyb", ".git/objects", "knowledge"])
def test_a_sync_into_a_read_only_store_dir_is_refused_before_it_fetches(team, where):  # noqa: F811
    from support.hostile import BLOB, record_text

    team.peer.write({path_of_key("from-peer"): (BLOB, record_text("from-peer", body="the peer's words"))})
    before = _state(team.store)
    target = team.store / where
    target.chmod(0o555)
    try:
        res = kyb_bound(team.env, team.store, "sync")
        assert res.returncode == 4 and res.stdout == "", (res.returncode, res.stdout, res.stderr)
        assert f"chmod u+w {shlex.quote(str(target))}" in res.stderr and "Errno" not in res.stderr, res.stderr
        assert _state(team.store) == before
        assert not list((team.store / ".git" / "kyb").glob("quarantine-*"))
    finally:
        target.chmod(0o755)
    assert kyb_bound(team.env, team.store, "sync").returncode == 0
    assert "the peer's words" in (team.store / path_of_key("from-peer")).read_text()


def test_a_permission_error_reaching_a_door_names_the_path_and_the_fix(tmp_path):
    import errno

    from kyb_cli import api

    locked_dir = tmp_path / "locked"
    locked_dir.mkdir()
    err = api.io_error(PermissionError(errno.EACCES, "Permission denied", str(locked_dir / "f.tmp")))
    assert err.exit_code == 4 and str(locked_dir) in err.message and "fix: " in err.message, err.message
    assert "Errno" not in err.message
    other = api.io_error(OSError(errno.EIO, "Input/output error"))
    assert other.exit_code == 4 and other.message.startswith("I/O error:")
