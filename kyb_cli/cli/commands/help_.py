"""`kyb help [CMD]` and `kyb completion bash|zsh|fish`: help and shell completion from the Click tree.

`kyb help add` is `kyb add --help` on stdout, exit 0. `kyb completion SHELL` prints the script Click
builds for this very command tree (it asks `kyb` for the candidates at Tab time), so it can never
drift from the commands installed; `eval "$(kyb completion bash)"` in ~/.bashrc turns it on.
"""

from __future__ import annotations

import click

from kyb_cli.cli.options import hand_example


@click.command("help", epilog=hand_example("kyb help task"))
@click.argument("command", nargs=-1)
@click.pass_context
def help_cmd(ctx: click.Context, command: tuple[str, ...]) -> None:
    """Show the help of kyb, or of COMMAND (`kyb help add` = `kyb add --help`), on stdout."""
    group = ctx.parent.command if ctx.parent else ctx.command
    target: click.Command = group
    parent = ctx.parent
    info_name = "kyb"
    for name in command:
        sub = target.get_command(ctx, name) if isinstance(target, click.Group) else None
        if sub is None:
            raise click.UsageError(f"No such command '{' '.join(command)}'; `kyb help` lists them")
        target, info_name = sub, name
        parent = click.Context(target, info_name=info_name, parent=parent)
    sub_ctx = parent if command else ctx.parent
    click.echo((sub_ctx or ctx).get_help() if command else group.get_help(ctx.parent))


@click.command("completion", epilog=hand_example('eval "$(kyb completion bash)"'))
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_cmd(shell: str) -> None:
    """Print the shell completion script for SHELL: `eval "$(kyb completion bash)"` (zsh the same;
    fish: `kyb completion fish | source`)."""
    from click.shell_completion import get_completion_class

    from kyb_cli.cli.app import cli

    cls = get_completion_class(shell)
    click.echo(cls(cli, {}, "kyb", "_KYB_COMPLETE").source())
