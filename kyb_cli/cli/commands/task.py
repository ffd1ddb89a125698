"""`kyb task`: write a task (body on stdin), with ownership, parent and deadline fields."""

from __future__ import annotations

import click

from kyb_cli.cli.common import attribution, body_options, common_options, open_store, read_body
from kyb_cli.cli.options import table_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.api.operations import example


@click.command("task", epilog=example("task"))
@table_options("task", skip=("body",))
@body_options
@common_options
def task_cmd(key, title, status, priority, blocked_reason, assignee, parent, knowledge, resolution, tags,
             refs, due, hard, remind_days, expected, waits_on, blocked_by, effective_at, body, body_file) -> None:
    """Write task KEY (a rewrite replaces it, but omitted tags and deadline fields are kept).

    done/dropped need --resolution and archive the task; `kyb done` is the usual way to close.
    """
    from kyb_cli import api

    KEEP = api.keep()

    days = api.remind_days_arg(remind_days)
    when = api.event_time(effective_at)
    text = read_body(body, body_file)
    store = open_store()
    reply = api.write_task(
        store, attribution(), key=key, title=title, body=text, status=status, priority=priority,
        blocked_reason=blocked_reason, assignee=assignee, parent_task=parent,
        knowledge=knowledge, resolution=resolution,
        tags=KEEP if tags is None else tags, refs=refs,
        due=KEEP if due is None else due.strip(), hard=KEEP if hard is None else hard, remind_days=days,
        expected=KEEP if expected is None else expected.strip(),
        waits_on=KEEP if waits_on is None else waits_on.strip(),
        blocked_by=KEEP if blocked_by is None else blocked_by, effective_at=when,
    )
    emit(reply, write_reply)
    if reply.get("warning"):
        from kyb_cli.cli.output import note, wants_json

        if wants_json():  # on a terminal the reply view shows it already
            note(f"warning: {key}: {reply['warning']}")
