"""`kyb verify KEY --source TEXT [--rev REV] [--note TEXT]`: record that knowledge was checked."""

from __future__ import annotations

import click

from kyb_cli.cli.common import attribution, common_options, open_store
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_options
from kyb_cli.api.operations import example


@click.command("verify", epilog=example("verify"))
@table_options("verify")
@common_options
def verify_cmd(key: str, source: str, rev: str, note: str) -> None:
    """Record that knowledge KEY was checked: one commit `kyb: verify KEY`.

    Who and when are the commit's attribution and time. `kyb get` and query hits then carry
    `verified` (by, at, source, rev, note, sha, current); `current` turns false once the title or
    body change.
    """
    from kyb_cli import api

    store = open_store()
    result = api.verify(store, key, source=source, rev=rev, note=note, attribution=attribution())
    emit(result.to_json(), write_reply)
