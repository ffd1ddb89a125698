"""The release story and the set-up a new user follows: the version, the changelog, the tag that
pre-commit's `rev:` names, `./dev`, and install commands that exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kyb_cli import __version__

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
CHANGELOG = (ROOT / "CHANGELOG.md").read_text()
GUIDE = sorted((ROOT / "docs" / "guide").glob("*.md"))  # README's long sections (issue 42)


def latest_changelog_version() -> str:
    """The newest released entry (`## [X.Y.Z] - YYYY-MM-DD`), below `## [Unreleased]`."""
    match = re.search(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", CHANGELOG, re.M)
    assert match, "CHANGELOG.md has no released entry"
    return match.group(1)


def test_kyb_version_equals_the_latest_changelog_entry():
    out = subprocess.run([sys.executable, "-m", "kyb_cli", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"kyb, version {latest_changelog_version()}"
    assert __version__ == latest_changelog_version()


def test_changelog_keeps_a_changelog_shape():
    assert CHANGELOG.startswith("# Changelog\n") and "## [Unreleased]" in CHANGELOG
    assert CHANGELOG.index("## [Unreleased]") < CHANGELOG.index(f"## [{__version__}]")


def test_pre_commit_rev_in_readme_is_the_release_tag():
    """`rev:` names the tag `v<version>` that releases carry (a tag that exists once released)."""
    revs = re.findall(r"^\s+rev: (\S+)", (ROOT / "docs" / "guide" / "agents.md").read_text(), re.M)
    assert revs == [f"v{__version__}"], revs


def test_pre_commit_hook_manifest_is_valid():
    clientlib = pytest.importorskip("pre_commit.clientlib")
    (hook,) = clientlib.load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    assert hook["id"] == "kyb-check" and hook["language"] == "python" and hook["entry"] == "kyb check"


def test_no_install_command_names_a_package_that_is_not_published():
    """kyb is installed from its repository; `pip install kyb-cli` would fetch nothing (or a stranger's)."""
    texts = {p: p.read_text() for p in [ROOT / "README.md", *GUIDE, *sorted((ROOT / "kyb_cli").rglob("*.py")),
                                        ROOT / "zipapp.py", ROOT / "dev"]}
    for path, text in texts.items():
        assert not re.search(r"(pip|pipx|uv tool) install\s+['\"]?kyb-cli", text), path
        assert "kyb-cli[" not in text, path


def test_quick_start_installs_from_this_repository_with_the_mcp_extra():
    block = re.search(r"## Quick start\n.*?```sh\n(.*?)```", README, re.S).group(1)
    assert block.splitlines()[0].startswith("pipx install '.[mcp]'")


def test_dev_script_sets_up_a_venv_with_the_mcp_and_test_extras():
    dev = (ROOT / "dev").read_text()
    assert os.access(ROOT / "dev", os.X_OK)
    assert 'python3 -m venv "$VENV"' in dev and 'pip install --quiet -e ".[mcp,test]"' in dev
    assert '-m tests.lanes "$@"' in dev and '-m tests.lanes "$lane" "$@"' in dev
    dev_section = README.split("## Development", 1)[1]
    assert "./dev setup" in dev_section and "./dev test" in dev_section


def test_dev_test_without_setup_says_what_to_run(tmp_path):
    env = dict(os.environ, KYB_VENV=str(tmp_path / "no-venv"))
    res = subprocess.run([str(ROOT / "dev"), "test"], capture_output=True, text=True, env=env)
    assert res.returncode == 2 and "run ./dev setup first" in res.stderr


def test_dev_rejects_an_unknown_command():
    res = subprocess.run([str(ROOT / "dev"), "bogus"], capture_output=True, text=True)
    assert res.returncode == 2 and "unknown command" in res.stderr


def test_slow_and_devset_markers_are_registered_and_the_lanes_select_by_them():
    from tests.lanes import LANES

    text = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'markers = \[\n\s+"slow: ', text) and '"devset: ' in text and "--strict-markers" in text
    assert LANES["fast"].markers == "not slow and not devset" and LANES["devset"].markers == "devset"
    assert "python -m tests.lanes fast" in README
