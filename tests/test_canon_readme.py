"""The README's quick start works verbatim on a fresh machine (its own data dir, no store yet),
and the documented contract matches the code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from kyb_cli.core.errors import EXIT_CODES
from kyb_cli.core.records.keys import path_of_key

DOC = Path(__file__).resolve().parents[1] / "README.md"


def quick_start_commands() -> list[str]:
    text = DOC.read_text()
    block = re.search(r"## Quick start\n.*?```sh\n(.*?)```", text, re.S).group(1)
    return block.splitlines()


def test_quick_start_first_command_installs_from_this_repository_with_the_mcp_extra():
    """pipx (or `./dev setup`) works on Debian's externally-managed Python, where `pip install .` is refused."""
    first = quick_start_commands()[0]
    assert first.split("#")[0].strip() == "pipx install '.[mcp]'"
    assert 'mcp = ["mcp' in (DOC.parent / "pyproject.toml").read_text()


def test_quick_start_works_verbatim_from_a_fresh_install(tmp_path):
    """Runs every line after the install (the installed `kyb` is this test's) in bash, in a fresh home
    where Claude Code and Codex are installed (their home directories exist), and checks that the
    last line wired both: MCP server and SessionStart hook in their own files."""
    import tomllib

    script = "\n".join(quick_start_commands()[1:])
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KYB_", "GIT_"))}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"),
               XDG_CACHE_HOME=str(home / "cache"), GIT_CONFIG_NOSYSTEM="1",
               PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [lines[0]["action"], lines[1]["action"]] == ["created", "updated"]
    assert lines[2]["body"].endswith("port 9090.") and lines[2]["is_head"] is True
    assert [v["change"] for v in lines[3]["versions"]] == ["modified", "added"]
    assert lines[4]["body"].endswith("port 8080.") and lines[4]["sha"] == lines[0]["sha"]
    assert (home / "data" / "kyb" / "store" / path_of_key("checkout-write-path")).exists()
    wired = lines[5]
    assert wired["agents"] == ["claude", "codex"] and not wired["dry_run"]
    assert json.loads((home / ".claude.json").read_text())["mcpServers"]["kyb"]["args"] == ["mcp"]
    assert tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["kyb"]["command"] == "kyb"
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    (command,) = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert (home / ".codex" / "hooks.json").exists()
    # the hook Claude Code will run at the next session start: the digest names the fact just written
    hook = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)
    assert hook.returncode == 0, hook.stderr
    context = json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "checkout-write-path" in context


def test_exit_code_table_matches_the_code():
    table = dict(re.findall(r"^\| (\d) \| (.+?) \|$", DOC.read_text(), re.M))
    assert sorted(int(c) for c in table) == sorted(EXIT_CODES)
    for code, meaning in EXIT_CODES.items():
        assert meaning.split(" (")[0].split()[0] in table[str(code)]


def test_environment_variables_are_documented():
    text = (DOC.parent / "docs" / "guide" / "reference.md").read_text()  # the guide's reference page
    for var in ("KYB_STORE", "KYB_AGENT", "KYB_SESSION", "KYB_WORKSPACE", "KYB_LOCK_TIMEOUT", "KYB_CONFIG",
                "NO_COLOR", "KYB_OUTPUT"):
        assert f"| `{var}` |" in text


def test_ci_runs_exactly_the_readme_test_command():
    """`.ci/run` installs from the project's own files and runs the one test command README names."""
    root = DOC.parent
    dev = DOC.read_text().split("## Development", 1)[1]
    command = re.search(r"The test command.*?```sh\n(.*?)\n```", dev, re.S).group(1).strip()
    ci = (root / ".ci" / "run").read_text()
    assert command in ci.splitlines()
    assert 'pip install --quiet -e ".[test]"' in ci and "python3 -m venv" in ci
