"""Click options made from the operations table (kyb_cli/api/operations.py): one field, one option.

`@table_options("task")` puts every CLI field of the operation on the command, in the table's
order: its flag (`--remind-days`), help, default, allowed values, bounds, placeholder and aliases.
The CLI's own spellings are the door's translation, made here and nowhere else: a list is a comma
list (`--tags a,b`, handed to the command as a list; `''` clears), "null keeps" reads "omitted
keeps", a boolean is a flag (`--hard/--no-hard` when omitted means keep). A door-only behaviour (a
default read from stdin, a field required unless `--template`) is an `overrides` entry at the call.
"""

from __future__ import annotations

from typing import Any, Callable

import click

from kyb_cli.api.operations import OPERATIONS, Field


def _split(_ctx: click.Context, _param: click.Parameter, value: str | None) -> list[str] | None:
    from kyb_cli import api

    return None if value is None else api.split_list(value)


def cli_help(field: Field) -> str:
    """The table's help in the CLI's words (a list is given as a comma list, omitting means null)."""
    text = field.description.replace("null or absent keeps", "omitted keeps").replace("null keeps", "omitted keeps")
    if field.type == "strings":
        text = text.replace("[] clears", "'' clears")
    if (field.multiple or field.type == "texts") and "repeat" not in text:
        text += " Repeat the option for each."
    return text


class _Bounded(click.IntRange):
    """An integer option with the table's bounds, refused in the wording every door uses
    (api.operations.out_of_bounds), not Click's `0<=x<=200`."""

    def convert(self, value, param, ctx):
        number = click.INT.convert(value, param, ctx)  # not a number: Click's own message
        from kyb_cli.api.operations import out_of_bounds

        problem = out_of_bounds(self.min, self.max, number)
        if problem:
            self.fail(problem, param, ctx)
        return number


def make_param(field: Field, **override: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click.option (or click.argument) of one field."""
    name = field.cli or field.name
    if field.positional:
        kw: dict[str, Any] = {"required": field.required, "metavar": field.metavar or field.name.upper()}
        if field.type == "strings":
            kw["nargs"] = -1  # PATH…: every remaining argument
        kw.update(override)
        return click.argument(name, **kw)
    kw = {"help": cli_help(field)}
    if field.metavar:
        kw["metavar"] = field.metavar
    if field.type == "boolean":
        if field.default is False:
            kw["is_flag"] = True
            decls = [field.flag, *field.aliases, name]
        else:  # default on (`--semantic/--no-semantic`) or omitted keeps (`--hard/--no-hard`)
            decls = [f"{field.flag}/--no-{field.flag[2:]}", name]
            kw["default"] = field.default
    else:
        decls = [field.flag, *field.aliases, name]
        kw["required"] = field.required
        if field.type == "integer":
            bounded = field.minimum is not None or field.maximum is not None
            kw["type"] = _Bounded(field.minimum, field.maximum) if bounded else int
        elif field.enum:
            kw["type"] = click.Choice(list(field.enum))
        if field.multiple or field.type == "texts":
            kw["multiple"] = True  # every value as given (a texts field's are each kept whole)
        elif field.arity > 1:
            kw["nargs"] = field.arity  # exactly N items are N arguments (`--changed-between A B`)
        elif field.type == "strings":
            kw["callback"] = _split
            kw.setdefault("metavar", "A,B")
            kw["default"] = None if field.nullable or field.default is None else ",".join(field.default)
        elif not field.required:
            kw["default"] = field.default
        if field.default not in (None, "", [], False) and field.type != "strings":
            kw["show_default"] = True
    kw.update(override)
    return click.option(*decls, **kw)


def table_options(operation: str, *, skip: tuple[str, ...] = (),
                  overrides: dict[str, dict[str, Any]] | None = None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Every CLI field of `operation` as Click parameters; `skip` leaves one to a shared decorator."""
    fields = [f for f in OPERATIONS[operation].fields_of("cli") if f.name not in skip]
    overrides = overrides or {}

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for field in reversed(fields):
            func = make_param(field, **overrides.get(field.name, {}))(func)
        return func

    return decorate



def table_command(operation: str, **settings: Any) -> Callable[[Callable[..., Any]], click.Command]:
    """`click.command` of a table operation: its help is the table's one description
    (`Operation.text("cli")`), then the command's docstring, which says only what the CLI alone has
    (stdin, `--`, an exit status); its epilog is the table's example."""

    def decorate(func: Callable[..., Any]) -> click.Command:
        import inspect

        from kyb_cli.api.operations import example

        note = inspect.cleandoc(func.__doc__ or "")
        text = "\n\n".join(part for part in (OPERATIONS[operation].text("cli"), note) if part)
        return click.command(operation, help=text, epilog=example(operation), **settings)(func)

    return decorate


def hand_example(*calls: str) -> str:
    """The `Example:` --help epilog of a command outside the operations table (serve, mcp, agents…)."""
    return "\b\nExample:\n" + "\n".join(f"  {call}" for call in calls)


def table_fields(operation: str, given: dict[str, Any]) -> dict[str, Any]:
    """A command's Click values under the table's names (`include_all` -> `all`, `fmt` -> `format`)."""
    return OPERATIONS[operation].named(given, "cli")
