"""`kyb context`: the session-start digest; `--hook-json` for a Claude Code SessionStart hook.

It never fails a session: whatever goes wrong (no store, a broken index, a bug) ends in exit 0 and a
short note — inside valid hook JSON in hook mode, on stderr otherwise.
"""

from __future__ import annotations

import sys

import click

from kyb_cli.cli.common import common_options, store_location
from kyb_cli.cli.deadlines_block import reader_today, today_option


@click.command("context")
@click.option("--brief", is_flag=True, help="About 50 tokens: counts, open incidents, overdue tasks, top tags.")
@click.option("--hook-json", "hook", is_flag=True,
              help="Print the JSON a Claude Code SessionStart hook expects (additionalContext).")
@click.option("--days", type=click.IntRange(0, 3650), default=7, show_default=True,
              help="How far back 'changed recently' reaches.")
@today_option
@common_options
def context_cmd(brief: bool, hook: bool, days: int) -> None:
    """A short digest of the store for the start of a session: what changed recently, open
    incidents, deadlines, the most used tags and counts. Records are framed as reference data
    (possibly stale, to be verified), never as instructions. Always exits 0."""
    from kyb_cli.core import context as ctx

    try:
        data = ctx.gather(store_location().path, days=days, today=reader_today())
        text = ctx.render_brief(data) if brief else ctx.render(data)
    except Exception as exc:  # noqa: BLE001 — a session start must never fail because of kyb
        note = ctx.unavailable(getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}")
        if hook:
            sys.stdout.write(ctx.hook_json(f"kyb {note}") + "\n")
        else:
            sys.stderr.write(f"kyb: {note}\n")
        return
    if hook:
        sys.stdout.write(ctx.hook_json(text) + "\n")
        return
    from kyb_cli.cli.output import emit

    emit({"text": text, "brief": brief, "digest": data}, lambda c, d: c.print(d["text"], markup=False,
                                                                            highlight=False, end=""))
