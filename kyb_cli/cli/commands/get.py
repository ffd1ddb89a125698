"""`kyb get KEY [--at REV | --version N]`: a record now, at any revision Git can resolve, or by version number."""

from __future__ import annotations

import click

from kyb_cli.cli.common import common_options, read_store_path
from kyb_cli.cli.deadlines_block import deadline_options, print_deadlines_block
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import record_view
from kyb_cli.cli.waiting import wait_options
from kyb_cli.cli.options import table_options
from kyb_cli.api.operations import example


@click.command("get", epilog=example("get"))
@table_options("get")
@wait_options
@deadline_options
@common_options
def get_cmd(key: str, at: str | None, version: int | None) -> None:
    """Show record KEY with its state, version sha and commit time."""
    from kyb_cli import api

    path = read_store_path()
    found = api.read(path, key, at=at, version=version)
    emit(found.to_json(), record_view)
    print_deadlines_block(path)
