"""`kyb agents install --mcp/--hook`: kyb's MCP server, SessionStart hook and prompt hook in each agent's own files.

Paths and formats follow each agent's public documentation (cited next to each path below). Every
edit is targeted (tools/jsonedit.py for JSON, a marked block for TOML), so the rest of the user's
file keeps every byte; uninstall removes exactly what install added, recognised by its content
(the `kyb` server entry, the `kyb context --hook-json` and `kyb recall --hook-json` hooks) or by the TOML
block's markers.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from kyb_cli.core.tools import jsonedit, sections

HOOK_COMMAND = "kyb context --hook-json"
PROMPT_HOOK_COMMAND = "kyb recall --hook-json"  # issue 43: prints nothing unless the store knows for sure
SERVER_NAME = "kyb"
TOML_BEGIN = "# kyb:begin — managed by `kyb agents install --mcp`; `kyb agents uninstall` removes it"
TOML_END = "# kyb:end"

# The SessionStart entries, per agent (each agent's documented shape).
# Claude Code: https://code.claude.com/docs/en/hooks (matcher = the session source; timeout in seconds).
CLAUDE_HOOK = {"matcher": "startup|resume|clear|compact",
               "hooks": [{"type": "command", "command": HOOK_COMMAND, "timeout": 10}]}
# Codex: https://developers.openai.com/codex/hooks (same event/matcher-group/handler levels; no
# matcher = every session start; timeout in seconds).
CODEX_HOOK = {"hooks": [{"type": "command", "command": HOOK_COMMAND, "timeout": 10}]}
# Gemini CLI: https://geminicli.com/docs/hooks/reference (lifecycle matchers are exact strings, none
# = every source; timeout in milliseconds; `name`/`description` are documented fields).
GEMINI_HOOK = {"hooks": [{"name": "kyb-context", "type": "command", "command": HOOK_COMMAND, "timeout": 10000,
                          "description": "kyb: session-start digest (added by kyb agents install --hook)"}]}

# The prompt hooks: `kyb recall --hook-json` when the person submits a prompt, before the model sees it
# (the hook answers with the event name it was called with). Each client's event, per the same docs:
# Claude Code UserPromptSubmit (no matcher: every prompt; timeout in seconds); Codex UserPromptSubmit
# (matchers are not supported for it); Gemini CLI BeforeAgent ("after the user submits a prompt,
# before planning"; hookSpecificOutput.additionalContext is added for that turn; timeout in ms).
CLAUDE_PROMPT_HOOK = {"hooks": [{"type": "command", "command": PROMPT_HOOK_COMMAND, "timeout": 5}]}
CODEX_PROMPT_HOOK = {"hooks": [{"type": "command", "command": PROMPT_HOOK_COMMAND, "timeout": 5}]}
GEMINI_PROMPT_HOOK = {"hooks": [{"name": "kyb-recall", "type": "command", "command": PROMPT_HOOK_COMMAND,
                                 "timeout": 5000,
                                 "description": "kyb: stored records that bear on the prompt, when sure "
                                                "(added by kyb agents install --hook)"}]}

# The MCP server entries. Claude Code: https://code.claude.com/docs/en/mcp (`type: stdio`);
# Gemini CLI: https://geminicli.com/docs/tools/mcp-server/ ; Cursor: https://cursor.com/docs/mcp
CLAUDE_SERVER = {"type": "stdio", "command": "kyb", "args": ["mcp"]}
PLAIN_SERVER = {"command": "kyb", "args": ["mcp"]}


@dataclass(frozen=True)
class Edit:
    """One thing kyb adds to one file."""

    path: Path
    what: str  # "mcp" | "hook"
    fmt: str  # "json" | "toml"
    container: tuple[str, ...] = ()
    key: str | None = None  # a member of the object at `container`; None: an item of the array there
    value: Any = None


def claude_user_config(home: Path, env: dict[str, str]) -> Path:
    """Claude Code keeps user-scope MCP servers in ~/.claude.json (in $CLAUDE_CONFIG_DIR when set)."""
    base = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else home
    return base / ".claude.json"


def edits_for(agent, project: Path | None, home: Path, env: dict[str, str], *, mcp: bool, hook: bool
              ) -> tuple[list[Edit], list[str]]:
    """What --mcp/--hook add for `agent` (user level, or in `project`), and notes on what is skipped."""
    edits: list[Edit] = []
    notes: list[str] = []
    name = agent.name
    if name == "claude":
        if mcp:
            # https://code.claude.com/docs/en/mcp — project scope: .mcp.json at the project root;
            # user scope: mcpServers at the top of ~/.claude.json.
            path = project / ".mcp.json" if project else claude_user_config(home, env)
            edits.append(Edit(path, "mcp", "json", ("mcpServers",), SERVER_NAME, CLAUDE_SERVER))
        if hook:
            # https://code.claude.com/docs/en/settings — ~/.claude/settings.json (user),
            # .claude/settings.json (project); hooks.SessionStart per https://code.claude.com/docs/en/hooks
            path = (project / ".claude" if project else agent.home) / "settings.json"
            edits.append(Edit(path, "hook", "json", ("hooks", "SessionStart"), None, CLAUDE_HOOK))
            edits.append(Edit(path, "hook", "json", ("hooks", "UserPromptSubmit"), None, CLAUDE_PROMPT_HOOK))
    elif name == "codex":
        if mcp:
            # https://developers.openai.com/codex/mcp — [mcp_servers.<name>] in ~/.codex/config.toml
            # ($CODEX_HOME), or .codex/config.toml in a trusted project.
            path = (project / ".codex" if project else agent.home) / "config.toml"
            edits.append(Edit(path, "mcp", "toml", ("mcp_servers",), SERVER_NAME, PLAIN_SERVER))
        if hook:
            # https://developers.openai.com/codex/hooks — ~/.codex/hooks.json or <repo>/.codex/hooks.json
            path = (project / ".codex" if project else agent.home) / "hooks.json"
            edits.append(Edit(path, "hook", "json", ("hooks", "SessionStart"), None, CODEX_HOOK))
            edits.append(Edit(path, "hook", "json", ("hooks", "UserPromptSubmit"), None, CODEX_PROMPT_HOOK))
    elif name == "gemini":
        # https://geminicli.com/docs/reference/configuration — ~/.gemini/settings.json (user),
        # .gemini/settings.json (project); mcpServers and hooks live in the same file.
        path = (project / ".gemini" if project else agent.home) / "settings.json"
        if mcp:
            edits.append(Edit(path, "mcp", "json", ("mcpServers",), SERVER_NAME, PLAIN_SERVER))
        if hook:
            edits.append(Edit(path, "hook", "json", ("hooks", "SessionStart"), None, GEMINI_HOOK))
            edits.append(Edit(path, "hook", "json", ("hooks", "BeforeAgent"), None, GEMINI_PROMPT_HOOK))
    elif name == "cursor":
        if mcp:
            # https://cursor.com/docs/mcp — ~/.cursor/mcp.json (global), .cursor/mcp.json (project)
            path = (project / ".cursor" if project else agent.home) / "mcp.json"
            edits.append(Edit(path, "mcp", "json", ("mcpServers",), SERVER_NAME, PLAIN_SERVER))
        if hook:
            notes.append("cursor: no SessionStart hook nor prompt hook installed — Cursor's hooks take another output "
                         "format than `kyb context --hook-json` / `kyb recall --hook-json`; its MCP server (--mcp) "
                         "has the `context` and `recall` tools")
    return edits, notes


def _ours(edit: Edit) -> Callable[[Any], bool]:
    return lambda value: value == edit.value


def add(text: str | None, edit: Edit) -> tuple[str | None, str | None]:
    """(new text, note): the file text with kyb's entry in it; a note when it is left alone."""
    if edit.fmt == "toml":
        return _add_toml(text, edit)
    try:
        new, status = jsonedit.add(text, list(edit.container), edit.value, key=edit.key, same=_ours(edit))
    except jsonedit.JsonEditError as exc:
        return text, f"{edit.path}: not edited ({exc}); add the {edit.what} entry by hand"
    if status == "foreign":
        return text, f"{edit.path}: {'.'.join(edit.container)}.{edit.key} is already set to something else; left as it is"
    return new, None


def remove(text: str | None, edit: Edit) -> str | None | bool:
    """The text without kyb's entry; None: delete the file (kyb made it); False: nothing of kyb's."""
    if edit.fmt == "toml":
        return _remove_toml(text)
    try:
        return jsonedit.remove(text, list(edit.container), key=edit.key, ours=_ours(edit))
    except jsonedit.JsonEditError:
        return False


def _toml_block(edit: Edit) -> str:
    table = ".".join((*edit.container, edit.key or ""))
    lines = [TOML_BEGIN, f"[{table}]"]
    for name, value in edit.value.items():
        rendered = "[" + ", ".join(f'"{v}"' for v in value) + "]" if isinstance(value, list) else f'"{value}"'
        lines.append(f"{name} = {rendered}")
    return "\n".join([*lines, TOML_END]) + "\n"


def _add_toml(text: str | None, edit: Edit) -> tuple[str | None, str | None]:
    try:
        data = tomllib.loads(text or "")
    except tomllib.TOMLDecodeError as exc:
        return text, f"{edit.path}: not edited (TOML error: {exc}); add [mcp_servers.kyb] by hand"
    if text is not None and (TOML_BEGIN in text or TOML_END in text):
        try:
            return sections.with_section(text, _toml_block(edit), TOML_BEGIN, TOML_END), None
        except sections.SectionError as exc:
            return text, f"{edit.path}: not edited ({exc})"
    existing = data.get(edit.container[0], {}).get(edit.key) if isinstance(data.get(edit.container[0]), dict) else None
    if existing is not None:
        return text, f"{edit.path}: [mcp_servers.{edit.key}] is already there and is not kyb's block; left as it is"
    new = sections.with_section(text, _toml_block(edit), TOML_BEGIN, TOML_END)
    try:
        tomllib.loads(new)
    except tomllib.TOMLDecodeError as exc:
        return text, f"{edit.path}: not edited (adding [mcp_servers.kyb] would break it: {exc}); add it by hand"
    return new, None


def _remove_toml(text: str | None) -> str | None | bool:
    if text is None or TOML_BEGIN not in text:
        return False
    try:
        return sections.without_section(text, TOML_BEGIN, TOML_END)
    except sections.SectionError:
        return False  # a broken kyb block is left as it is (install says why)
