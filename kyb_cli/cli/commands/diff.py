"""`kyb diff KEY [FROM] [TO]`: what changed between two versions of a record (fields and body)."""

from __future__ import annotations

from typing import Any


from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command, table_fields, table_options


@table_command("diff")
@table_options("diff")
@common_options
def diff_cmd(**given) -> None:
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
