"""`kyb stale [--days N] [--fail] [--today DATE]`: knowledge to check again."""

from __future__ import annotations

import sys

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import dumps, emit
from kyb_cli.cli.options import table_command, table_fields, table_options


@table_command("stale")
@table_options("stale")
@common_options
def stale_cmd(fail: bool, **given) -> None:
    """With --fail the exit status is 3 when anything is stale (CI); the list then goes to stderr."""
    from kyb_cli import api

    data = api.handle("stale", CliDoor(), table_fields("stale", given))
    if fail and data["count"] > 0:
        sys.stderr.write(dumps(data) + "\n")
        sys.stderr.flush()
        raise SystemExit(3)
    emit(data, stale_view)


def stale_view(c, d) -> None:
    if not d["stale"]:
        c.print(f"[green]nothing stale[/green] (older than {d['days']} days, as of {d['today']})")
        return
    for row in d["stale"]:
        c.print(f"[bold]{row['key']}[/bold]  {row['title']}  [yellow]{row['reason']}[/yellow]")
