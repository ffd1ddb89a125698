"""`kyb incidents`: incident reports, open first, then newest; archived ones with --all."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options, fields_option
from kyb_cli.cli.deadlines_block import deadline_options, print_deadlines_block
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command, table_fields, table_options


def incidents_view(c, d) -> None:
    from rich.markup import escape
    from rich.table import Table

    from kyb_cli.cli.render import EMPHASIS, keep_whole, plural

    table = Table("key", "status", "severity", "service", "follow-ups", "title",
                  title=plural(d["count"], "incident"))
    keep_whole(table.columns[0], [row["key"] for row in d["incidents"]])
    for row in d["incidents"]:
        status = row["status"] + (" (archived)" if row["archived"] else "")
        severity = row["severity"]
        if severity in EMPHASIS and not row["archived"]:
            severity = f"[{EMPHASIS[severity]}]{severity}[/]"
        table.add_row(row["key"], status, severity, escape(row["service"]), str(row["open_followups"] or ""),
                      escape(row["title"]))
    c.print(table)


@table_command("incidents")
@table_options("incidents")
@deadline_options
@fields_option
@common_options
def incidents_cmd(**given) -> None:
    from kyb_cli import api

    door = CliDoor()  # listings read the index, no pygit2
    emit(api.handle("incidents", door, table_fields("incidents", given)), incidents_view)
    print_deadlines_block(door.path())
