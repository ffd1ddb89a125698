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

DOC = Path(__file__).resolve().parents[1] / "README.md"


def quick_start_commands() -> list[str]:
    text = DOC.read_text()
    block = re.search(r"## Quick start\n.*?```sh\n(.*?)```", text, re.S).group(1)
    return block.splitlines()


def test_quick_start_first_command_installs():
    assert quick_start_commands()[0] == "python3 -m pip install ."


def test_quick_start_works_verbatim_from_a_fresh_install(tmp_path):
    """Runs every line after the install (the installed `kyb` is this test's) in bash, in a fresh home."""
    script = "\n".join(quick_start_commands()[1:])
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KYB_")}
    env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"),
               XDG_CACHE_HOME=str(home / "cache"),
               PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""))
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [lines[0]["action"], lines[1]["action"]] == ["created", "updated"]
    assert lines[2]["body"].endswith("port 9090.") and lines[2]["is_head"] is True
    assert [v["change"] for v in lines[3]["versions"]] == ["modified", "added"]
    assert lines[4]["body"].endswith("port 8080.") and lines[4]["sha"] == lines[0]["sha"]
    assert (home / "data" / "kyb" / "store" / "knowledge" / "checkout-write-path.md").exists()


def test_exit_code_table_matches_the_code():
    table = dict(re.findall(r"^\| (\d) \| (.+?) \|$", DOC.read_text(), re.M))
    assert sorted(int(c) for c in table) == sorted(EXIT_CODES)
    for code, meaning in EXIT_CODES.items():
        assert meaning.split(" (")[0].split()[0] in table[str(code)]


def test_environment_variables_are_documented():
    text = DOC.read_text()
    for var in ("KYB_STORE", "KYB_AGENT", "KYB_SESSION", "KYB_WORKSPACE", "KYB_LOCK_TIMEOUT", "KYB_CONFIG",
                "NO_COLOR"):
        assert f"| `{var}` |" in text


def test_ci_runs_exactly_the_readme_test_command():
    """`.ci/run` installs from the project's own files and runs the one test command README names."""
    root = DOC.parent
    dev = DOC.read_text().split("## Development", 1)[1]
    command = re.search(r"The test command.*?```sh\n(.*?)\n```", dev, re.S).group(1).strip()
    ci = (root / ".ci" / "run").read_text()
    assert command in ci.splitlines()
    assert 'pip install --quiet -e ".[test]"' in ci and "python3 -m venv" in ci
