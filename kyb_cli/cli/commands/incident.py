"""`kyb incident`: write an incident report (body on stdin); `--template` prints the skeleton."""

from __future__ import annotations

import click

from kyb_cli.cli.common import attribution, body_options, common_options, open_store, read_body
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.cli.options import table_options
from kyb_cli.api.operations import example
from kyb_cli.api import UsageError

@click.command("incident", epilog=example("incident"))
@click.option("--template", is_flag=True, help="Print the report skeleton and exit.")
@table_options("incident", skip=("body",),  # required unless --template: the command says which are missing
               overrides={n: {"required": False} for n in ("key", "title", "service", "severity")})
@body_options
@common_options
def incident_cmd(template: bool, key, title, service, severity, hosts, status, knowledge, resolution,
                 detection, affected, started, detected, tags, refs, effective_at, body, body_file) -> None:
    """Write incident report KEY (a rewrite replaces it; tags are kept unless given).

    The reply's `hints` say what a good report still lacks; they never block the write.
    A resolved report is archived: it leaves the tree, its final version stays findable.
    """
    from kyb_cli import api

    KEEP = api.keep()

    if template:
        click.echo(api.incident_template(), nl=False)
        return
    missing = [f"--{n}" for n, v in (("key", key), ("title", title), ("service", service),
                                     ("severity", severity)) if v is None]
    if missing:
        raise UsageError(f"incident: {', '.join(missing)} required (body comes from stdin; --template for a skeleton)")
    windows = api.parse_affected(affected)
    when = api.event_time(effective_at)
    text = read_body(body, body_file)
    store = open_store()
    reply = api.write_incident(
        store, attribution(), key=key, title=title, body=text, service=service, severity=severity,
        status=status, hosts=hosts, knowledge=knowledge, resolution=resolution,
        detection=detection, affected=windows, started_at=started, detected_at=detected,
        tags=KEEP if tags is None else tags, refs=refs, effective_at=when,
    )
    emit(reply, write_reply)
