"""`kyb resolve KEY`: close (or mitigate) an incident; closing archives it."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options, read_resolution
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_command, table_options


@table_command("resolve")
@table_options("resolve", overrides={"resolution": {
    "default": None, "help": "What fixed it; default: stdin when piped. Empty keeps the stored one."}})
@common_options
def resolve_cmd(key: str, status: str, resolution: str | None) -> None:
    """The resolution defaults to stdin when piped."""
    from kyb_cli import api

    fields = {"key": key, "status": status,
              "resolution": lambda: read_resolution(resolution, closing=status.strip() == "resolved")}
    emit(api.handle("resolve", CliDoor(), fields), write_reply)
