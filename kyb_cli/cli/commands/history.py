"""`kyb history KEY`: every version of a key, newest first, with who wrote it."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options, fields_option
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import history_view
from kyb_cli.cli.waiting import wait_options
from kyb_cli.cli.options import table_command, table_fields, table_options


@table_command("history")
@table_options("history")
@wait_options
@fields_option
@common_options
def history_cmd(**given) -> None:
    from kyb_cli import api

    emit(api.handle("history", CliDoor(), table_fields("history", given)), history_view)
