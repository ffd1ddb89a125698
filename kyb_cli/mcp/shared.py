"""What the MCP tools share: the reader's day as a parameter type, and the helpers that
apply the CLI's rules (the deadlines block riding along)."""

from datetime import date
from typing import Any

from kyb_cli.api.operations import TODAY
from kyb_cli.mcp.params import annotation

Day = annotation(TODAY)  # the reader's day of the deadlines block: the table's `today`


def _with_deadlines(data: dict[str, Any], store_path, today: date) -> dict[str, Any]:
    """The deadlines block the CLI prints on stderr rides along as `deadlines` when it has items."""
    try:
        from kyb_cli import api

        if api.deadlines_switched_off():
            return data
        found = api.deadlines_block(store_path, today)
    except Exception:  # noqa: BLE001 — the answer stands without the block, as on the CLI
        return data
    if found["tasks"]:
        data["deadlines"] = found
    return data
