"""`kyb rules`: the store's standing instructions for agents (live knowledge tagged `rule`)."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command


@table_command("rules")
@common_options
def rules_cmd() -> None:
    """Write one with `kyb add --key ... --tags rule`."""
    from kyb_cli import api

    emit(api.handle("rules", CliDoor(), {}), rules_view)


def rules_view(c, d) -> None:
    if not d["rules"]:
        c.print("[dim]no rules (knowledge tagged `rule`)[/dim]")
        return
    for r in d["rules"]:
        c.print(f"[bold]{r['key']}[/bold]  {r['title']}")
        if r["body"]:
            c.print(r["body"])
        c.print()
