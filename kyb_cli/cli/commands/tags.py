"""`kyb tags`: tags of live records with counts."""

from __future__ import annotations

import click

from kyb_cli.cli.common import CliDoor, common_options, fields_option
from kyb_cli.cli.output import emit
from kyb_cli.api.operations import example


@click.command("tags", epilog=example("tags"))
@fields_option
@common_options
def tags_cmd() -> None:
    """Tags of live records, lowercased, most used first."""
    from kyb_cli import api


    def human(c, d):
        from rich.table import Table

        table = Table("tag", "count")
        for row in d["tags"]:
            table.add_row(row["tag"], str(row["count"]))
        c.print(table)

    emit(api.handle("tags", CliDoor(), {}), human)
