"""`kyb sync`: fetch from the remote, integrate record by record, push (see kyb_cli.core.sync/)."""

from __future__ import annotations

import sys
from typing import Any

import click

from kyb_cli.cli.common import CliDoor, attribution, common_options, open_store
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command, table_options


def sync_view(c: Any, d: dict[str, Any]) -> None:
    if d["fast_forward"]:
        what = f"fast-forwarded ({d['incoming']} incoming)"
    elif d["merged"]:
        what = f"merged {d['incoming']} incoming commit(s)"
    else:
        what = "nothing incoming"
    pushed = "pushed" if d["pushed"] else "nothing to push"
    c.print(f"[bold green]synced[/bold green] with {d['remote']} ({d['url']}): {what}, {pushed}; "
            f"head [dim]{(d['head'] or '')[:12]}[/dim]")
    held_out_view(c, d.get("held_out") or [])
    if not d["conflicts"]:
        return
    from rich.table import Table

    table = Table(title=f"{len(d['conflicts'])} conflict(s) to review", title_justify="left")
    for col in ("key", "type", "kept", "other"):
        table.add_column(col)
    for cf in d["conflicts"]:
        table.add_row(cf["key"], cf["type"], f"{cf['kept'][:12]} ({cf['kept_side']})", cf["other"][:12])
    c.print(table)
    c.print("[dim]review: kyb history KEY; kyb get KEY --at OTHER; write the right version with kyb add[/dim]")


def held_out_view(c: Any, held: list[dict[str, str]]) -> None:
    """Which peer record files are held out and why (a terminal sees what the JSON says)."""
    if not held:
        return
    from rich.markup import escape

    c.print(f"[yellow]{len(held)} record file(s) held out[/yellow]: never served, listed on every sync "
            "while the remote's tip holds them — fix them there (or write the key again here)")
    for h in held:
        c.print(f"  {escape(h['path'])}: {escape(h['reason'])} [dim](commit {h.get('commit', '')[:12]})[/dim]")


@table_command("sync")
@table_options("sync")
@click.option("--background", is_flag=True, hidden=True, help="Run as the detached automatic sync (logs only).")
@common_options
def sync_cmd(background: bool) -> None:
    from kyb_cli import api

    store = open_store()
    if background:
        api.background_sync(store, attribution("auto-sync"))
        return
    door = CliDoor()
    if sys.stderr.isatty():
        from kyb_cli.cli.output import console

        with console(stderr=True).status("syncing") as status:
            door.progress = status.update
            result = api.handle("sync", door, {})
    else:
        result = api.handle("sync", door, {})
    emit(result, sync_view)
