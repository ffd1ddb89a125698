"""`kyb task`: write a task (body on stdin), with ownership, parent and deadline fields."""

from __future__ import annotations

import click

from kyb_cli.cli.common import attribution, body_options, common_options, open_store, read_body
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.api.operations import example


@click.command("task", epilog=example("task"))
@click.option("--key", required=True, help="task-<slug>.")
@click.option("--title", required=True, help="What is to be done.")
@click.option("--status", default="open", show_default=True, help="open|in_progress|blocked|done|dropped.")
@click.option("--priority", default="", help="low|medium|high|critical (empty: unranked).")
@click.option("--blocked-reason", default="", help="Why it is blocked (only with --status blocked).")
@click.option("--assignee", default="", help="Short owner label, ≤80 chars, one line.")
@click.option("--parent", "--parent-task", "parent", default="", help="Parent task key (task-…).")
@click.option("--blocked-by", "blocked_by", default=None, metavar="KEY[,KEY]",
              help="Tasks this one waits on; omitted keeps the stored list, '' clears.")
@click.option("--knowledge", default="", help="Comma-separated knowledge keys.")
@click.option("--resolution", default="", help="Outcome (needed for done/dropped).")
@click.option("--tags", default=None, help="Comma-separated; omitted keeps the stored tags, '' clears.")
@click.option("--refs", default="", help="Comma-separated pointers.")
@click.option("--due", default=None, metavar="DATE", help="Due date YYYY-MM-DD; omitted keeps, '' clears.")
@click.option("--hard/--no-hard", default=None, help="Missing the date has external consequences.")
@click.option("--remind-days", default=None, metavar="N", help="Reminder window in days (default 3); '' clears.")
@click.option("--expected", default=None, metavar="DATE", help="Provisional date YYYY-MM-DD (with --waits-on).")
@click.option("--waits-on", default=None, metavar="TEXT", help="The future event the expected date depends on.")
@click.option("--effective-at", "effective_at", default=None, metavar="TIME",
              help="When this became true in the world (date or datetime); default: when written.")
@body_options
@common_options
def task_cmd(key, title, status, priority, blocked_reason, assignee, parent, knowledge, resolution, tags,
             refs, due, hard, remind_days, expected, waits_on, blocked_by, effective_at, body, body_file) -> None:
    """Write task KEY (a rewrite replaces it, but omitted tags and deadline fields are kept).

    done/dropped need --resolution and archive the task; `kyb done` is the usual way to close.
    """
    from kyb_cli import api

    KEEP = api.keep()
    split_list = api.split_list

    days = api.remind_days_arg(remind_days)
    when = api.event_time(effective_at)
    text = read_body(body, body_file)
    store = open_store()
    reply = api.write_task(
        store, attribution(), key=key, title=title, body=text, status=status, priority=priority,
        blocked_reason=blocked_reason, assignee=assignee, parent_task=parent,
        knowledge=split_list(knowledge), resolution=resolution,
        tags=KEEP if tags is None else split_list(tags), refs=split_list(refs),
        due=KEEP if due is None else due.strip(), hard=KEEP if hard is None else hard, remind_days=days,
        expected=KEEP if expected is None else expected.strip(),
        waits_on=KEEP if waits_on is None else waits_on.strip(),
        blocked_by=KEEP if blocked_by is None else api.split_list(blocked_by), effective_at=when,
    )
    emit(reply, write_reply)
    if reply.get("warning"):
        from kyb_cli.cli.output import note, wants_json

        if wants_json():  # on a terminal the reply view shows it already
            note(f"warning: {key}: {reply['warning']}")
