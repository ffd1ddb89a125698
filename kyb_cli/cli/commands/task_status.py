"""`kyb task-status KEY --status …`: move a task between live statuses, changing only what is named."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_command, table_options


@table_command("task-status")
@table_options("task-status")
@common_options
def task_status_cmd(key: str, status: str, assignee: str | None, parent: str | None,
                    blocked_reason: str | None) -> None:
    from kyb_cli import api

    reply = api.handle("task-status", CliDoor(), {"key": key, "status": status, "assignee": assignee,
                                                  "parent": parent, "blocked_reason": blocked_reason})
    emit(reply, write_reply)
