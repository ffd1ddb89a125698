"""`kyb agents install/uninstall`: a marked, idempotent section and a skill, removed byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)
    return home


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


def test_install_writes_only_for_agents_found(cli, home):
    (home / ".claude").mkdir()
    (home / ".gemini").mkdir()
    res = cli("agents", "install")
    assert res.code == 0 and res.json["agents"] == ["claude", "gemini"]
    claude = (home / ".claude" / "CLAUDE.md").read_text()
    assert claude.startswith("<!-- kyb:begin") and claude.rstrip().endswith("<!-- kyb:end -->")
    assert "kyb query" in claude and str(home / ".claude/skills/kyb/SKILL.md") in claude
    assert (home / ".gemini" / "GEMINI.md").is_file()
    assert not (home / ".codex").exists()
    skill = (home / ".claude" / "skills" / "kyb" / "SKILL.md").read_text()
    assert skill.startswith("---\nname: kyb\n")
    for must in ("Query before you add", "same key", "verified", "kyb rm KEY --reason", "`3`: rejected"):
        assert must in skill


def test_install_with_no_agent_found_says_so_and_writes_nothing(cli, home):
    res = cli("agents", "install")
    assert res.code == 0 and res.json["agents"] == [] and res.json["changes"] == []
    assert any(n.startswith("no coding agents found") for n in res.json["notes"])
    assert list(home.iterdir()) == []


def test_install_is_idempotent(cli, home):
    (home / ".codex").mkdir()
    assert cli("agents", "install").code == 0
    before = snapshot(home)
    again = cli("agents", "install")
    assert again.code == 0 and again.json["changes"] == []
    assert snapshot(home) == before
    assert (home / ".codex" / "AGENTS.md").read_text().count("kyb:begin") == 1


def test_dry_run_shows_the_diff_and_writes_nothing(cli, home):
    (home / ".claude").mkdir()
    (home / ".claude" / "CLAUDE.md").write_text("# mine\n")
    before = snapshot(home)
    res = cli("agents", "install", "--dry-run")
    assert res.code == 0 and res.json["dry_run"] is True
    by_path = {c["path"]: c for c in res.json["changes"]}
    change = by_path[str(home / ".claude" / "CLAUDE.md")]
    assert change["action"] == "update" and "+<!-- kyb:begin" in change["diff"] and " # mine" in change["diff"]
    assert snapshot(home) == before


@pytest.mark.parametrize("original", ["# rules\n", "# rules", "", "a\n\n\n", "x\r\nwindows\r\n"])
def test_uninstall_restores_files_byte_for_byte(cli, home, original):
    (home / ".claude").mkdir()
    (home / ".claude" / "CLAUDE.md").write_bytes(original.encode())
    before = snapshot(home)
    assert cli("agents", "install").code == 0
    assert snapshot(home) != before
    res = cli("agents", "uninstall")
    assert res.code == 0
    assert snapshot(home) == before


def test_uninstall_keeps_what_the_user_added_after_install(cli, home):
    (home / ".gemini").mkdir()
    path = home / ".gemini" / "GEMINI.md"
    path.write_text("top\n")
    assert cli("agents", "install").code == 0
    path.write_text(path.read_text() + "\nlater note\n")
    assert cli("agents", "uninstall").code == 0
    assert path.read_text() == "top\n\nlater note\n"


def test_foreign_skill_is_left_alone(cli, home):
    skill = home / ".claude" / "skills" / "kyb" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("someone else's kyb skill\n")
    res = cli("agents", "install")
    assert res.json["notes"] == [f"{skill} exists and is not kyb's; left as it is"]
    assert cli("agents", "uninstall").code == 0
    assert skill.read_text() == "someone else's kyb skill\n"


def test_project_level_writes_the_projects_files(cli, home, tmp_path):
    project = tmp_path / "proj"
    project.mkdir()
    (project / "AGENTS.md").write_text("# project rules\n")
    res = cli("agents", "install", "--project", str(project), "--agent", "codex")
    assert res.code == 0
    assert "kyb:begin" in (project / "AGENTS.md").read_text()
    assert (project / ".codex" / "skills" / "kyb" / "SKILL.md").is_file()
    assert not (home / ".codex").exists()
    assert cli("agents", "uninstall", "--project", str(project)).code == 0
    assert snapshot(project) == {"AGENTS.md": b"# project rules\n"}
