"""`kyb agents install|uninstall`: point the coding agents found here at kyb (marked, reversible)."""

from __future__ import annotations

from pathlib import Path

import click

from kyb_cli.cli.common import HintGroup, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import hand_example

AGENT_CHOICE = click.Choice(["claude", "codex", "gemini", "cursor"])
NONE_FOUND = ("no coding agents found (looked for ~/.claude, ~/.codex, ~/.gemini, ~/.cursor): nothing written; "
              "use --agent NAME to write one anyway")


def _scope_options(func):
    func = click.option("--agent", "agent_names", multiple=True, type=AGENT_CHOICE,
                        help="Only this agent (repeatable); default: every agent whose home directory exists.")(func)
    func = click.option("--project", "project", is_flag=False, flag_value=".", default=None, metavar="[DIR]",
                        type=click.Path(file_okay=False, path_type=Path),
                        help="The project's files (this directory, or DIR) instead of the user-level ones: "
                             "CLAUDE.md/AGENTS.md/GEMINI.md, .mcp.json, .claude/, .codex/, .gemini/, .cursor/.")(func)
    return func


def _view(console, data) -> None:
    verb = "Would" if data["dry_run"] else "Did"
    if not data["changes"] and data["agents"]:
        console.print("Nothing to change.")
    for change in data["changes"]:
        console.print(f"{verb} {change['action']} {change['path']}")
        if data["dry_run"]:
            console.print(change["diff"], markup=False, highlight=False, end="")
    for note in data.get("notes", []):
        console.print(f"[yellow]note:[/yellow] {note}")


def _report(agents, changes, notes, dry_run: bool) -> dict:
    return {"dry_run": dry_run, "agents": [a.name for a in agents],
            "changes": [c.to_json(with_diff=dry_run) for c in changes], "notes": notes}


@click.group("agents", epilog=hand_example("kyb agents install --mcp --hook"), cls=HintGroup)
def agents_group() -> None:
    """Wire kyb into the coding agents found here (Claude Code, Codex, Gemini CLI, Cursor)."""


def _wiring_options(func):
    func = click.option("--hook", is_flag=True,
                        help="Also install the SessionStart hook (`kyb context --hook-json`) and the prompt "
                             "hook (`kyb recall --hook-json`) where the agent has them (Claude Code, Codex, "
                             "Gemini CLI).")(func)
    func = click.option("--mcp", is_flag=True,
                        help="Also register `kyb mcp` in each agent's MCP configuration file.")(func)
    return func


@agents_group.command("install", epilog=hand_example("kyb agents install --mcp --hook --agent claude"))
@click.option("--dry-run", is_flag=True, help="Show what would change (a diff) and write nothing.")
@_wiring_options
@_scope_options
@common_options
def install_cmd(dry_run: bool, project: Path | None, agent_names: tuple[str, ...], mcp: bool, hook: bool) -> None:
    """Add a short marked kyb section to each agent's always-loaded instructions and a kyb skill;
    --mcp registers the MCP server, --hook the session-start digest and the prompt hook (records that
    bear on a prompt, only when sure: Claude Code and Codex UserPromptSubmit, Gemini CLI BeforeAgent),
    in each agent's own files.

    \b
    User level by default:
      claude  ~/.claude/CLAUDE.md, ~/.claude/skills/kyb/SKILL.md; --mcp ~/.claude.json;
              --hook ~/.claude/settings.json
      codex   ~/.codex/AGENTS.md, ~/.agents/skills/kyb/SKILL.md; --mcp ~/.codex/config.toml;
              --hook ~/.codex/hooks.json
      gemini  ~/.gemini/GEMINI.md, ~/.gemini/skills/kyb/SKILL.md; --mcp/--hook ~/.gemini/settings.json
      cursor  --mcp ~/.cursor/mcp.json (MCP only)
    --project [DIR] writes the project's files instead (.mcp.json, .claude/settings.json,
    .codex/config.toml, .codex/hooks.json, .agents/skills/, .gemini/settings.json, .cursor/mcp.json).
    Running it again changes nothing; `kyb agents uninstall` removes exactly what it added and
    leaves every other byte of those files as it was.
    """
    import shutil

    from kyb_cli import api

    agents = api.found_agents(agent_names)
    changes, notes = api.plan_install(agents, project.absolute() if project else None, mcp=mcp, hook=hook)
    if not agents:  # say so on a pipe too: an empty list alone reads like success
        notes.append(NONE_FOUND)
    if (mcp or hook) and agents and shutil.which("kyb") is None:
        notes.append("`kyb` is not on PATH: agents start `kyb mcp` / `kyb context --hook-json` / `kyb recall --hook-json` by name — "
                     "install it with pipx (README, Quick start) or put kyb's bin directory on PATH")
    if not dry_run:
        api.apply_agent_changes(changes)
    emit(_report(agents, changes, notes, dry_run), _view)


@agents_group.command("uninstall", epilog=hand_example("kyb agents uninstall --dry-run"))
@click.option("--dry-run", is_flag=True, help="Show what would change (a diff) and write nothing.")
@_scope_options
@common_options
def uninstall_cmd(dry_run: bool, project: Path | None, agent_names: tuple[str, ...]) -> None:
    """Remove what `kyb agents install` added (sections, skills, MCP entries, hooks), leaving the rest
    of every file byte for byte as it was."""
    from kyb_cli import api

    agents = [a for a in api.known_agents() if not agent_names or a.name in agent_names]
    changes = api.plan_uninstall(agents, project.absolute() if project else None)
    if not dry_run:
        api.apply_agent_changes(changes)
    emit(_report(agents, changes, [], dry_run), _view)
