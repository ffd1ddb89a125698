"""`kyb deadlines [--fail-on overdue|hard|none]`: every overdue or soon-due open task; a CI gate."""

from __future__ import annotations

import click

from kyb_cli.cli.common import LocatedDoor, common_options, store_location
from kyb_cli.cli.deadlines_block import given_today, today_option
from kyb_cli.cli.output import console, dumps, emit, note
from kyb_cli.cli.options import table_command, table_options
from kyb_cli import api


def deadlines_view(c, d) -> None:
    if not d["deadlines"]:
        c.print(f"[green]nothing overdue or due soon[/green] (today {d['today']})")
        return
    for item in d["deadlines"]:
        style = "red" if item["overdue"] else "yellow"
        hard = "[bold]HARD[/bold] " if item["hard"] else ""
        waits = f" — waits on {item['waits_on']}" if item.get("waits_on") else ""
        c.print(f"{hard}[{style}]{api.describe(item)}[/{style}]  {item['key']}  {item['title']}{waits}")


@table_command("deadlines")
@table_options("deadlines", skip=("today",))
@today_option
@common_options
def deadlines_cmd(fail_on: str) -> None:
    """With --fail-on the exit status is 3 when the condition holds, for CI and pre-commit hooks; the list
    then goes to stderr and stdout stays empty, as on every failure."""

    location = store_location()
    if not (location.is_default and not location.path.exists()):  # a gate must not pass on a wrong path
        api.git_dir(location.path)  # StoreError (exit 4) when it is not a store; no pygit2 needed
    data = api.handle("deadlines", LocatedDoor(), {"today": given_today(), "fail_on": fail_on})
    bad = api.failing(data["deadlines"], fail_on)
    if not bad:
        emit(data, deadlines_view)
        return
    # The gate failed: like every failure, stdout stays empty; the list goes to stderr for the CI log.
    import sys

    if sys.stderr.isatty():
        deadlines_view(console(stderr=True), data)
    else:
        sys.stderr.write(dumps(data) + "\n")
    what = "overdue task(s)" if fail_on == "overdue" else "overdue hard deadline(s)"
    note(f"{len(bad)} {what}: {', '.join(i['key'] for i in bad)} (--fail-on {fail_on})")
    click.get_current_context().exit(3)
