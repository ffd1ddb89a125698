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
    return json.dumps(data, ensure_ascii=False)


def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, no_color=bool(os.environ.get("NO_COLOR")), highlight=False)


def emit(data: Any, human: Callable[[Any, Any], None] | None = None) -> None:
    """Print a successful answer: one JSON document, or `human(console, data)` on a terminal."""
    if wants_json() or human is None:
        if wants_json():
            sys.stdout.write(dumps(data) + "\n")
        else:
            console().print_json(dumps(data))
        sys.stdout.flush()
        return
    human(console(), data)


def print_error(exc: KybError) -> None:
    sys.stderr.write(f"kyb: {exc.message}\n")
    sys.stderr.flush()


def note(message: str) -> None:
    """A one-line remark on stderr that does not change the answer (fallbacks, hints)."""
    sys.stderr.write(f"kyb: {message}\n")
    sys.stderr.flush()
