"""`kyb reads [KEY]`: who read a record, which version and how (receipts); `--unread-since`, `--misses`."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options, fields_option
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command, table_fields, table_options


def reads_view(c, d) -> None:
    from rich.table import Table

    if "misses" in d:
        table = Table("when", "agent", "session", "question", title=f"{d['count']} miss(es)")
        for row in d["misses"]:
            table.add_row(row["at"], row["agent"], row["session"], row["text"])
    elif "unread" in d:
        table = Table("key", "kind", "title", title=f"{d['count']} record(s) unread since {d['since']}")
        for row in d["unread"]:
            table.add_row(row["key"], row["kind"], row["title"])
    else:
        title = f"{d['key']}: {d['count']} read(s)" if "key" in d else f"{d['count']} read(s)"
        table = Table("when", "key", "agent", "session", "transport", "mode", "sha", title=title)
        for row in d["reads"]:
            table.add_row(row["at"], row.get("key", d.get("key", "")), row["agent"], row["session"], row["transport"],
                          row["mode"], row["sha"][:10])
    c.print(table)


@table_command("reads")
@table_options("reads")
@fields_option
@common_options
def reads_cmd(**given) -> None:
    from kyb_cli import api

    emit(api.handle("reads", CliDoor(), table_fields("reads", given)), reads_view)
