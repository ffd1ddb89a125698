"""`kyb rm KEY --reason TEXT`: retract knowledge that was wrong (history keeps every version)."""

from __future__ import annotations

import click

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_fields, table_options
from kyb_cli.api.operations import example


@click.command("rm", epilog=example("rm"))
@table_options("rm")
@common_options
def rm_cmd(**given) -> None:
    """Retract knowledge KEY: it leaves current answers; `get --at` and history keep it."""
    from kyb_cli import api

    emit(api.handle("rm", CliDoor(), table_fields("rm", given)), write_reply)
