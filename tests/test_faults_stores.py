"""Only stores are written. `kyb init` marks the store it creates (and marks an existing repository
when asked to: the deliberate way); a store made by an older kyb, by `kyb sync` or by hand is
recognised by its layout. `--store`, `KYB_STORE` or a `.kyb.toml` pointing at any other Git
repository is refused for writes (exit 4, nothing written) with a message saying how to mark it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from kyb_cli.core.records.keys import path_of_key


def git(path: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


@pytest.fixture
def victim(tmp_path) -> Path:
    """An ordinary project repository: a README and some code, one commit."""
    repo = tmp_path / "victim"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# a project\n")
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("print('hi')\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    return repo


def _refused(res, victim: Path, before: str) -> None:
    assert (res.code, res.stdout) == (4, ""), res.stderr
    line = res.stderr.strip()
    assert line.startswith("kyb: ") and "\n" not in line
    assert "not a kyb store" in line and f"kyb init {victim}" in line
    assert git(victim, "rev-parse", "HEAD").strip() == before
    assert not (victim / "knowledge").exists()
    assert git(victim, "status", "--porcelain") == ""


def test_kyb_toml_pointing_at_a_plain_repository_is_refused_for_writes(kyb, victim, tmp_path):
    project = tmp_path / "cloned-project"
    project.mkdir()
    (project / ".kyb.toml").write_text('store = "../victim"\n')
    before = git(victim, "rev-parse", "HEAD").strip()
    res = kyb("add", "--key", "x", "--title", "T", input="body", cwd=project, env={"KYB_STORE": ""})
    _refused(res, victim, before)


@pytest.mark.parametrize("how", ["--store", "KYB_STORE"])
def test_store_option_or_env_pointing_at_a_plain_repository_is_refused(kyb, victim, how):
    before = git(victim, "rev-parse", "HEAD").strip()
    if how == "--store":
        res = kyb("--store", str(victim), "add", "--key", "x", "--title", "T", input="body")
    else:
        res = kyb("add", "--key", "x", "--title", "T", input="body", env={"KYB_STORE": str(victim)})
    _refused(res, victim, before)


@pytest.mark.parametrize("args", [
    ["rm", "x", "--reason", "r"],
    ["incident", "--key", "inc-x", "--title", "T", "--service", "s", "--severity", "low"],
    ["task", "--key", "task-x", "--title", "T"],
])
def test_every_write_command_refuses_a_plain_repository(kyb, victim, args):
    before = git(victim, "rev-parse", "HEAD").strip()
    res = kyb(*args, input="body", env={"KYB_STORE": str(victim)})
    if res.code == 1:  # rm of a key that does not exist may say so first; still nothing written
        assert git(victim, "rev-parse", "HEAD").strip() == before
        return
    _refused(res, victim, before)


def test_kyb_init_marks_an_existing_repository_deliberately(kyb, victim):
    res = kyb("init", str(victim))
    assert res.code == 0, res.stderr
    res = kyb("add", "--key", "x", "--title", "T", input="body", env={"KYB_STORE": str(victim)})
    assert res.code == 0, res.stderr
    # only the record file was touched
    assert git(victim, "show", "--name-only", "--format=", "HEAD").split() == [path_of_key("x")]


def test_a_store_made_by_an_older_kyb_is_recognised_by_its_layout(kyb, store_path):
    assert kyb("add", "--key", "x", "--title", "T", input="body").code == 0
    subprocess.run(["git", "-C", str(store_path), "config", "--unset", "kyb.store"], capture_output=True)
    assert kyb("add", "--key", "y", "--title", "T", input="body").code == 0


def test_a_store_made_by_hand_is_recognised_by_its_layout(kyb, tmp_path):
    store = tmp_path / "hand"
    store.mkdir()
    git(store, "init", "-q", "-b", "main")
    (store / "knowledge").mkdir()
    (store / path_of_key("a")).parent.mkdir(parents=True, exist_ok=True)
    (store / path_of_key("a")).write_text('+++\nkey = "a"\ntitle = "A"\n+++\n\nby hand\n')
    (store / ".gitignore").write_text("*.tmp\n")
    git(store, "add", "-A")
    git(store, "commit", "-q", "-m", "records by hand")
    res = kyb("add", "--key", "b", "--title", "B", input="body", env={"KYB_STORE": str(store)})
    assert res.code == 0, res.stderr


def test_an_empty_git_repository_is_not_taken_for_a_store(kyb, tmp_path):
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    res = kyb("add", "--key", "x", "--title", "T", input="body", env={"KYB_STORE": str(repo)})
    assert (res.code, res.stdout) == (4, "") and "not a kyb store" in res.stderr
    assert not (repo / "knowledge").exists()


def test_reads_of_a_plain_repository_do_not_write_to_it(kyb, victim):
    before = git(victim, "rev-parse", "HEAD").strip()
    kyb("query", "x", env={"KYB_STORE": str(victim)})
    kyb("get", "x", env={"KYB_STORE": str(victim)})
    assert git(victim, "rev-parse", "HEAD").strip() == before
    assert git(victim, "status", "--porcelain") == ""


def test_the_default_store_is_created_and_marked_on_first_write(kyb, isolated_dirs):
    res = kyb("add", "--key", "x", "--title", "T", input="body", env={"KYB_STORE": ""})
    assert res.code == 0, res.stderr
    default = isolated_dirs / "data" / "kyb" / "store"
    assert git(default, "config", "kyb.store").strip() == "true"


@pytest.mark.parametrize("args", [["remote", "/tmp/nowhere.git"], ["sync"]])
def test_remote_and_sync_refuse_a_plain_repository(kyb, victim, args):
    before_config = (victim / ".git" / "config").read_text()
    res = kyb(*args, env={"KYB_STORE": str(victim)})
    assert (res.code, res.stdout) == (4, "") and "not a kyb store" in res.stderr
    assert (victim / ".git" / "config").read_text() == before_config
