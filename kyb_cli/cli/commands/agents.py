"""`kyb agents install|uninstall`: point the coding agents found here at kyb (marked, reversible)."""

from __future__ import annotations

from pathlib import Path

import click

from kyb_cli.cli.common import common_options
from kyb_cli.cli.output import emit

AGENT_CHOICE = click.Choice(["claude", "codex", "gemini"])
NONE_FOUND = ("no coding agents found (looked for ~/.claude, ~/.codex, ~/.gemini): nothing written; "
              "use --agent NAME to write one anyway")


def _scope_options(func):
    func = click.option("--agent", "agent_names", multiple=True, type=AGENT_CHOICE,
                        help="Only this agent (repeatable); default: every agent whose home directory exists.")(func)
    func = click.option("--project", "project", type=click.Path(file_okay=False, path_type=Path),
                        help="Write the project's CLAUDE.md/AGENTS.md/GEMINI.md in this directory "
                             "instead of the user-level files.")(func)
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


@click.group("agents")
def agents_group() -> None:
    """Wire kyb into the coding agents found here (Claude Code, Codex, Gemini CLI)."""


@agents_group.command("install")
@click.option("--dry-run", is_flag=True, help="Show what would change (a diff) and write nothing.")
@_scope_options
@common_options
def install_cmd(dry_run: bool, project: Path | None, agent_names: tuple[str, ...]) -> None:
    """Add a short marked kyb section to each agent's always-loaded instructions and a kyb skill.

    User-level by default (~/.claude/CLAUDE.md, ~/.codex/AGENTS.md, ~/.gemini/GEMINI.md and
    skills/kyb/SKILL.md beside each); --project DIR writes that project's files instead. Running
    it again changes nothing; `kyb agents uninstall` removes exactly what it added.
    """
    from kyb_cli import api

    agents = api.found_agents(agent_names)
    changes, notes = api.plan_install(agents, project.absolute() if project else None)
    if not agents:  # say so on a pipe too: an empty list alone reads like success
        notes.append(NONE_FOUND)
    if not dry_run:
        api.apply_agent_changes(changes)
    emit(_report(agents, changes, notes, dry_run), _view)


@agents_group.command("uninstall")
@click.option("--dry-run", is_flag=True, help="Show what would change (a diff) and write nothing.")
@_scope_options
@common_options
def uninstall_cmd(dry_run: bool, project: Path | None, agent_names: tuple[str, ...]) -> None:
    """Remove the kyb sections and skills that `kyb agents install` added, leaving the rest as it was."""
    from kyb_cli import api

    agents = [a for a in api.known_agents() if not agent_names or a.name in agent_names]
    changes = api.plan_uninstall(agents, project.absolute() if project else None)
    if not dry_run:
        api.apply_agent_changes(changes)
    emit(_report(agents, changes, [], dry_run), _view)
