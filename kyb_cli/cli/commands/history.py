"""`kyb history KEY`: every version of a key, newest first, with who wrote it."""

from __future__ import annotations

import click

from kyb_cli.cli.common import common_options, fields_option, read_store_path
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import history_view
from kyb_cli.cli.waiting import wait_options
from kyb_cli.cli.options import table_options
from kyb_cli.api.operations import example


@click.command("history", epilog=example("history"))
@table_options("history")
@wait_options
@fields_option
@common_options
def history_cmd(key: str) -> None:
    """Every change of KEY (added, modified, deleted), newest first."""
    from kyb_cli import api

    rows = api.history(read_store_path(), key)
    emit({"key": key, "versions": [r.to_json() for r in rows]}, history_view)
