"""`kyb mcp`: serve kyb's tools over the Model Context Protocol on stdio (the `mcp` extra)."""

from __future__ import annotations

import click

from kyb_cli.cli.common import common_options
from kyb_cli.api import KybError


@click.command("mcp")
@common_options
def mcp_cmd() -> None:
    """Serve query, get, history, add, retract, incident, resolve, task, task_status, done, tasks,
    incidents, export, context and deadlines over MCP on stdin/stdout, until the client hangs up.

    The store is the one the CLI would use (--store, KYB_STORE, .kyb.toml, default), resolved on
    every call. Writes are attributed with transport `mcp`. Needs `pip install kyb-cli[mcp]`.
    """
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise KybError("kyb mcp needs the MCP SDK: install kyb-cli[mcp] (pip install 'kyb-cli[mcp]')") from None
    from kyb_cli.mcp.server import serve

    serve(click.get_current_context().meta.get("kyb.store"))
