"""`kyb log`: the store's activity, newest first, with hand commits and merges labelled."""

from __future__ import annotations

import click

from kyb_cli.cli.common import common_options, fields_option, read_store_path
from kyb_cli.cli.output import emit


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


@click.command("log")
@click.option("--since", default=None, metavar="TIME", help="Only commits at or after TIME (date, datetime, revision).")
@click.option("--until", default=None, metavar="TIME", help="Only commits at or before TIME.")
@click.option("--agent", default="", help="Only commits whose Kyb-Agent is AGENT (any case).")
@click.option("--author", default="", help="Only commits whose author name or email contains AUTHOR.")
@click.option("--kind", default="", type=click.Choice(["", "knowledge", "incident", "task"]), metavar="KIND",
              help="Only commits touching records of this kind.")
@click.option("--key", default="", help="Only commits touching this record.")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(0, 1000), help="At most N commits.")
@fields_option
@common_options
def log_cmd(since, until, agent, author, kind, key, limit) -> None:
    """The store's activity, newest first: every commit, including hand commits and merges."""
    from kyb_cli import api

    rows = api.log(read_store_path(), since=since, until=until, agent=agent, author=author, kind=kind, key=key,
                   limit=limit)
    emit({"count": len(rows), "log": rows}, log_view)
