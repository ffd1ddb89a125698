"""`kyb mcp`: serve kyb's tools over the Model Context Protocol on stdio (the `mcp` extra)."""

from __future__ import annotations

import click

from kyb_cli.cli.common import common_options
from kyb_cli.cli.options import hand_example
from kyb_cli.api import KybError
from kyb_cli.api.operations import OPERATIONS


# kyb is installed from its repository (it is not on PyPI), so the hint names commands that work
# there; the SDK itself is the published `mcp` package.
MCP_MISSING = ("kyb mcp needs the MCP SDK (kyb's `mcp` extra): in a clone of the kyb repository run "
               "`pipx install --force '.[mcp]'` (or `./dev setup`), or add it to kyb's own environment "
               "with `python -m pip install 'mcp>=2.3,<3'`")


def _help() -> str:
    """The help text; the tool list comes from the operations table, so it cannot miss a tool."""
    tools = [op.tool for op in OPERATIONS.values() if "mcp" in op.doors]
    return f"""Serve kyb's tools to an agent over MCP on stdin/stdout, until the client hangs up.

    The tools: {", ".join(tools)}, and add_many (`kyb import`'s records as a list).

    It stops when stdin ends, or on SIGTERM, SIGHUP or SIGINT (Ctrl-C): a call in flight gets 3 s
    to finish, what the server kept to write later (the read log, new questions' vectors) is
    written, and it exits 0; a second signal stops it at once (what was kept is still written).

    The store is the one the CLI would use (--store, KYB_STORE, .kyb.toml, default), resolved on
    every call. Writes are attributed with transport `mcp`. Needs kyb's `mcp` extra (the MCP SDK):
    from a clone of the kyb repository, `pipx install --force '.[mcp]'` or `./dev setup`.
    """


@click.command("mcp", help=_help(), epilog=hand_example("kyb mcp --store ~/team-memory"))
@common_options
def mcp_cmd() -> None:
    try:
        import mcp.server.mcpserver  # noqa: F401
    except ImportError:
        raise KybError(MCP_MISSING) from None
    from kyb_cli.mcp.server import serve

    serve(click.get_current_context().meta.get("kyb.store"))
