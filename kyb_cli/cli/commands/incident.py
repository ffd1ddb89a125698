"""`kyb incident`: write an incident report (body on stdin); `--template` prints the skeleton."""

from __future__ import annotations

import click

from kyb_cli.cli.common import CliDoor, body_options, common_options, read_body
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_command, table_fields, table_options
from kyb_cli.api import UsageError

@table_command("incident")
@click.option("--template", is_flag=True, help="Print the report skeleton and exit.")
@table_options("incident", skip=("body",),  # required unless --template: the command says which are missing
               overrides={n: {"required": False} for n in ("key", "title", "service", "severity")})
@body_options
@common_options
def incident_cmd(template: bool, body: str | None, body_file: str | None, **given) -> None:
    from kyb_cli import api

    if template:
        click.echo(api.incident_template(), nl=False)
        return
    missing = [f"--{n}" for n in ("key", "title", "service", "severity") if given[n] is None]
    if missing:
        raise UsageError(f"incident: {', '.join(missing)} required (body comes from stdin; --template for a skeleton)")
    fields = {**table_fields("incident", given), "body": lambda: read_body(body, body_file)}
    reply = api.handle("incident", CliDoor(), fields)
    emit(reply, write_reply)
