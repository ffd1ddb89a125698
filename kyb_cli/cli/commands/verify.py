"""`kyb verify KEY --source TEXT [--rev REV] [--note TEXT]`: record that knowledge was checked."""

from __future__ import annotations

import click

from kyb_cli.cli.common import attribution, common_options, open_store
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply


@click.command("verify")
@click.argument("key")
@click.option("--source", required=True, help="What the fact was checked against: a file, URL, command, person.")
@click.option("--rev", default="", metavar="REV", help="The source's revision checked (a commit, version, date).")
@click.option("--note", default="", help="How it was checked, in a line.")
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
