"""`kyb get KEY [--at REV]`: a record now, or as it stood at any revision Git can resolve."""

from __future__ import annotations

from pathlib import Path

import click

from kyb_cli.cli.common import common_options, open_store, store_location
from kyb_cli.cli.deadlines_block import deadline_options, print_deadlines_block
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import record_view
from kyb_cli.cli.waiting import wait_options


def read_store_path() -> Path:
    """The store to read, as a path (reads go through the index, without pygit2 on the usual path).

    The default store is created on first use, as `open_store()` does; any other missing or broken
    store is reported by the Git walk the reads fall back to, with its usual message."""
    location = store_location()
    if location.is_default and not (location.path / ".git").exists():
        return open_store().path
    return location.path


@click.command("get")
@click.argument("key")
@click.option("--at", "at", metavar="REV", help="A revision: sha, short sha, HEAD~2, tag, branch.")
@wait_options
@deadline_options
@common_options
def get_cmd(key: str, at: str | None) -> None:
    """Show record KEY with its state, version sha and commit time."""
    from kyb_cli.core.index.reads import read

    path = read_store_path()
    version = read(path, key, at=at)
    emit(version.to_json(), record_view)
    print_deadlines_block(path)
