"""`kyb agents install/uninstall`: a marked, idempotent section and a skill, removed byte for byte."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("CODEX_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(home)
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
    assert (project / ".agents" / "skills" / "kyb" / "SKILL.md").is_file()  # where Codex reads skills
    assert not (home / ".codex").exists()
    assert cli("agents", "uninstall", "--project", str(project)).code == 0
    assert snapshot(project) == {"AGENTS.md": b"# project rules\n"}


# --- where each agent reads kyb's files, and --mcp / --hook ------------------------------------

def test_codex_skill_goes_to_home_agents_skills_where_codex_reads_skills(cli, home):
    """Codex reads user skills from $HOME/.agents/skills, not ~/.codex/skills (its skills docs)."""
    (home / ".codex").mkdir()
    assert cli("agents", "install").code == 0
    skill = home / ".agents" / "skills" / "kyb" / "SKILL.md"
    assert skill.is_file() and not (home / ".codex" / "skills").exists()
    assert str(skill) in (home / ".codex" / "AGENTS.md").read_text()
    assert cli("agents", "uninstall").code == 0
    assert not (home / ".agents").exists()


def test_uninstall_also_removes_a_skill_older_kyb_put_in_codex_skills(cli, home):
    from kyb_cli.core.tools.agents import skill_text

    old = home / ".codex" / "skills" / "kyb" / "SKILL.md"
    old.parent.mkdir(parents=True)
    old.write_text(skill_text())
    assert cli("agents", "uninstall").code == 0
    assert not old.exists()


def all_agents(home: Path) -> None:
    for name in (".claude", ".codex", ".gemini", ".cursor"):
        (home / name).mkdir()


def test_install_mcp_registers_kyb_mcp_in_each_agents_own_file(cli, home):
    all_agents(home)
    res = cli("agents", "install", "--mcp")
    assert res.code == 0, res.stderr
    assert json.loads((home / ".claude.json").read_text())["mcpServers"]["kyb"] == \
        {"type": "stdio", "command": "kyb", "args": ["mcp"]}
    assert tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]["kyb"] == \
        {"command": "kyb", "args": ["mcp"]}
    assert json.loads((home / ".gemini" / "settings.json").read_text())["mcpServers"]["kyb"] == \
        {"command": "kyb", "args": ["mcp"]}
    assert json.loads((home / ".cursor" / "mcp.json").read_text())["mcpServers"]["kyb"] == \
        {"command": "kyb", "args": ["mcp"]}
    assert not (home / ".claude" / "settings.json").exists()  # no hook without --hook


def _session_start(path: Path) -> list[dict]:
    return json.loads(path.read_text())["hooks"]["SessionStart"]


def test_install_hook_adds_the_session_start_hook_where_the_agent_has_one(cli, home):
    all_agents(home)
    res = cli("agents", "install", "--hook")
    assert res.code == 0, res.stderr
    for path in (home / ".claude" / "settings.json", home / ".codex" / "hooks.json", home / ".gemini" / "settings.json"):
        handlers = [h for group in _session_start(path) for h in group["hooks"]]
        assert [h["command"] for h in handlers] == ["kyb context --hook-json"], path
        assert handlers[0]["type"] == "command"
    assert _session_start(home / ".claude" / "settings.json")[0]["matcher"] == "startup|resume|clear|compact"
    assert [h["timeout"] for g in _session_start(home / ".gemini" / "settings.json") for h in g["hooks"]] == [10000]
    assert any(n.startswith("cursor: no SessionStart hook") for n in res.json["notes"])
    assert not (home / ".cursor" / "hooks.json").exists()


def test_install_hook_adds_the_prompt_hook_beside_the_session_start_hook(cli, home):
    """Issue 43: `kyb recall --hook-json` on each client's prompt-submit event (Claude Code and Codex
    UserPromptSubmit, Gemini CLI BeforeAgent), in the same file as the SessionStart hook."""
    all_agents(home)
    assert cli("agents", "install", "--hook").code == 0
    for path, event in ((home / ".claude" / "settings.json", "UserPromptSubmit"),
                        (home / ".codex" / "hooks.json", "UserPromptSubmit"),
                        (home / ".gemini" / "settings.json", "BeforeAgent")):
        hooks = json.loads(path.read_text())["hooks"]
        assert [h["command"] for g in hooks[event] for h in g["hooks"]] == ["kyb recall --hook-json"], path
        assert [h["command"] for g in hooks["SessionStart"] for h in g["hooks"]] == ["kyb context --hook-json"]
    claude = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]["UserPromptSubmit"]
    assert claude == [{"hooks": [{"type": "command", "command": "kyb recall --hook-json", "timeout": 5}]}]
    assert [h["timeout"] for g in json.loads((home / ".gemini" / "settings.json").read_text())["hooks"]["BeforeAgent"]
            for h in g["hooks"]] == [5000]  # Gemini CLI counts milliseconds


def test_uninstall_keeps_the_users_own_prompt_hooks_byte_for_byte(cli, home):
    (home / ".claude").mkdir()
    path = home / ".claude" / "settings.json"
    original = ('{\n  "hooks": {\n    "UserPromptSubmit": [\n      {"hooks": [{"type": "command", "command": '
                '"./my-hook.sh"}]}\n    ]\n  },\n  "theme": "dark"\n}\n')
    path.write_text(original)
    assert cli("agents", "install", "--agent", "claude", "--hook").code == 0
    commands = [h["command"] for g in json.loads(path.read_text())["hooks"]["UserPromptSubmit"] for h in g["hooks"]]
    assert commands == ["./my-hook.sh", "kyb recall --hook-json"]
    assert cli("agents", "uninstall", "--agent", "claude").code == 0
    assert path.read_text() == original


def test_install_mcp_and_hook_twice_changes_nothing(cli, home):
    all_agents(home)
    assert cli("agents", "install", "--mcp", "--hook").code == 0
    before = snapshot(home)
    again = cli("agents", "install", "--mcp", "--hook")
    assert again.code == 0 and again.json["changes"] == []
    assert snapshot(home) == before


def test_uninstall_after_mcp_and_hook_on_a_fresh_home_leaves_nothing(cli, home):
    all_agents(home)
    before = snapshot(home)
    assert cli("agents", "install", "--mcp", "--hook").code == 0
    assert cli("agents", "uninstall").code == 0
    assert snapshot(home) == before


USER_JSON = [
    '{\n  "theme": "dark",\n  "mcpServers": {\n    "github": {"command": "gh-mcp", "args": []}\n  }\n}\n',
    '{"theme":"dark"}',
    "{}",
    "{ }\n",
    '{\n\t"hooks": {\n\t\t"SessionStart": [\n\t\t\t{"hooks": [{"type": "command", "command": "echo hi"}]}\n\t\t]\n\t}\n}\n',
    '{\r\n  "numStartups": 3,\r\n  "projects": {"/x": {"mcpServers": {}}}\r\n}\r\n',
    '{\n  // my settings\n  "mcpServers": {},\n  "hooks": {"SessionStart": []} /* kept */\n}\n',
    '{\n  "hooks": {\n    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "mine"}]}],\n'
    '    "BeforeAgent": []\n  }\n}\n',
    '{\n  "unicode": "ünïcødé ✓",\n  "nested": {"a": [1, 2, {"b": null}]}\n}',
]


@pytest.mark.parametrize("original", USER_JSON)
def test_uninstall_restores_existing_json_config_byte_for_byte(cli, home, original):
    all_agents(home)
    files = [home / ".claude.json", home / ".claude" / "settings.json", home / ".codex" / "hooks.json",
             home / ".gemini" / "settings.json", home / ".cursor" / "mcp.json"]
    for path in files:
        path.write_bytes(original.encode())
    before = snapshot(home)
    res = cli("agents", "install", "--mcp", "--hook")
    assert res.code == 0
    assert not [n for n in res.json["notes"] if "not edited" in n or "already" in n], res.json["notes"]
    for path in files:
        text = path.read_text()
        if "//" not in original:
            json.loads(text)  # still JSON
        assert "kyb" in text, path
        assert original.replace("\r\n", "\n").split("\n")[0][:1] == text[:1]
    assert cli("agents", "uninstall").code == 0
    assert snapshot(home) == before


@pytest.mark.parametrize("original", [
    'model = "o3"\n\n[mcp_servers.github]\ncommand = "gh-mcp"\n',
    'model = "o3"',
    "",
    "# only a comment\r\n",
])
def test_uninstall_restores_existing_codex_config_toml_byte_for_byte(cli, home, original):
    (home / ".codex").mkdir()
    config = home / ".codex" / "config.toml"
    config.write_bytes(original.encode())
    before = snapshot(home)
    assert cli("agents", "install", "--agent", "codex", "--mcp").code == 0
    data = tomllib.loads(config.read_text())
    assert data["mcp_servers"]["kyb"] == {"command": "kyb", "args": ["mcp"]}
    assert "# kyb:begin" in config.read_text() and "# kyb:end" in config.read_text()
    assert cli("agents", "uninstall", "--agent", "codex").code == 0
    assert snapshot(home) == before


def test_uninstall_keeps_servers_the_user_added_after_install(cli, home):
    (home / ".cursor").mkdir()
    assert cli("agents", "install", "--agent", "cursor", "--mcp").code == 0
    path = home / ".cursor" / "mcp.json"
    data = json.loads(path.read_text())
    data["mcpServers"]["mine"] = {"command": "mine"}
    path.write_text(json.dumps(data, indent=2))
    assert cli("agents", "uninstall", "--agent", "cursor").code == 0
    assert json.loads(path.read_text()) == {"mcpServers": {"mine": {"command": "mine"}}}


def test_a_kyb_server_entry_of_the_users_own_is_left_alone(cli, home):
    (home / ".gemini").mkdir()
    path = home / ".gemini" / "settings.json"
    original = '{"mcpServers": {"kyb": {"command": "/opt/kyb/bin/kyb", "args": ["mcp", "--store", "/s"]}}}\n'
    path.write_text(original)
    res = cli("agents", "install", "--agent", "gemini", "--mcp")
    assert any("mcpServers.kyb is already set to something else" in n for n in res.json["notes"])
    assert path.read_text() == original
    assert cli("agents", "uninstall", "--agent", "gemini").code == 0
    assert path.read_text() == original


def test_a_config_that_is_not_json_is_never_rewritten(cli, home):
    (home / ".cursor").mkdir()
    path = home / ".cursor" / "mcp.json"
    path.write_text("{ this is not json")
    res = cli("agents", "install", "--agent", "cursor", "--mcp")
    assert res.code == 0 and any(str(path) in n and "not edited" in n for n in res.json["notes"])
    assert path.read_text() == "{ this is not json"


def test_project_flag_alone_means_this_directory_and_writes_project_config(cli, home, tmp_path, monkeypatch):
    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    res = cli("agents", "install", "--project", "--agent", "claude", "--agent", "codex", "--agent", "cursor",
              "--agent", "gemini", "--mcp", "--hook")
    assert res.code == 0, res.stderr
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["kyb"]["command"] == "kyb"
    assert _session_start(project / ".claude" / "settings.json")
    assert "kyb" in tomllib.loads((project / ".codex" / "config.toml").read_text())["mcp_servers"]
    assert _session_start(project / ".codex" / "hooks.json")
    assert json.loads((project / ".cursor" / "mcp.json").read_text())["mcpServers"]["kyb"]
    assert json.loads((project / ".gemini" / "settings.json").read_text())["mcpServers"]["kyb"]
    assert (project / ".agents" / "skills" / "kyb" / "SKILL.md").is_file()
    assert not (home / ".claude.json").exists() and not (home / ".codex").exists()
    assert cli("agents", "uninstall", "--project").code == 0
    assert snapshot(project) == {}


def test_hook_the_agents_run_prints_valid_session_start_json(kyb, home, tmp_path):
    """The command written into the hook files answers what a SessionStart hook must print."""
    from kyb_cli.core.tools.wiring import HOOK_COMMAND

    res = kyb(*HOOK_COMMAND.split()[1:])
    assert res.code == 0
    out = json.loads(res.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert isinstance(out["hookSpecificOutput"]["additionalContext"], str)


def test_prompt_hook_the_agents_run_prints_a_hook_answer_or_nothing(kyb, home):
    """The command written into the hook files takes the client's JSON and always exits 0."""
    from kyb_cli.core.tools.wiring import PROMPT_HOOK_COMMAND

    assert kyb("add", "--key", "checkout-port", "--title", "Checkout port",
               "--body", "Checkout listens on port 9443.").code == 0
    assert kyb("query", "warm").code == 0
    given = {"prompt": "checkout port 9443", "session_id": "a", "hook_event_name": "UserPromptSubmit", "cwd": "."}
    res = kyb(*PROMPT_HOOK_COMMAND.split()[1:], input=json.dumps(given))
    assert res.code == 0
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit" and "checkout-port" in out["additionalContext"]
    res = kyb(*PROMPT_HOOK_COMMAND.split()[1:], input="")
    assert res.code == 0 and res.stdout == ""


# --- the JSON editing itself (tools/jsonedit.py) ------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.text(max_size=8))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                         st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                       max_leaves=8)


@settings(max_examples=150, deadline=None)
@given(doc=st.dictionaries(st.sampled_from(["mcpServers", "hooks", "theme", "x", "kyb"]), _values, max_size=4),
       indent=st.sampled_from([None, 2, 4, "\t"]))
def test_any_users_json_comes_back_byte_for_byte_after_add_and_remove(doc, indent):
    from kyb_cli.core.tools import jsonedit

    original = json.dumps(doc, indent=indent, ensure_ascii=False)
    server = {"command": "kyb", "args": ["mcp"]}
    hook = {"hooks": [{"type": "command", "command": "kyb context --hook-json"}]}
    for path, key, value in ((["mcpServers"], "kyb", server), (["hooks", "SessionStart"], None, hook)):
        try:
            added, status = jsonedit.add(original, path, value, key=key)
        except jsonedit.JsonEditError:
            continue  # a path element that is not an object/array: kyb leaves the file alone
        if status != "added":
            continue
        data = json.loads(added)
        node = data
        for name in path:
            node = node[name]
        assert (node[key] if key else node[-1]) == value
        assert jsonedit.remove(added, path, key=key, ours=lambda v, value=value: v == value) == original


def test_trailing_commas_and_broken_json_are_refused_not_rewritten():
    from kyb_cli.core.tools import jsonedit

    for text in ('{"a": 1,}', '{"a": ', "[1, 2]", '{"a" 1}'):
        with pytest.raises(jsonedit.JsonEditError):
            jsonedit.add(text, ["mcpServers"], {"command": "kyb"}, key="kyb")
