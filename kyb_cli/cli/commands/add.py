"""`kyb add`: write knowledge under a stable key (an upsert; identical writes make no commit)."""

from __future__ import annotations

import click

from kyb_cli.cli.common import attribution, body_options, common_options, open_store, read_body
from kyb_cli.cli.options import table_options
from kyb_cli.cli.output import emit
from kyb_cli.cli.render import write_reply
from kyb_cli.api.operations import example


@click.command("add", epilog=example("add"))
@table_options("add", skip=("body",))
@body_options
@common_options
def add_cmd(key: str, title: str, tags: list[str], refs: list[str], effective_at: str | None, review_by: str | None,
            body: str | None, body_file: str | None) -> None:
    """Write knowledge KEY; the body comes from stdin, --body or --file.

    Writing the same key again adds a version (`updated`); an identical write changes nothing.
    An empty body (stdin, a file or `--body ''`) is refused (exit 2): knowledge is its text.
    A create lists `similar` keys (and `revived` for a retracted key); an update lists
    `retired_elsewhere`: other records still holding wording this update removed.
    """
    from kyb_cli import api

    when = api.event_time(effective_at)
    text = read_body(body, body_file)
    if not text.strip():  # `kyb add … </dev/null` or `--body ''`: a forgotten text, not a record
        api.check_knowledge_key(key, title)  # a bad key or title is still the first thing said

        where = ("--body" if body is not None else
                 "the body on stdin" if body_file in (None, "-") else f"--file {body_file}")
        raise api.UsageError(f"{where} is empty: nothing was written — knowledge is its text; give it on stdin, "
                             "with --body TEXT or --file PATH")
    store = open_store()
    result = api.add_knowledge(store, key=key, title=title, body=text, tags=tags,
                               refs=refs, attribution=attribution(), effective_at=when,
                               review_by=review_by)
    reply = result.to_json()
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
