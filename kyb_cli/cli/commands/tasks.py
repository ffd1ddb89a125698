"""`kyb tasks`: tasks by status (open, in_progress, blocked, done, dropped), newest first within each."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options, fields_option
from kyb_cli.cli.deadlines_block import deadline_options, print_deadlines_block
from kyb_cli.cli.options import table_command, table_fields, table_options
from kyb_cli.cli.output import emit


def tasks_view(c, d) -> None:
    from rich.markup import escape
    from rich.table import Table

    from kyb_cli.cli.render import keep_whole, line, narrow, plural

    if narrow(c):  # a narrow terminal: two or three short lines per task, its blockers included
        c.print(f"[bold]{plural(d['count'], 'task')}[/bold]")
        for row in d["tasks"]:
            status, priority, due = _cells(row)
            c.print(line(f"[bold]{row['key']}[/bold]  {status}  {priority}  {due}", max(c.width, len(row["key"]))))
            who = f"  [dim]@{escape(row['assignee'])}[/dim]" if row["assignee"] else ""
            c.print(line(f"  {escape(row['title'])}{who}", c.width))
            if row.get("blocked_by"):
                c.print(line(f"  [dim]blocked by[/dim] {', '.join(row['blocked_by'])}", c.width))
        return
    table = Table("key", "status", "priority", "assignee", "due", "blocked by", "title",
                  title=plural(d["count"], "task"))
    keep_whole(table.columns[0], [row["key"] for row in d["tasks"]])
    for row in d["tasks"]:
        status, priority, due = _cells(row)
        table.add_row(row["key"], status, priority, escape(row["assignee"]), due,
                      ", ".join(row.get("blocked_by") or ()), escape(row["title"]))
    c.print(table)


def _cells(row) -> tuple[str, str, str]:
    """A task's status, priority and due date as a terminal shows them (archived, HARD, overdue)."""
    from kyb_cli.cli.render import EMPHASIS, is_overdue

    status = row["status"] + (" (archived)" if row["archived"] else "")
    due = row["due"] or (f"~{row['expected']}" if row["expected"] else "")
    if due and row["hard"]:
        due += " HARD"
    if is_overdue(row):
        due = f"[bold red]{due} overdue[/]"
    priority = row["priority"]
    if priority in EMPHASIS:
        priority = f"[{EMPHASIS[priority]}]{priority}[/]"
    return status, priority, due


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
