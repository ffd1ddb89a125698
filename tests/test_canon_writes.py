"""Writes are commits (rules "commits", "no-op write", "created vs updated"): one commit per write, only that file, attributed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from kyb_cli.core.records.keys import path_of_key


def git(store, *args: str) -> str:
    return subprocess.run(["git", "-C", str(store), *args], check=True, capture_output=True, text=True).stdout


def head(store) -> str:
    return git(store, "rev-parse", "HEAD").strip()


def count(store) -> int:
    return int(git(store, "rev-list", "--count", "HEAD"))


def test_write_is_one_commit_touching_only_its_file(cli, store_path):
    cli("add", "--key", "other", "--title", "O", input="o")
    before = count(store_path)
    res = cli("add", "--key", "k", "--title", "T", "--tags", "a,b", input="body").json
    assert count(store_path) == before + 1
    assert res["sha"] == head(store_path) and len(res["sha"]) == 40
    assert git(store_path, "show", "--name-status", "--format=", "HEAD").split() == ["A", path_of_key("k")]
    cli("add", "--key", "k", "--title", "T2", input="body")
    assert git(store_path, "show", "--name-status", "--format=", "HEAD").split() == ["M", path_of_key("k")]
    assert git(store_path, "status", "--porcelain") == ""


def test_reply_shape_created_then_updated(cli):
    first = cli("add", "--key", "k", "--title", "T", input="v1").json
    # a create hints at duplicates, an update at retired wording elsewhere (tests/test_trust_record.py)
    assert list(first) == ["action", "changed", "key", "sha", "similar"]
    assert (first["action"], first["changed"], first["key"]) == ("created", True, "k")
    second = cli("add", "--key", "k", "--title", "T", input="v2").json
    assert list(second) == ["action", "changed", "key", "sha", "retired_elsewhere"]
    assert (second["action"], second["changed"]) == ("updated", True)
    assert second["sha"] != first["sha"]


def test_identical_write_makes_no_commit(cli, store_path):
    cli("add", "--key", "k", "--title", "T", "--tags", "x", input="same body\n")
    before = head(store_path)
    res = cli("add", "--key", "k", "--title", "T", "--tags", "x", input="same body\n\n  ")
    assert res.json == {"changed": False, "key": "k"}
    assert head(store_path) == before


@pytest.mark.parametrize("change", [("--title", "T2"), ("--tags", "y"), ("--refs", "r")])
def test_metadata_change_is_a_change(cli, change):
    cli("add", "--key", "k", "--title", "T", "--tags", "x", input="b")
    args = {"--title": "T", "--tags": "x", change[0]: change[1]}
    flat = [item for pair in args.items() for item in pair]
    assert cli("add", "--key", "k", *flat, input="b").json["action"] == "updated"


def test_readd_after_retract_is_created(cli):
    cli("add", "--key", "k", "--title", "T", input="v1")
    assert cli("rm", "k", "--reason", "wrong").json["action"] == "retracted"
    assert cli("add", "--key", "k", "--title", "T", input="v1").json["action"] == "created"
    changes = [v["change"] for v in cli("history", "k").json["versions"]]
    assert changes == ["added", "deleted", "added"]


def test_commit_message_and_trailers(kyb, store_path):
    env = {"KYB_AGENT": "claude-code", "KYB_SESSION": "s-123", "KYB_WORKSPACE": "/work/proj"}
    kyb("add", "--key", "k", "--title", "T", input="v1", env=env)
    assert git(store_path, "log", "-1", "--format=%B") == (
        "kyb: add k\n\nKyb-Action: add\nKyb-Agent: claude-code\nKyb-Session: s-123\n"
        "Kyb-Workspace: /work/proj\nKyb-Transport: cli\n\n"
    )
    kyb("add", "--key", "k", "--title", "T", input="v2", env=env)
    assert git(store_path, "log", "-1", "--format=%s") == "kyb: update k\n"
    kyb("rm", "k", "--reason", "the port moved\nagain", env=env)
    message = git(store_path, "log", "-1", "--format=%B")
    assert message.startswith("kyb: retract k\n\nthe port moved\nagain\n\n")
    # Git itself reads them as trailers
    fmt = "%(trailers:key=Kyb-Reason,valueonly)|%(trailers:key=Kyb-Agent,valueonly)|%(trailers:key=Kyb-Transport,valueonly)"
    assert git(store_path, "log", "-1", f"--format={fmt}").replace("\n", "") == "the port moved again|claude-code|cli"


def _clean_git_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(tmp_path / "home"), GIT_CONFIG_NOSYSTEM="1", XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def test_author_from_git_config(kyb, store_path, tmp_path):
    env = _clean_git_env(tmp_path)
    subprocess.run(["git", "-C", str(store_path), "config", "user.name", "Ada Lovelace"], check=True)
    subprocess.run(["git", "-C", str(store_path), "config", "user.email", "ada@example.org"], check=True)
    kyb("add", "--key", "k", "--title", "T", input="b", env=env)
    assert git(store_path, "log", "-1", "--format=%an <%ae>|%cn <%ce>") == \
        "Ada Lovelace <ada@example.org>|Ada Lovelace <ada@example.org>\n"


def test_author_defaults_to_kyb_without_git_config(tmp_path):
    """Processes: libgit2 fixes its config search path at first use, so only a new process sees no git config."""
    env = _clean_git_env(tmp_path)
    env["KYB_STORE"] = str(tmp_path / "s")
    subprocess.run([sys.executable, "-m", "kyb_cli", "init"], env=env, check=True, capture_output=True)
    proc = subprocess.run([sys.executable, "-m", "kyb_cli", "add", "--key", "k", "--title", "T"],
                          input="b", env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert git(tmp_path / "s", "log", "-1", "--format=%an <%ae>") == "kyb <kyb@localhost>\n"


def test_dirty_working_tree_with_other_edits_is_left_alone(cli, store_path):
    cli("add", "--key", "a", "--title", "A", input="a")
    (store_path / path_of_key("a")).parent.mkdir(parents=True, exist_ok=True)
    (store_path / path_of_key("a")).write_text("hand edit, not committed\n")
    (store_path / "notes.txt").write_text("untracked\n")
    (store_path / "staged.txt").write_text("staged\n")
    git(store_path, "add", "staged.txt")
    assert cli("add", "--key", "b", "--title", "B", input="b").code == 0
    assert git(store_path, "show", "--name-only", "--format=", "HEAD").split() == [path_of_key("b")]
    assert (store_path / path_of_key("a")).read_text() == "hand edit, not committed\n"
    status = sorted(git(store_path, "status", "--porcelain").splitlines())
    assert status == [f" M {path_of_key('a')}", "?? notes.txt", "A  staged.txt"]


def test_hand_edited_file_is_refused_exit_3_and_nothing_written(cli, store_path):
    cli("add", "--key", "k", "--title", "T", input="v1")
    before = head(store_path)
    path = store_path / path_of_key("k")
    path.write_text(path.read_text() + "\nmy uncommitted note\n")
    res = cli("add", "--key", "k", "--title", "T", input="v2")
    assert (res.code, res.stdout) == (3, "")
    assert f"{path_of_key('k')} has uncommitted changes" in res.stderr and "will not overwrite" in res.stderr
    assert head(store_path) == before
    assert path.read_text().endswith("my uncommitted note\n")
    res = cli("rm", "k", "--reason", "x")
    assert (res.code, res.stdout) == (3, "")
    assert path.exists() and head(store_path) == before


def test_untracked_file_at_a_new_keys_path_is_refused(cli, store_path):
    (store_path / "knowledge").mkdir()
    (store_path / path_of_key("k")).parent.mkdir(parents=True, exist_ok=True)
    (store_path / path_of_key("k")).write_text("a person's draft\n")
    res = cli("add", "--key", "k", "--title", "T", input="v1")
    assert res.code == 3
    assert (store_path / path_of_key("k")).read_text() == "a person's draft\n"


def test_retract_removes_the_file_and_records_the_reason(cli, store_path):
    cli("add", "--key", "k", "--title", "T", input="v1")
    res = cli("rm", "k", "--reason", "this was wrong").json
    assert (res["action"], res["changed"]) == ("retracted", True)
    assert not (store_path / path_of_key("k")).exists()
    assert git(store_path, "show", "--name-status", "--format=", "HEAD").split() == ["D", path_of_key("k")]
    assert git(store_path, "status", "--porcelain") == ""


def test_retract_needs_a_reason(cli):
    cli("add", "--key", "k", "--title", "T", input="v1")
    res = cli("rm", "k")
    assert (res.code, res.stdout) == (2, "")
    res = cli("rm", "k", "--reason", "   ")
    assert (res.code, res.stdout) == (3, "")
    assert "retracting needs a reason" in res.stderr


@pytest.mark.parametrize("setup,key,code,fragment", [
    (False, "nope", 1, "no record 'nope'"),
    (True, "k", 1, "'k' is already retracted"),
    (False, "inc-2026-x", 3, "finished work is closed with `kyb resolve`"),
    (False, "task-x", 3, "finished work is closed with `kyb done`"),
])
def test_retract_errors(cli, setup, key, code, fragment):
    if setup:
        cli("add", "--key", "k", "--title", "T", input="v1")
        cli("rm", "k", "--reason", "wrong")
    res = cli("rm", key, "--reason", "x")
    assert (res.code, res.stdout) == (code, "")
    assert fragment in res.stderr


def test_writes_keep_fsck_and_status_clean(cli, store_path):
    for i in range(5):
        cli("add", "--key", f"k{i}", "--title", "T", input=f"v{i}")
    cli("rm", "k0", "--reason", "wrong")
    subprocess.run(["git", "-C", str(store_path), "fsck", "--strict"], check=True, capture_output=True)
    assert git(store_path, "status", "--porcelain") == ""
    assert git(store_path, "diff", "--cached", "--name-only") == ""


def test_staged_hand_edit_is_refused_too(cli, store_path):
    cli("add", "--key", "k", "--title", "T", input="v1")
    path = store_path / path_of_key("k")
    original = path.read_text()
    path.write_text(original + "\nstaged note\n")
    git(store_path, "add", path_of_key("k"))
    path.write_text(original)  # working file back as committed, but the index still holds the edit
    res = cli("add", "--key", "k", "--title", "T", input="v2")
    assert (res.code, res.stdout) == (3, "")
    assert git(store_path, "diff", "--cached", "--name-only").split() == [path_of_key("k")]
