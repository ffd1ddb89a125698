"""`kyb task-status KEY --status …`: move a task between live statuses, changing only what is named."""

from __future__ import annotations

import click

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_options
from kyb_cli.api.operations import example


@click.command("task-status", epilog=example("task-status"))
@table_options("task-status")
@common_options
def task_status_cmd(key: str, status: str, assignee: str | None, parent: str | None,
                    blocked_reason: str | None) -> None:
    """Move task KEY to open, in_progress or blocked. Title, body, tags, priority, knowledge and
    refs stay; a non-blocked status clears blocked_reason. An archived task is reopened (`created`)."""
    from kyb_cli import api

    reply = api.handle("task-status", CliDoor(), {"key": key, "status": status, "assignee": assignee,
                                                  "parent": parent, "blocked_reason": blocked_reason})
    emit(reply, write_reply)
