"""`kyb rm KEY --reason TEXT`: retract knowledge that was wrong (history keeps every version)."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_command, table_fields, table_options


@table_command("rm")
@table_options("rm")
@common_options
def rm_cmd(**given) -> None:
    from kyb_cli import api

    emit(api.handle("rm", CliDoor(), table_fields("rm", given)), write_reply)
