"""`kyb add`: write knowledge under a stable key (an upsert; identical writes make no commit)."""

from __future__ import annotations

from kyb_cli.cli.common import CliDoor, body_options, common_options, read_body
from kyb_cli.cli.options import table_command, table_fields, table_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply


@table_command("add")
@table_options("add", skip=("body",))
@body_options
@common_options
def add_cmd(body: str | None, body_file: str | None, **given) -> None:
    """The body comes from stdin, --body or --file; an empty one (`--body ''`, an empty file) is refused."""
    from kyb_cli import api

    fields = {**table_fields("add", given), "body": lambda: read_body(body, body_file)}
    reply = api.handle("add", CliDoor(), fields)
    remarks(reply)
    emit(reply, write_reply)


def remarks(reply: dict) -> None:
    """One stderr line per other record that still holds retired wording, and for a revived key."""
    from kyb_cli.cli.output import note

    by_key: dict[str, list[str]] = {}
    for item in reply.get("retired_elsewhere") or []:
        by_key.setdefault(item["key"], []).append(item["phrase"])
    for other, phrases in by_key.items():
        quoted = ", ".join(f'"{p}"' for p in phrases)
        note(f"{other} still says {quoted}, which this update removed from {reply['key']}")
    if reply.get("revived"):
        note(reply.get("hint") or f"{reply['key']} was retracted before")
