"""Issue 25 item 8: `pipx install` brought no man pages. A wheel carries every page as a data file
under share/man/man1 (where `man` and pipx look), and `kyb man [COMMAND]` shows the installed page."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _install_prefix(tmp_path: Path, monkeypatch) -> Path:
    """A prefix laid out as pip lays out a wheel's data files; the checkout's man/ is hidden."""
    from kyb_cli.cli.commands import man

    pages = tmp_path / "prefix" / "share" / "man" / "man1"
    pages.mkdir(parents=True)
    for page in (ROOT / "man").glob("kyb*.1"):
        (pages / page.name).write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(man, "man_dirs", lambda: [pages])
    return pages


def test_kyb_man_prints_the_installed_page_of_a_command_on_a_pipe(cli, tmp_path, monkeypatch):
    pages = _install_prefix(tmp_path, monkeypatch)
    res = cli("man", "agents", "install")
    assert res.code == 0
    assert res.stdout == (pages / "kyb-agents-install.1").read_text(encoding="utf-8")
    assert res.stdout.splitlines()[1].startswith('.TH "KYB-AGENTS-INSTALL" "1"')
    top = cli("man")
    assert top.code == 0 and '.TH "KYB" "1"' in top.stdout
    where = cli("man", "--path", "query")
    assert where.code == 0 and where.stdout.strip() == str(pages / "kyb-query.1")


def test_kyb_man_of_an_unknown_command_is_a_usage_error_and_a_missing_page_is_not_found(cli, tmp_path,
                                                                                       monkeypatch):
    from kyb_cli.cli.commands import man

    bad = cli("man", "nosuch")
    assert bad.code == 2 and bad.stdout == "" and "No such command 'nosuch'" in bad.stderr
    monkeypatch.setattr(man, "man_dirs", lambda: [tmp_path / "empty"])
    missing = cli("man", "add")
    assert missing.code == 1 and missing.stdout == ""
    assert "kyb-add.1 is not installed" in missing.stderr and "kyb add --help" in missing.stderr


def test_the_default_search_looks_under_the_install_prefix_first():
    from kyb_cli.cli.commands import man

    assert man.man_dirs()[0] == Path(sys.prefix) / "share" / "man" / "man1"


@pytest.mark.slow
def test_a_built_wheel_installs_every_man_page_where_man_and_pipx_look(tmp_path):
    """Built from this checkout (pip wheel, the build backend from the local index); skipped only
    when no build backend can be had at all."""
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
                         capture_output=True, text=True, timeout=600)
    wheels = list(tmp_path.glob("kyb_cli-*.whl"))
    if res.returncode != 0 or not wheels:
        pytest.skip(f"cannot build a wheel here: {res.stderr.strip()[-300:]}")
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    pages = {p.name for p in (ROOT / "man").glob("kyb*.1")}
    assert "kyb-man.1" in pages and len(pages) > 30
    shipped = {n.rsplit("/", 1)[1] for n in names if "/data/share/man/man1/" in n}
    assert shipped == pages
