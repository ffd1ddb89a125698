"""Every command's --help ends with a runnable example (issue 23 / issue 25 item 14).

A command of the operations table shows its `Operation.example`; the others (serve, mcp, agents…)
a hand-written one. The walk covers groups and their subcommands, so a new command without an
example fails here by name.
"""

from __future__ import annotations

import click
from click.testing import CliRunner

from kyb_cli.api.operations import OPERATIONS
from kyb_cli.cli.app import cli


def _commands(group: click.Group, path: tuple[str, ...] = ()):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*path, name))


def test_every_command_help_has_an_example():
    runner = CliRunner()
    missing = []
    for path, _command in _commands(cli):
        out = runner.invoke(cli, [*path, "--help"]).output
        after = out.split("Example:", 1)[1].strip() if "Example:" in out else ""
        if not after.startswith("kyb ") and not after.startswith("eval \"$(kyb "):
            missing.append(" ".join(path))
    assert not missing, f"--help without an example: {missing}"


def test_the_top_level_help_has_an_example():
    assert "Example:" in CliRunner().invoke(cli, ["--help"]).output


def test_a_table_operation_shows_its_tables_example():
    for name, op in OPERATIONS.items():
        if "cli" in op.doors:
            assert op.example in CliRunner().invoke(cli, [name, "--help"], terminal_width=400).output, name
