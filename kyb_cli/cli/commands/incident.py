"""`kyb incident`: write an incident report (body on stdin); `--template` prints the skeleton."""

from __future__ import annotations

import click

from kyb_cli.cli.common import attribution, body_options, common_options, open_store, read_body
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.api import UsageError

@click.command("incident")
@click.option("--template", is_flag=True, help="Print the report skeleton and exit.")
@click.option("--key", help="inc-<yyyy-mm-dd>-<slug>.")
@click.option("--title", help="What happened, in one line.")
@click.option("--service", help="What broke (required).")
@click.option("--severity", help="low|medium|high|critical (required).")
@click.option("--hosts", default="", help="Comma-separated hosts.")
@click.option("--status", default="open", show_default=True, help="open|mitigated|resolved.")
@click.option("--knowledge", default="", help="Comma-separated knowledge keys this relates to.")
@click.option("--resolution", default="", help="What fixed it (needed for resolved).")
@click.option("--detection", default="", help="An executable 'is it still happening?' check and its healthy result.")
@click.option("--affected", default=None, help='JSON array of {"scope","from","to"} windows.')
@click.option("--started", default="", help="When it started (RFC 3339).")
@click.option("--detected", default="", help="When it was detected (default: now).")
@click.option("--tags", default=None, help="Comma-separated tags; omitted keeps the stored ones, '' clears.")
@click.option("--refs", default="", help="Comma-separated pointers.")
@click.option("--effective-at", "effective_at", default=None, metavar="TIME",
              help="When this became true in the world (date or datetime); default: when written.")
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
    split_list = api.split_list

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
        status=status, hosts=split_list(hosts), knowledge=split_list(knowledge), resolution=resolution,
        detection=detection, affected=windows, started_at=started, detected_at=detected,
        tags=KEEP if tags is None else split_list(tags), refs=split_list(refs), effective_at=when,
    )
    emit(reply, write_reply)
