"""`kyb remote [URL]`: show or set the store's remote `origin` (plain `git remote` works as well)."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.options import table_command, table_options


@table_command("remote")
@table_options("remote")
@common_options
def remote_cmd(url: str | None) -> None:
    from kyb_cli import api

    data = api.handle("remote", CliDoor(), {"url": url})
    emit(data, lambda c, d: c.print(f"{d['remote']}: {d['url'] or '[dim](none — kyb remote URL sets it)[/dim]'}"))
