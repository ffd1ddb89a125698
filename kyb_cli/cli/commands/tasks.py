"""`kyb tasks`: tasks by status (open, in_progress, blocked, done, dropped), newest first within each."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options, fields_option
from kyb_cli.cli.deadlines_block import deadline_options, print_deadlines_block
from kyb_cli.cli.options import table_command, table_fields, table_options
from kyb_cli.cli.output import emit


def tasks_view(c, d) -> None:
    from rich.markup import escape
    from rich.table import Table

    from kyb_cli.cli.render import EMPHASIS, is_overdue, keep_whole, plural

    table = Table("key", "status", "priority", "assignee", "due", "title", title=plural(d["count"], "task"))
    keep_whole(table.columns[0], [row["key"] for row in d["tasks"]])
    for row in d["tasks"]:
        status = row["status"] + (" (archived)" if row["archived"] else "")
        due = row["due"] or (f"~{row['expected']}" if row["expected"] else "")
        if due and row["hard"]:
            due += " HARD"
        if is_overdue(row):
            due = f"[bold red]{due} overdue[/]"
        priority = row["priority"]
        if priority in EMPHASIS:
            priority = f"[{EMPHASIS[priority]}]{priority}[/]"
        table.add_row(row["key"], status, priority, escape(row["assignee"]), due, escape(row["title"]))
    c.print(table)


@table_command("tasks")
@table_options("tasks")
@deadline_options
@fields_option
@common_options
def tasks_cmd(**given) -> None:
    from kyb_cli import api

    door = CliDoor()  # listings read the index, no pygit2
    emit(api.handle("tasks", door, table_fields("tasks", given)), tasks_view)
    print_deadlines_block(door.path())
