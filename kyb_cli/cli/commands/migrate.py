"""`kyb migrate`: move an old, flat store to the fanned-out layout now (the first write does it too)."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command, table_options


@table_command("migrate")
@table_options("migrate")
@common_options
def migrate_cmd() -> None:
    from kyb_cli import api

    emit(api.handle("migrate", CliDoor(), {}), migrate_view)


def migrate_view(c, d) -> None:
    """One readable line on a terminal (the JSON stays for pipes and --json)."""
    from kyb_cli.cli.render import plural

    if not d.get("changed"):
        c.print("already in the fanned-out layout: nothing moved")
        return
    c.print(f"[green]moved[/green] {plural(d['moved'], 'record file')} to the fanned-out layout "
            f"in one commit {str(d.get('sha') or '')[:12]}")
