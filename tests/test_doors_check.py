"""`kyb check`: record files validated as files, one `file:line: message` per problem, exit 3."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kyb_cli.core.records.keys import path_of_key

ROOT = Path(__file__).resolve().parents[1]
# Synthetic (random, correctly shaped, never a real credential); split so scanners of this file stay quiet.
GITHUB_TOKEN = "ghp_" + "Zq7Lk2Vx9Rt4Nw8Pb3Hs6Jd1Fy5Gc0Um" + "Ae4T"


def write(store_path: Path, rel: str, text: str) -> Path:
    path = store_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def record(key: str, body: str = "", extra: str = "") -> str:
    return f'+++\nkey = "{key}"\ntitle = "T {key}"\n{extra}+++\n\n{body}\n'


def problems(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if not line.startswith("kyb: ")]


def test_fanned_out_files_are_checked_and_a_wrong_bucket_is_named(cli, store_path):
    """Records live in their bucket (records/keys.py); the old flat path is still a record; a file in
    another bucket is named with the path its key belongs at."""
    write(store_path, path_of_key("alpha"), record("alpha", "see [[beta]] and [[gamma]]"))
    write(store_path, "knowledge/beta.md", record("beta"))  # the old flat shape
    right = path_of_key("gamma").split("/")[1]
    wrong = f"knowledge/{'00' if right != '00' else '01'}/gamma.md"
    write(store_path, wrong, record("gamma"))
    res = cli("check")
    assert res.code == 3
    assert problems(res.stderr) == [
        f"{store_path / wrong}:2: key 'gamma' belongs in {path_of_key('gamma')}, not {wrong} "
        "(the directory is the first two hex characters of the key's sha1)"]


def test_clean_store_passes_silently(cli, store_path):
    assert cli("add", "--key", "alpha", "--title", "A", "--body", "see [[beta]]").code == 0
    assert cli("add", "--key", "beta", "--title", "B", "--body", "plain").code == 0
    res = cli("check")
    assert (res.code, res.stdout, res.stderr) == (0, "", "")


def test_check_output_never_echoes_any_part_of_a_secret(cli, store_path, monkeypatch):
    """A first-hour defect: the check printed the secret's first characters into CI logs."""
    monkeypatch.chdir(store_path)
    secret_value = "Xk29dLqp7Zm4"
    write(store_path, "knowledge/leak.md", record("leak", f"password: {secret_value}\ntoken {GITHUB_TOKEN}"))
    for args in (("check",), ("check", "--json")):
        res = cli(*args)
        assert res.code == 3
        out = res.stdout + res.stderr
        assert "knowledge/leak.md:7: body looks like a secret (rule github-token)" in out
        for part in (secret_value[:4], GITHUB_TOKEN[4:10], GITHUB_TOKEN[:8]):
            assert part not in out


def test_json_flag_reports_clean_store(cli, store_path):
    assert cli("add", "--key", "alpha", "--title", "A", "--body", "x").code == 0
    res = cli("check", "--json")
    assert res.code == 0 and res.json == {"ok": True, "checked": 1, "problems": []}


def test_each_problem_is_file_line_message_and_exit_3(cli, store_path, monkeypatch):
    monkeypatch.chdir(store_path)
    write(store_path, "knowledge/open.md", '+++\nkey = "open"\n')
    write(store_path, "knowledge/named.md", record("other"))
    write(store_path, "knowledge/leak.md", record("leak", "line one\npassword: hunter2hunter2"))
    write(store_path, "knowledge/bad-toml.md", '+++\nkey = "bad-toml"\ntitle = \n+++\n')
    res = cli("check")
    assert res.code == 3 and res.stdout == ""
    assert sorted(problems(res.stderr)) == sorted([
        "knowledge/open.md:1: unclosed front matter (+++)",
        "knowledge/named.md:2: key 'other' does not match the file name (expected key 'named' in "
        f"knowledge/named.md, or the file {path_of_key('other')})",
        "knowledge/leak.md:7: body looks like a secret (rule password-assignment) — store secrets as pointers in refs",
        "knowledge/bad-toml.md:3: broken TOML in front matter: Invalid value",
    ])
    assert res.stderr.splitlines()[-1] == "kyb: 4 problems in 4 files"


def test_no_paths_inside_a_store_checkout_checks_that_checkout(cli, store_path, monkeypatch, tmp_path):
    """Without --store, KYB_STORE or .kyb.toml, `kyb check` in a store's checkout checks that
    checkout, not the default store (which would pass while this tree is broken)."""
    write(store_path, "knowledge/leak.md", record("leak", "password: hunter2hunter2"))
    monkeypatch.delenv("KYB_STORE")
    monkeypatch.chdir(store_path / "knowledge")
    res = cli("check")
    assert res.code == 3 and res.stdout == ""
    assert [p.split(": ", 1)[0] for p in problems(res.stderr)] == ["leak.md:6"]
    monkeypatch.chdir(tmp_path)  # outside any store: the default store, which does not exist
    res = cli("check")
    assert (res.code, res.stdout) == (4, "") and "no store at" in res.stderr


def test_missing_path_is_no_such_file(cli, store_path):
    res = cli("check", str(store_path / "knowledge" / "ghost.md"))
    assert res.code == 3
    assert problems(res.stderr) == [f"{store_path}/knowledge/ghost.md:1: no such file"]


def test_kind_follows_key_prefix_so_incident_key_in_knowledge_dir_is_wrong(cli, store_path, monkeypatch):
    monkeypatch.chdir(store_path)
    write(store_path, "knowledge/inc-x.md", record("inc-x"))
    res = cli("check")
    assert res.code == 3
    assert problems(res.stderr) == [
        f"knowledge/inc-x.md:2: key 'inc-x' belongs in {path_of_key('inc-x')}, not knowledge/inc-x.md "
        "(the kind follows the key prefix)",
        "knowledge/inc-x.md:1: incident needs a service (what broke)"]


def test_validation_rules_point_at_the_field_line(cli, store_path, monkeypatch):
    monkeypatch.chdir(store_path)
    write(store_path, "tasks/task-a.md", record("task-a", extra='status = "done"\n'))
    res = cli("check")
    assert problems(res.stderr) == [
        "tasks/task-a.md:4: closing a task needs a resolution: what came of it, or why it was dropped"]


def test_broken_link_names_no_record(cli, store_path, monkeypatch):
    monkeypatch.chdir(store_path)
    body = "intro\nsee [[beta]] and [[gone]]\n`[[in-code]]`\n```\n[[fenced]]\n```\n[[beta|label]]"
    write(store_path, "knowledge/alpha.md", record("alpha", body))
    write(store_path, "knowledge/beta.md", record("beta"))
    res = cli("check")
    assert res.code == 3
    assert problems(res.stderr) == ["knowledge/alpha.md:7: broken link [[gone]]: no record 'gone' in this store"]


def test_link_to_archived_or_retracted_record_is_not_broken(cli, store_path):
    assert cli("add", "--key", "old-fact", "--title", "O", "--body", "x").code == 0
    assert cli("rm", "old-fact", "--reason", "was wrong").code == 0
    assert cli("add", "--key", "alpha", "--title", "A", "--body", "was [[old-fact]]").code == 0
    res = cli("check")
    assert (res.code, res.stderr) == (0, "")


def test_duplicate_keys_are_reported(cli, store_path, monkeypatch):
    monkeypatch.chdir(store_path)
    write(store_path, "knowledge/alpha.md", record("alpha"))
    write(store_path, "knowledge/copy.md", record("alpha"))
    res = cli("check", "knowledge/copy.md")
    assert res.code == 3
    assert "knowledge/copy.md:2: duplicate key 'alpha' (also in knowledge/alpha.md)" in problems(res.stderr)


def test_paths_outside_record_dirs_are_not_records(cli, tmp_path):
    stray = tmp_path / "notes.md"
    stray.write_text(record("notes"))
    res = cli("check", str(stray))
    assert res.code == 3
    assert problems(res.stderr) == [
        f"{stray}:1: not a record file: records are knowledge/<h>/<key>.md, incidents/<h>/<key>.md or tasks/<h>/<key>.md"]


def test_directory_argument_checks_its_record_files(cli, store_path):
    write(store_path, "knowledge/alpha.md", record("alpha", "[[missing]]"))
    write(store_path, "README.md", "not a record")
    res = cli("check", str(store_path))
    assert res.code == 3
    assert problems(res.stderr) == [f"{store_path}/knowledge/alpha.md:6: broken link [[missing]]: no record "
                                    "'missing' in this store"]


# -- the hook through a real `git commit` --------------------------------------------------------

def git_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.org", PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
               PYTHONPATH=str(ROOT))
    env.pop("KYB_STORE", None)
    return env


def git(store_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=store_path, env=env, capture_output=True, text=True, timeout=120)


def commit_good_then_bad(store_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    write(store_path, "knowledge/alpha.md", record("alpha", "links [[beta]]"))
    write(store_path, "knowledge/beta.md", record("beta"))
    git(store_path, env, "add", "-A")
    good = git(store_path, env, "commit", "-q", "-m", "good records")
    assert good.returncode == 0, good.stdout + good.stderr
    write(store_path, "knowledge/beta.md", record("beta", "token " + GITHUB_TOKEN))
    git(store_path, env, "add", "knowledge/beta.md")
    return git(store_path, env, "commit", "-q", "-m", "leaks a token")


def test_plain_git_hook_blocks_a_bad_commit(store_path, tmp_path):
    env = git_env(tmp_path)
    hook = store_path / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text(
        "#!/bin/sh\n"
        "git diff --cached --name-only --diff-filter=ACMR -z -- 'knowledge/*.md' 'incidents/*.md' 'tasks/*.md' \\\n"
        f"  | xargs -0 -r '{sys.executable}' -m kyb_cli check\n")
    hook.chmod(0o755)
    bad = commit_good_then_bad(store_path, env)
    assert bad.returncode != 0
    assert "knowledge/beta.md:6: body looks like a secret (rule github-token)" in bad.stderr
    assert git(store_path, env, "log", "-1", "--format=%s").stdout.strip() == "good records"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pre_commit_framework_runs_the_published_hook(store_path, tmp_path):
    pre_commit = pytest.importorskip("pre_commit")
    del pre_commit
    import yaml  # pre-commit's own dependency

    env = git_env(tmp_path)
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    # The published hook installs kyb with pip (language: python); here the hook runs this checkout.
    local = dict(hook, language="system", entry=f"{sys.executable} -m kyb_cli check")
    (store_path / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}))
    git(store_path, env, "add", ".pre-commit-config.yaml")
    assert git(store_path, env, "commit", "-q", "-m", "hook config").returncode == 0
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=store_path, env=env,
                               capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    bad = commit_good_then_bad(store_path, env)
    assert bad.returncode != 0
    out = bad.stdout + bad.stderr
    assert "kyb check (record files)" in out and "Failed" in out
    assert "knowledge/beta.md:6: body looks like a secret (rule github-token)" in out
    assert git(store_path, env, "log", "-1", "--format=%s").stdout.strip() == "good records"


def test_a_record_file_that_is_a_link_or_a_fifo_is_a_problem_never_followed(store_path, monkeypatch, tmp_path):
    """`kyb check` reads the working tree as every kyb read does (canon/nofollow.py): a record file
    that is a symbolic link is reported, not followed (to a file outside the store, or to /dev/zero),
    and a FIFO is reported instead of blocking the hook."""
    monkeypatch.chdir(store_path)
    outside = tmp_path / "outside.md"
    outside.write_text(record("outside", "password: hunter2hunter2"), encoding="utf-8")
    (store_path / "knowledge").mkdir(exist_ok=True)
    os.symlink(outside, store_path / "knowledge" / "outside.md")
    os.symlink("/dev/zero", store_path / "knowledge" / "zero.md")
    os.symlink(tmp_path / "missing.md", store_path / "knowledge" / "dangling.md")
    os.mkfifo(store_path / "knowledge" / "fifo.md")
    write(store_path, "knowledge/plain.md", record("plain", "fine"))
    from kyb_cli.core.tools.check import NOT_PLAIN

    for args in (("check",), ("check", "knowledge/zero.md", "knowledge/fifo.md", "knowledge/outside.md",
                              "knowledge/dangling.md")):
        res = subprocess.run([sys.executable, "-m", "kyb_cli", *args], cwd=store_path, capture_output=True,
                             text=True, timeout=60, env=dict(os.environ, KYB_STORE=str(store_path)))
        assert res.returncode == 3 and res.stdout == ""
        assert sorted(problems(res.stderr)) == sorted(
            f"knowledge/{name}.md:1: {NOT_PLAIN}" for name in ("dangling", "fifo", "outside", "zero"))
        assert "secret" not in res.stderr  # the linked file's content was never read
