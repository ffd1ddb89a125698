"""`kyb init [PATH]`: create a store explicitly (the default store is also created on first use)."""

from __future__ import annotations

from pathlib import Path

import click

from kyb_cli.cli.common import common_options, store_location
from kyb_cli.cli.output import emit


@click.command("init")
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@common_options
def init_cmd(path: Path | None) -> None:
    """Create a store at PATH (default: the store kyb would use here)."""
    from kyb_cli.core.store import init_store

    target = path.absolute() if path else store_location().path
    existed = (target / ".git").exists()
    store = init_store(target)
    data = {"store": str(store.path), "created": not existed, "head": store.head_sha()}
    emit(data, lambda c, d: c.print(
        f"{'Created' if d['created'] else 'Already a store:'} [bold]{d['store']}[/bold]"))
