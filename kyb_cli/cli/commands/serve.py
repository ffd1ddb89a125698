"""`kyb serve`: the HTTP door — the API with the CLI's JSON, MCP at /mcp, the web console at /."""

from __future__ import annotations

import click

from kyb_cli.cli.common import common_options, open_store
from kyb_cli.cli.options import hand_example
from kyb_cli.api import KybError


@click.command("serve", epilog=hand_example("kyb serve --port 9310 --open"))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Beyond loopback a bearer token is required (KYB_SERVE_TOKEN, "
                   "else one is generated and printed once).")
@click.option("--port", type=click.IntRange(0, 65535), default=9310, show_default=True,
              help="Port to listen on (0: any free port; the ready line names it).")
@click.option("--readonly", is_flag=True, help="Refuse every write (403) and offer only read tools at /mcp.")
@click.option("--open", "open_browser", is_flag=True, help="Open the console in a browser once listening.")
@common_options
def serve_cmd(host: str, port: int, readonly: bool, open_browser: bool) -> None:
    """Serve the store over HTTP until SIGINT, SIGTERM or SIGHUP.

    \b
    /            the web console (deadlines, search in the four time modes, records,
                 history and diffs, incidents, tasks; actions)
    /openapi.json  the API: /search, /knowledge/{key}[/history|/diff], /tasks, /incidents, ...
    /mcp         MCP over streamable HTTP: the tools of `kyb mcp`
    Ready when stderr says `kyb: listening on http://HOST:PORT`. Errors are {"error": "..."} with
    status 404/400/422/503/502 for exit codes 1-5. Writes are commits with transport `http`; an
    audit line per request goes to .git/kyb/audit.jsonl. Requests must name this server in Host
    (localhost or the bound address); browser writes only from the console's own origin.
    Needs kyb's `mcp` extra (in a clone: pipx install --force '.[mcp]', or ./dev setup), which
    brings starlette and uvicorn.
    """
    from importlib.util import find_spec

    # Found, not imported: the MCP SDK is ~0.9 s of CPU, loaded by the first /mcp request (serve/mcp_http.py).
    if not all(find_spec(name) for name in ("mcp", "starlette", "uvicorn")):
        raise KybError("kyb serve needs kyb's `mcp` extra (starlette, uvicorn): in a clone of the kyb repository "
                       "run `pipx install --force '.[mcp]'` (or `./dev setup`)") from None
    from kyb_cli.serve.run import serve

    store = open_store()  # the default store is created on first use; anything else must be a store
    serve(store.path, host=host, port=port, readonly=readonly, open_browser=open_browser)
