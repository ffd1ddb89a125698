"""`kyb init [PATH]`: create a store explicitly (the default store is also created on first use)."""

from __future__ import annotations

from pathlib import Path

import click

from kyb_cli.cli.common import common_options, store_location
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import hand_example


@click.command("init", epilog=hand_example("kyb init --clone git@example.org:team/memory.git"))
@click.argument("path", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("--clone", "clone_url", metavar="URL", help="Make the store a clone of a shared Git remote.")
@common_options
def init_cmd(path: Path | None, clone_url: str | None) -> None:
    """Create a store at PATH (default: the store kyb would use here), or clone one with --clone URL."""
    from kyb_cli import api

    target = path.absolute() if path else store_location().path
    if clone_url:
        store = api.clone(clone_url, target)
        data = {"store": str(store.path), "created": True, "cloned_from": clone_url, "head": store.head_sha(),
                **getattr(store, "clone_report", {"held_out": [], "clamped": []})}
        emit(data, _cloned_view)
        return
    existed = (target / ".git").exists()
    store = api.init_store(target)
    data = {"store": str(store.path), "created": not existed, "head": store.head_sha()}
    emit(data, lambda c, d: c.print(
        f"{'Created' if d['created'] else 'Already a store:'} [bold]{d['store']}[/bold]"))


def _cloned_view(c, d: dict) -> None:
    from rich.markup import escape

    from kyb_cli.cli.commands.sync import held_out_view

    c.print(f"Cloned [bold]{escape(d['cloned_from'])}[/bold] into [bold]{escape(d['store'])}[/bold]")
    held_out_view(c, d.get("held_out") or [])
