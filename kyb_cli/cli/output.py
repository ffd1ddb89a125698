"""How answers reach people and programs: JSON on pipes (or --json), rich on a terminal.

rich is imported only when a human is looking, so piped and agent calls stay fast. Colours are off
with NO_COLOR. Errors are one line on stderr; stdout carries only a successful answer.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable

import click

from kyb_cli.api import KybError
from kyb_cli.cli.consoles import console  # noqa: F401 - re-exported: commands print through output.console


def wants_json() -> bool:
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.meta.get("kyb.json"):
        return True
    if os.environ.get("KYB_OUTPUT") == "json":
        return True
    try:
        return not sys.stdout.isatty()
    except (AttributeError, ValueError):
        return True


def dumps(data: Any) -> str:
    from kyb_cli.api import answer_text

    return answer_text(data)


def emit(data: Any, human: Callable[[Any, Any], None] | None = None) -> None:
    """Print a successful answer: one JSON document, or `human(console, data)` on a terminal.

    With `--fields a,b` the rows of the answer keep only those fields, and a terminal shows them as
    the table's columns (agents pay for every token). An answer from an index whose history is still being read says
    `"history_complete": false`."""
    from kyb_cli import api

    data = api.with_history_flag(data)
    ctx = click.get_current_context(silent=True)
    fields = ctx.meta.get("kyb.fields") if ctx is not None else None
    if fields:
        data, rows_key, names = shape(data, fields)
        if human is not None:
            human = lambda c, d: fields_view(c, d, rows_key, names)  # noqa: E731
    if wants_json() or human is None:
        if wants_json():
            sys.stdout.write(dumps(data) + "\n")
        else:
            console().print_json(dumps(data))
        sys.stdout.flush()
        return
    from kyb_cli.cli.render import terminal_safe

    human(console(), terminal_safe(data))


def print_error(exc: KybError) -> None:
    """One `kyb:` line; a refused sync or clone (refuse-unsafe) adds one JSON line naming each
    commit, path and reason, so a script or an agent can act on it without parsing prose."""
    from kyb_cli.api import spelled
    from kyb_cli.cli.render import terminal_text

    sys.stderr.write(f"kyb: {terminal_text(spelled(exc, 'cli'))}\n")
    refused = exc.details.get("refused") if isinstance(exc.details, dict) else None
    if refused:
        import json

        sys.stderr.write(json.dumps({"refused": refused}, ensure_ascii=False) + "\n")
    sys.stderr.flush()


def note(message: str) -> None:
    """A one-line remark on stderr that does not change the answer (fallbacks, hints)."""
    sys.stderr.write(f"kyb: {message}\n")
    sys.stderr.flush()


def shape(data: Any, fields: str) -> tuple[Any, str | None, list[str]]:
    """`data` with every list of rows cut down to `fields` (comma-separated, in that order).

    A name no row has is a usage error that lists the names the rows do have."""
    from kyb_cli.api import UsageError

    names = [f.strip() for f in fields.split(",") if f.strip()]
    if not names:
        raise UsageError("--fields needs at least one field name, e.g. --fields key,title")
    if not isinstance(data, dict):
        return data, None, names
    rows_key = next((k for k, v in data.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)),
                    None)
    if rows_key is None:
        rows_key = next((k for k, v in data.items() if isinstance(v, list)), None)
    if rows_key is None:
        return {k: v for k, v in data.items() if k in names}, None, names
    rows = data[rows_key]
    known: list[str] = []
    for row in rows:
        known += [k for k in row if k not in known]
    unknown = [n for n in names if rows and n not in known]
    if unknown:
        raise UsageError(f"--fields: no field '{unknown[0]}' in these rows; they have: {', '.join(known)}")
    out = dict(data)
    out[rows_key] = [{n: row.get(n) for n in names if n in row} for row in rows]
    return out, rows_key, names


def fields_view(c: Any, d: dict[str, Any], rows_key: str | None, names: list[str]) -> None:
    """The rows as a table whose columns are exactly the --fields asked for."""
    from rich.table import Table

    rows = d.get(rows_key, []) if rows_key else []
    table = Table(*names, title=f"{len(rows)} row(s)")
    for row in rows:
        table.add_row(*("" if row.get(n) is None else (", ".join(map(str, row[n])) if isinstance(row[n], list)
                                                       else str(row[n])) for n in names))
    c.print(table)
