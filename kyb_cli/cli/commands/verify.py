"""`kyb verify KEY --source TEXT [--rev REV] [--note TEXT]`: record that knowledge was checked."""

from __future__ import annotations

import click

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_fields, table_options
from kyb_cli.api.operations import example


@click.command("verify", epilog=example("verify"))
@table_options("verify")
@common_options
def verify_cmd(**given) -> None:
    """Record that knowledge KEY was checked: one commit `kyb: verify KEY`.

    Who and when are the commit's attribution and time. `kyb get` and query hits then carry
    `verified` (by, at, source, rev, note, sha, current); `current` turns false once the title or
    body change.
    """
    from kyb_cli import api

    emit(api.handle("verify", CliDoor(), table_fields("verify", given)), write_reply)
