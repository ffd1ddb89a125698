"""`kyb get KEY [--at REV]`: a record now, or as it stood at any revision Git can resolve."""

from __future__ import annotations

import click

from kyb_cli.cli.common import common_options, read_store_path
from kyb_cli.cli.deadlines_block import deadline_options, print_deadlines_block
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import record_view


@click.command("get")
@click.argument("key")
@click.option("--at", "at", metavar="REV", help="A revision: sha, short sha, HEAD~2, tag, branch.")
@deadline_options
@common_options
def get_cmd(key: str, at: str | None) -> None:
    """Show record KEY with its state, version sha and commit time."""
    from kyb_cli import api

    path = read_store_path()
    version = api.read(path, key, at=at)
    emit(version.to_json(), record_view)
    print_deadlines_block(path)
