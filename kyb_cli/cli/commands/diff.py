"""`kyb diff KEY [FROM] [TO]`: what changed between two versions of a record (fields and body)."""

from __future__ import annotations

from typing import Any

import click

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_fields, table_options
from kyb_cli.api.operations import example


@click.command("diff", epilog=example("diff"))
@table_options("diff")
@common_options
def diff_cmd(**given) -> None:
    """Unified diff of KEY's fields and body between two versions.

    FROM and TO are revisions (sha, short sha, HEAD~2, tag); the record is read as it stood there.
    Defaults: TO is the latest version, FROM the version before it. JSON carries `diff` (the text),
    `fields` (each changed field with its old and new value), `from` and `to` (sha, committed_at).
    """
    from kyb_cli import api

    emit(api.handle("diff", CliDoor(), table_fields("diff", given)), diff_view)


def diff_view(c: Any, d: dict[str, Any]) -> None:
    from rich.text import Text

    if not d["changed"]:
        c.print(f"[dim]no change[/dim] between {_label(d['from'])} and {_label(d['to'])}")
        return
    for line in d["diff"].splitlines():
        style = ("bold" if line.startswith(("---", "+++")) else "green" if line.startswith("+")
                 else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "")
        c.print(Text(line, style=style))


def _label(side: dict[str, Any] | None) -> str:
    return "nothing" if side is None else f"{side['sha'][:12]} ({side['committed_at']})"
