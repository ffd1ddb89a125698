"""`kyb context`: the session-start digest; `--hook-json` for a Claude Code SessionStart hook.

It never fails a session: whatever goes wrong (no store, a broken index, a bug) ends in exit 0 and a
short note — inside valid hook JSON in hook mode, on stderr otherwise.
"""

from __future__ import annotations

import sys


from kyb_cli.cli.common import LocatedDoor, common_options, quiet_on_usage_errors
from kyb_cli.cli.deadlines_block import given_today, today_option
from kyb_cli.cli.options import table_command, table_options


def _give_note(hook: bool, reason: str) -> None:
    """The short note that replaces the digest: inside valid hook JSON in hook mode, else on stderr."""
    from kyb_cli import api

    note = api.context_unavailable(reason)
    if hook:
        sys.stdout.write(api.context_hook_json(f"kyb {note}") + "\n")
    else:
        sys.stderr.write(f"kyb: {note}\n")


NeverFails = quiet_on_usage_errors(lambda hook, message: _give_note(hook, message), hook_only=False)


@table_command("context", cls=NeverFails)
@table_options("context", skip=("today",))
@today_option
@common_options
def context_cmd(brief: bool, hook: bool, days: int) -> None:
    """Always exits 0."""
    from kyb_cli import api

    try:
        reply = api.handle("context", LocatedDoor(), {"brief": brief, "days": days, "today": given_today()})
        text = reply["text"]
    except Exception as exc:  # noqa: BLE001 — a session start must never fail because of kyb
        _give_note(hook, getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}")
        return
    if hook:
        sys.stdout.write(api.context_hook_json(text) + "\n")
        return
    from kyb_cli.cli.output import emit

    emit(reply, lambda c, d: c.print(d["text"].rstrip("\n"), markup=False,
                                                                            highlight=False))
