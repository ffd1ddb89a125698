"""One walk of the Click command tree, for the completion and man-page writers of gen_docs.py.

What each writer needs to know of a command (its options, arguments, choices, whether a value is a
path) is read here once, so the renderers stay renderers.
"""

from __future__ import annotations

from dataclasses import dataclass

import click


@dataclass
class Node:
    """One command in the tree: `path` is ("kyb",) for the root, ("kyb", "agents", "install") deeper."""

    path: tuple[str, ...]
    command: click.Command
    children: list["Node"]
    ctx: click.Context

    @property
    def name(self) -> str:
        return " ".join(self.path)

    @property
    def slug(self) -> str:
        return "-".join(self.path)


def walk(command: click.Command | None = None, path: tuple[str, ...] = ("kyb",),
         parent: click.Context | None = None) -> Node:
    """The command tree under `command` (default: the `kyb` group), hidden commands left out."""
    if command is None:
        from kyb_cli.cli.app import cli

        command = cli
    ctx = click.Context(command, info_name=path[-1], parent=parent, **command.context_settings)
    children: list[Node] = []
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            children.append(walk(sub, path + (name,), ctx))
    return Node(path, command, children, ctx)


def flatten(node: Node) -> list[Node]:
    out = [node]
    for child in node.children:
        out.extend(flatten(child))
    return out


def options(node: Node) -> list[click.Option]:
    """The options of a command as its context sees them (help names inherited from the root)."""
    return [p for p in node.command.get_params(node.ctx) if isinstance(p, click.Option) and not p.hidden]


def arguments(command: click.Command) -> list[click.Argument]:
    return [p for p in command.params if isinstance(p, click.Argument)]


def option_names(opt: click.Option) -> list[str]:
    return list(opt.opts) + list(opt.secondary_opts)


def takes_value(opt: click.Option) -> bool:
    return not opt.is_flag and not opt.count


def choices(param: click.Parameter) -> list[str]:
    return [str(c) for c in param.type.choices] if isinstance(param.type, click.Choice) else []


def wants_path(param: click.Parameter) -> bool:
    if isinstance(param.type, (click.Path, click.File)):
        return True
    return (getattr(param, "metavar", None) or "").upper() in ("PATH", "FILE", "DIR", "DIRECTORY")


def short_help(command: click.Command, limit: int = 80) -> str:
    return command.get_short_help_str(limit=limit).strip()
