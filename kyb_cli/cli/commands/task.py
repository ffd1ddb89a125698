"""`kyb task`: write a task (body on stdin), with ownership, parent and deadline fields."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, body_options, common_options, read_body
from kyb_cli.cli.options import table_command, table_fields, table_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply


@table_command("task")
@table_options("task", skip=("body",))
@body_options
@common_options
def task_cmd(body: str | None, body_file: str | None, **given) -> None:
    from kyb_cli import api

    fields = {**table_fields("task", given), "body": lambda: read_body(body, body_file)}
    reply = api.handle("task", CliDoor(), fields)
    emit(reply, write_reply)
    if reply.get("warning"):
        from kyb_cli.cli.output import note, wants_json

        if wants_json():  # on a terminal the reply view shows it already
            note(f"warning: {given['key']}: {reply['warning']}")
