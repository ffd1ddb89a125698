"""`kyb recall TEXT`: what the store holds that bears on TEXT, only when sure; `--hook-json` for a
prompt hook (Claude Code / Codex UserPromptSubmit, Gemini CLI BeforeAgent).

In hook mode it never stands in the way: any problem (bad or empty stdin, no store, a busy index,
past the time budget, a bug) prints nothing on stdout, one `kyb recall: …` line on stderr, exit 0.
"""

from __future__ import annotations

import sys
from typing import Any


from kyb_cli.cli.common import CliDoor, common_options, quiet_on_usage_errors
from kyb_cli.cli.options import table_command, table_fields, table_options
from kyb_cli.cli.output import emit


def _quiet(reason: str) -> None:
    reason = " ".join(str(reason).split())[:300]
    sys.stderr.write(f"kyb recall: nothing added ({reason})\n")


HookSafe = quiet_on_usage_errors(lambda _hook, message: _quiet(message), hook_only=True)


@table_command("recall", cls=HookSafe)
@table_options("recall", overrides={"text": {"nargs": -1}})
@common_options
def recall_cmd(**given: Any) -> None:
    """--hook-json reads the hook's JSON ({"prompt", "session_id", "hook_event_name", …}) on stdin and
    prints the hook answer with the records as additionalContext, or nothing. By words only, within
    250 ms (KYB_RECALL_BUDGET_MS): a cold process has no time to load a model; and above a higher bar
    than strong (the top hit holds 60 % of the prompt's word weight and clearly leads), since it
    speaks unasked. A record (key and
    version) is added once per session, and at most 8 kB per session. Always exits 0.
    """
    from kyb_cli import api

    fields = table_fields("recall", given)
    if fields.pop("hook_json"):
        _hook(CliDoor().store_arg)
        return
    fields["text"] = " ".join(fields["text"])
    emit(api.handle("recall", CliDoor(), fields), recall_view)


def _hook(store: str | None) -> None:
    from kyb_cli import api

    try:
        raw = sys.stdin.read() if not sys.stdin.isatty() else ""
        answer = api.recall_hook(raw, store)
    except Exception as exc:  # noqa: BLE001 — a prompt must never fail because of kyb
        _quiet(getattr(exc, "message", None) or str(exc) or type(exc).__name__)
        return
    if answer:
        sys.stdout.write(answer + "\n")


def recall_view(c: Any, d: dict[str, Any]) -> None:
    if not d["hits"]:
        c.print("[dim]nothing stored bears on this for sure[/dim]")
        return
    for h in d["hits"]:
        marks = " [yellow](stale)[/yellow]" if h["stale"] else ""
        marks += " [green](verified)[/green]" if (h.get("verified") or {}).get("current") else ""
        c.print(f"[bold]{h['key']}[/bold]  {h['title']}  [dim]{(h['sha'] or '')[:10]} {h['state']}[/dim]{marks}",
                markup=True, highlight=False)
        if h["snippet"]:
            c.print(f"  {h['snippet']}", markup=False, highlight=False)
