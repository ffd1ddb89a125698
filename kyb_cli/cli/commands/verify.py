"""`kyb verify KEY --source TEXT [--rev REV] [--note TEXT]`: record that knowledge was checked."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_command, table_fields, table_options


@table_command("verify")
@table_options("verify")
@common_options
def verify_cmd(**given) -> None:
    from kyb_cli import api

    emit(api.handle("verify", CliDoor(), table_fields("verify", given)), write_reply)
