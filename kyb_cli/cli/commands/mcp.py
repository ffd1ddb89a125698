"""`kyb mcp`: serve kyb's tools over the Model Context Protocol on stdio (the `mcp` extra)."""

from __future__ import annotations

import click

from kyb_cli.cli.common import common_options
from kyb_cli.cli.options import hand_example
from kyb_cli.api import KybError


# kyb is installed from its repository (it is not on PyPI), so the hint names commands that work
# there; the SDK itself is the published `mcp` package.
MCP_MISSING = ("kyb mcp needs the MCP SDK (kyb's `mcp` extra): in a clone of the kyb repository run "
               "`pipx install --force '.[mcp]'` (or `./dev setup`), or add it to kyb's own environment "
               "with `python -m pip install 'mcp>=2.3,<3'`")


@click.command("mcp", epilog=hand_example("kyb mcp --store ~/team-memory"))
@common_options
def mcp_cmd() -> None:
    """Serve query, get, history, add, retract, incident, resolve, task, task_status, done, tasks,
    incidents, export, context, deadlines and diff over MCP on stdin/stdout, until the client hangs up.

    The store is the one the CLI would use (--store, KYB_STORE, .kyb.toml, default), resolved on
    every call. Writes are attributed with transport `mcp`. Needs kyb's `mcp` extra (the MCP SDK):
    from a clone of the kyb repository, `pipx install --force '.[mcp]'` or `./dev setup`.
    """
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise KybError(MCP_MISSING) from None
    from kyb_cli.mcp.server import serve

    serve(click.get_current_context().meta.get("kyb.store"))
