"""The guide (issue 42): README fits on two screens and points into docs/guide/, and the guide builds
as a site with `mkdocs build --strict` offline — a broken link or anchor, or a page left out of the
nav, fails the build and this test. Skipped when mkdocs or its theme is not installed (the `test`
extra brings both)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "guide"


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(root / "mkdocs.yml"), "-d", str(site)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_readme_fits_in_8_kb_and_links_every_guide_page():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) <= 8 * 1024, f"README is {len(text.encode()):,} bytes; move text into docs/guide/"
    pages = sorted(p.name for p in GUIDE.glob("*.md"))
    linked = set(re.findall(r"\]\(docs/guide/([\w-]+\.md)", text))
    assert set(pages) - {"index.md"} <= linked, set(pages) - linked


def test_readme_says_what_shows_the_manual_after_a_pipx_install():
    """Debian's pipx 1.1 links no man pages, so `man kyb` finds none there: README names `kyb man`."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert "`kyb man`" in text and "No manual entry" in text


def test_the_guide_builds_strictly_offline(tmp_path):
    res = build(ROOT, tmp_path / "site")
    assert res.returncode == 0, res.stdout + res.stderr
    for page in ["guide/start", "guide/reference", "API", "SEARCH", "ARCHITECTURE", "BENCHMARKS", "RULES"]:
        assert (tmp_path / "site" / page / "index.html").exists(), page
    html = (tmp_path / "site" / "guide" / "start" / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis" not in html and "fonts.gstatic" not in html  # theme.font: false


def test_a_broken_link_in_the_guide_fails_the_build(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", copy / "docs")
    shutil.copy(ROOT / "mkdocs.yml", copy / "mkdocs.yml")
    start = copy / "docs" / "guide" / "start.md"
    start.write_text(start.read_text(encoding="utf-8") + "\nSee [nothing](no-such-page.md).\n", encoding="utf-8")
    res = build(copy, tmp_path / "site")
    assert res.returncode != 0 and "no-such-page.md" in res.stdout + res.stderr


def test_committed_command_reference_matches_the_operation_table():
    from kyb_cli.devtools import gen_reference

    assert not gen_reference.stale(ROOT), f"docs/guide/commands.md is stale; regenerate with `{gen_reference.REGENERATE}`"
    text = gen_reference.generate()
    from kyb_cli.api.operations import OPERATIONS

    for op in OPERATIONS.values():
        assert (f"## kyb {op.name}\n" if "cli" in op.doors else f"## {op.tool} (MCP only)\n") in text
        for field in op.fields_of("cli" if "cli" in op.doors else "mcp"):
            assert f"`{field.flag if 'cli' in op.doors else field.name}`" in text, (op.name, field.name)


def test_the_guides_quick_start_is_readmes():
    """Start repeats README's Quick start with each answer; the commands are one text (README's is run)."""
    block = re.compile(r"## Quick start\n.*?```sh\n(.*?)```", re.S)
    assert block.search((GUIDE / "start.md").read_text()).group(1) == block.search(README.read_text()).group(1)
