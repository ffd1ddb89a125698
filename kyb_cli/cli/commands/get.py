"""`kyb get KEY [--at REV | --version N]`: a record now, at any revision Git can resolve, or by version number."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.deadlines_block import deadline_options, print_deadlines_block
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import record_view
from kyb_cli.cli.waiting import wait_options
from kyb_cli.cli.options import table_command, table_fields, table_options


@table_command("get")
@table_options("get")
@wait_options
@deadline_options
@common_options
def get_cmd(**given) -> None:
    from kyb_cli import api

    door = CliDoor()
    emit(api.handle("get", door, table_fields("get", given)), record_view)
    print_deadlines_block(door.path())
