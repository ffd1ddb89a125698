"""Issue 37, item 6: `kyb agents install/uninstall` on files that are not what kyb left there.

- uninstall deleted the user's own lines after a begin marker with no end marker (with the marker and
  one line it deleted CLAUDE.md), and install appended a second section: now only one complete
  begin..end section is kyb's; lone or doubled markers are refused (exit 3), nothing changed;
- install hung on a FIFO, and gave an internal error on a non-UTF-8 or deeply nested JSON file: a
  file that is not regular is refused without being opened, a non-UTF-8 one is refused, a nested
  one is left alone with a note; nothing is written in any of these cases;
- install replaced a symlinked CLAUDE.md with a copy: the link's target is written, the link kept."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from kyb_cli.core.tools.agents import BEGIN, END


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(home)
    return home


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() and not p.is_symlink() else None)
            for p in sorted(root.rglob("*"))}


def _refused(res, before, home, *words):
    assert res.code == 3, (res.code, res.stdout, res.stderr)
    assert res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    for w in words:
        assert w in res.stderr
    assert snapshot(home) == before


@pytest.mark.parametrize("verb", ["install", "uninstall"])
def test_a_lone_begin_marker_is_refused_and_the_users_lines_are_kept(cli, home, verb):
    claude = home / ".claude" / "CLAUDE.md"
    claude.write_text(f"# mine\n{BEGIN}\nmy own line\nanother of mine\n")
    before = snapshot(home)
    _refused(cli("agents", verb, "--agent", "claude"), before, home, "begin marker with no end marker")


def test_a_lone_marker_and_one_line_does_not_delete_claude_md(cli, home):
    claude = home / ".claude" / "CLAUDE.md"
    claude.write_text(f"{BEGIN}\nmy line\n")
    before = snapshot(home)
    _refused(cli("agents", "uninstall", "--agent", "claude"), before, home)
    assert claude.read_text() == f"{BEGIN}\nmy line\n"


def test_install_replaces_the_section_in_place_and_never_appends_a_second(cli, home):
    claude = home / ".claude" / "CLAUDE.md"
    claude.write_text(f"# mine\n\n{BEGIN}\nold kyb text\n{END}\n\nmy tail\n")
    res = cli("agents", "install", "--agent", "claude")
    assert res.code == 0, res.stderr
    text = claude.read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1 and "old kyb text" not in text
    assert text.startswith("# mine\n\n" + BEGIN) and text.endswith(f"{END}\n\nmy tail\n")
    claude.write_text(text + f"\n{BEGIN}\nsecond\n{END}\n")  # two sections: which is kyb's?
    before = snapshot(home)
    _refused(cli("agents", "install", "--agent", "claude"), before, home, "more than one kyb section")


def test_install_refuses_a_fifo_without_opening_it(cli, home):
    fifo = home / ".claude" / "CLAUDE.md"
    os.mkfifo(fifo)
    before = snapshot(home)
    out: dict = {}
    t = threading.Thread(target=lambda: out.setdefault("res", cli("agents", "install", "--agent", "claude")),
                         daemon=True)
    t.start()
    t.join(20)
    if t.is_alive():  # unblock the test run: open the FIFO for writing so the reader returns
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
        t.join(5)
        pytest.fail("install opened the FIFO and waited for a writer")
    _refused(out["res"], before, home, "not a regular file")


def test_install_refuses_a_config_file_that_is_not_utf8(cli, home):
    (home / ".claude.json").write_bytes(b'{"name": "caf\xe9"}\n')
    before = snapshot(home)
    _refused(cli("agents", "install", "--agent", "claude", "--mcp"), before, home, "not UTF-8")


def test_install_leaves_a_too_deeply_nested_json_file_alone(cli, home):
    deep = "[" * 100_000 + "]" * 100_000
    (home / ".claude.json").write_text(deep)
    res = cli("agents", "install", "--agent", "claude", "--mcp")
    assert res.code == 0, res.stderr
    assert (home / ".claude.json").read_text() == deep
    assert "nested too deeply" in res.stdout + res.stderr


def test_install_writes_a_symlinked_claude_md_through_its_link(cli, home):
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    (dotfiles / "CLAUDE.md").write_text("# my rules\n")
    link = home / ".claude" / "CLAUDE.md"
    link.symlink_to(dotfiles / "CLAUDE.md")
    res = cli("agents", "install", "--agent", "claude")
    assert res.code == 0, res.stderr
    assert link.is_symlink()
    assert BEGIN in (dotfiles / "CLAUDE.md").read_text()
    res = cli("agents", "uninstall", "--agent", "claude")
    assert res.code == 0, res.stderr
    assert link.is_symlink() and (dotfiles / "CLAUDE.md").read_text() == "# my rules\n"
