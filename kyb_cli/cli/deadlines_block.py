"""The deadlines block on stderr after successful `query`, `get`, `tasks` and `incidents`.

Commands add `@deadline_options` (`--today DATE`, `--no-deadlines`) and call
`print_deadlines_block(store)` after they emitted their answer; the options travel in click's context
meta, so the call needs nothing but the store (a Store or the store's path). Off with
`--no-deadlines` or KYB_DEADLINES=off. It must never fail the command: any error is swallowed here,
so a missing block does not prove there are no commitments.
"""

from __future__ import annotations

import json
import sys
try:  # datetime's C half, not datetime.py (~1.2 ms of a `kyb query`: core/timestamps.py says why)
    from _datetime import date
except ImportError:
    from datetime import date

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any, Callable

TODAY_META = "kyb.today"
OFF_META = "kyb.no_deadlines"


def _parse_today(ctx, _param, value: str | None) -> str | None:
    if value is None:
        return None
    from kyb_cli import api

    api.today_arg(value)  # the core's check and message (`--today wants a date YYYY-MM-DD`)
    ctx.meta[TODAY_META] = value
    return value


def today_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--today DATE`, the table's `today` field, kept in click's meta for the block and the handlers."""
    from kyb_cli.api.operations import TODAY
    from kyb_cli.cli.options import make_param

    return make_param(TODAY, expose_value=False, callback=_parse_today)(func)


def deadline_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--today DATE` and `--no-deadlines` for commands that print the block."""
    import click

    from kyb_cli.cli.common import meta_callback

    func = click.option("--no-deadlines", is_flag=True, expose_value=False, callback=meta_callback(OFF_META),
                        help="Do not print the deadlines block on stderr (also KYB_DEADLINES=off).")(func)
    return today_option(func)


def _meta() -> dict:
    """Click's context meta when a Click command runs; {} on the fast path (cli/fast.py)."""
    click = sys.modules.get("click")
    ctx = click.get_current_context(silent=True) if click is not None else None
    return ctx.meta if ctx is not None else {}


def given_today() -> str | None:
    """`--today` as given (checked by its callback), for a table handler; None: the local date."""
    return _meta().get(TODAY_META)


def reader_today(today: str | None = None) -> date:
    """`--today` if given, else the local date (the reader's calendar, not UTC)."""
    value = today or _meta().get(TODAY_META)
    return date.fromisoformat(value) if value else date.today()


def enabled(off: bool = False) -> bool:
    from kyb_cli import api

    if off or api.deadlines_switched_off():
        return False
    return not _meta().get(OFF_META)


def print_deadlines_block(store: Any, *, today: str | None = None, off: bool = False) -> None:
    """Print up to five overdue or soon-due open tasks to stderr; quiet when there are none.

    `today`/`off`: the fast path's --today/--no-deadlines (Click's go through its context)."""
    try:
        if not enabled(off):
            return
        from kyb_cli import api

        data = api.deadlines_block(store, reader_today(today))
        if not data["tasks"]:
            return
        sys.stderr.write(format_block(data, human=_stderr_is_terminal()))
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 — the main answer has already arrived; never fail it
        return


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def format_block(data: dict[str, Any], *, human: bool) -> str:
    """One JSON line `{"deadlines": …}` for programs; a few plain lines for people."""
    if not human:
        return json.dumps({"deadlines": data}, ensure_ascii=False) + "\n"
    from kyb_cli import api

    lines = [f"kyb: deadlines (today {data['today']}):"]
    for item in data["tasks"]:
        hard = "HARD " if item["hard"] else ""
        waits = f" — waits on {item['waits_on']}" if item.get("waits_on") else ""
        lines.append(f"  {hard}{api.describe(item)}  {item['key']}  {item['title']}{waits}")
    if data["more"]:
        lines.append(f"  … and {data['more']} more: kyb deadlines")
    return "\n".join(lines) + "\n"
