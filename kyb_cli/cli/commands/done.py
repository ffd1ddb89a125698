"""`kyb done KEY`: close a task as done (or dropped) with a resolution; closing archives it."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, common_options, read_resolution
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_command, table_options


@table_command("done")
@table_options("done", overrides={"resolution": {
    "default": None, "help": "What came of it, or why it was dropped; default: stdin when piped. Empty keeps the stored one."}})
@common_options
def done_cmd(key: str, status: str, resolution: str | None) -> None:
    """The resolution defaults to stdin when piped."""
    from kyb_cli import api

    fields = {"key": key, "status": status, "resolution": lambda: read_resolution(resolution, closing=True)}
    emit(api.handle("done", CliDoor(), fields), write_reply)
