"""`kyb log`: the store's activity, newest first, with hand commits and merges labelled."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options, fields_option
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command, table_fields, table_options


def log_view(c, d) -> None:
    from rich.table import Table

    from kyb_cli.cli.render import keep_whole

    table = Table("when", "action", "key", "agent", "author", "sha", title=f"{d['count']} commit(s)")
    keep_whole(table.columns[2], [row["key"] for row in d["log"]])
    for row in d["log"]:
        action = row["action"]
        if action in ("hand", "merge"):
            action = f"[yellow]{action}[/yellow]"
        elif action in ("retract", "archive"):
            action = f"[magenta]{action}[/magenta]"
        key = row["key"] or (", ".join(row["keys"][:3]) + (" …" if len(row["keys"]) > 3 else ""))
        table.add_row(row["committed_at"].replace("+00:00", "Z"), action, key, row["agent"], row["author"],
                      row["sha"][:10])
    c.print(table)


@table_command("log")
@table_options("log")
@fields_option
@common_options
def log_cmd(**given) -> None:
    from kyb_cli import api

    emit(api.handle("log", CliDoor(), table_fields("log", given)), log_view)
