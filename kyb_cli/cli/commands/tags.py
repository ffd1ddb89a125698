"""`kyb tags`: tags of live records with counts."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options, fields_option
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command


@table_command("tags")
@fields_option
@common_options
def tags_cmd() -> None:
    from kyb_cli import api


    def human(c, d):
        from rich.table import Table

        table = Table("tag", "count")
        for row in d["tags"]:
            table.add_row(row["tag"], str(row["count"]))
        c.print(table)

    emit(api.handle("tags", CliDoor(), {}), human)
