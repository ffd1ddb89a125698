"""What the MCP tools share: the reader's day as a parameter type, and the helpers that
apply the CLI's rules (the deadlines block riding along)."""

from datetime import date
from typing import Any

from kyb_cli.api.operations import TODAY
from kyb_cli.mcp.params import annotation

Day = annotation(TODAY)  # the reader's day of the deadlines block: the table's `today`


def _with_deadlines(data: dict[str, Any], store_path, today: date) -> dict[str, Any]:
    """The deadlines block the CLI prints on stderr rides along as `deadlines` (api.with_deadlines)."""
    from kyb_cli import api

    return api.with_deadlines(data, store_path, today)
