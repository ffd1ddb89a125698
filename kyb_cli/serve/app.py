"""The ASGI app of `kyb serve`: the route table's API, /openapi.json, /mcp and the console, behind the guard.

A route answers exactly what the CLI prints for the same question; a KybError answers
`{"error": message, "exit_code": n, "kind": k}` with the HTTP status of its exit code
(1 -> 404, 2 -> 400, 3 -> 422, 4 -> 503, 5 -> 502). Handlers are blocking core calls and run in
Starlette's thread pool, so one slow read never stalls the others.
"""

from __future__ import annotations

import json
import mimetypes
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route as StarletteRoute

from kyb_cli.api import KybError, UsageError
from kyb_cli.serve.door import Door
from kyb_cli.serve.params import parse_body, parse_query
from kyb_cli.serve.refusal import json_media_problem, refusal
from kyb_cli.serve.routes import ROUTES, Route

STATUS_OF_EXIT = {1: 404, 2: 400, 3: 422, 4: 503, 5: 502, 70: 500}
NO_STORE = {"cache-control": "no-store"}


def error_response(exc: KybError) -> JSONResponse:
    status = STATUS_OF_EXIT.get(exc.exit_code, 500)
    from kyb_cli.api import spelled

    return JSONResponse({"error": spelled(exc, "http"), "exit_code": exc.exit_code, "kind": exc.kind},
                        status_code=status,
                        headers=NO_STORE)


async def _respond(route: Route, door: Door, items: list[tuple[str, str]], path_params: dict,
                   request: Request | None) -> Response:
    """A table route's response to its query `items`, path parameters and (a body route's) request:
    the one code both ways in (Starlette's router, and `Fixed`'s dict lookup) run."""
    try:
        args = parse_query(route.query, items)
        if route.body:
            args.update(parse_body(route.body, await _json_body(request)))
        args.update(path_params)
    except KybError as exc:
        return error_response(exc)

    def run() -> Any:
        from kyb_cli import api

        try:  # the envelope every door uses; a server never makes a request wait for a staged history
            return api.answer(lambda: route.call(door, args), wait=False)
        except KybError as exc:  # the store error, the bug (500, exit 70)
            return exc

    result = await run_in_threadpool(run)
    if isinstance(result, KybError):
        return error_response(result)
    if isinstance(result, tuple):  # (text, media type): export
        text, media = result
        return Response(text, media_type=media, headers=NO_STORE)
    return JSONResponse(result, headers=NO_STORE)


def _endpoint(route: Route, door: Door):
    async def endpoint(request: Request) -> Response:
        return await _respond(route, door, request.query_params.multi_items(), request.path_params, request)

    endpoint.__name__ = route.name
    return endpoint


def _fixed_get(route: Route, door: Door):
    """The ASGI app of a fixed-path GET route of the table, for `Fixed`: the query string parsed as
    Starlette's QueryParams parses it, then `_respond`, as through the router."""
    async def app(scope, receive, send) -> None:
        items = parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
        response = await _respond(route, door, items, {}, None)
        await response(scope, receive, send)

    return app


class Fixed:
    """The app in front of Starlette's: a GET of one of the table's fixed paths (/search, /healthz,
    /tags, …) and a POST to /mcp are found by one dict lookup on (method, path) and answered by the
    same code the router would call; anything else (a path with parameters, HEAD, a trailing slash,
    a 404 or 405, the console, the lifespan) goes through Starlette as before. Starlette's way to an
    endpoint — its two middlewares, the router's regex per route, a Request and its query parser —
    was ~17 us of a /search in-process (answer canned), 0.07-0.09 ms of wall and CPU over the wire in
    a paired bench (issue 38). An exception is answered as its middleware answers it (`_crash`, 500)
    and raised again for the server to log, as Starlette does (tests/test_serve_fixed.py)."""

    def __init__(self, app, table: dict) -> None:
        self.app, self.table = app, table

    async def __call__(self, scope, receive, send) -> None:
        fast = self.table.get((scope.get("method"), scope.get("path"))) if scope["type"] == "http" else None
        if fast is None:
            await self.app(scope, receive, send)
            return
        started = False

        async def sent(message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await fast(scope, receive, sent)
        except Exception as exc:
            if not started:
                await (await _crash(Request(scope), exc))(scope, receive, send)
            raise


async def _json_body(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        return {}
    problem = json_media_problem(request.headers.get("content-type"))
    if problem is not None:
        raise UsageError(problem)
    from kyb_cli.api.limits import loads_json

    try:
        return loads_json(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"the body is not JSON: {exc}") from None


# -- the console ------------------------------------------------------------------------------------

def _asset(name: str) -> bytes | None:
    base = resources.files("kyb_cli.serve") / "static"
    node = base
    for part in name.split("/"):
        if part in ("", ".", "..") or part.startswith("."):
            return None
        node = node / part
    try:
        return node.read_bytes() if node.is_file() else None
    except OSError:
        return None


CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "frame-ancestors 'none'; base-uri 'none'; form-action 'none'")


async def console(request: Request) -> Response:
    return _static_response("index.html")


async def static(request: Request) -> Response:
    return _static_response(request.path_params["path"])


def _static_response(name: str) -> Response:
    data = _asset(name)
    if data is None:
        raise HTTPException(404, f"no such file: /static/{name}")
    media = {"js": "text/javascript", "css": "text/css", "html": "text/html", "svg": "image/svg+xml"}.get(
        name.rsplit(".", 1)[-1]) or mimetypes.guess_type(name)[0] or "application/octet-stream"
    if media.startswith("text/"):
        media += "; charset=utf-8"
    return Response(data, headers={"content-type": media, "cache-control": "no-cache",
                                   "content-security-policy": CSP})


# -- the app ----------------------------------------------------------------------------------------

async def _http_error(request: Request, exc: HTTPException) -> Response:
    message = exc.detail if exc.status_code != 404 or exc.detail != "Not Found" else \
        f"no route {request.method} {request.url.path} (see /openapi.json)"
    if exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path} (see /openapi.json)"
    return JSONResponse(refusal(exc.status_code, message), status_code=exc.status_code, headers=exc.headers)


async def _crash(request: Request, exc: Exception) -> Response:
    from kyb_cli import api

    return error_response(api.internal_error(exc))


def build_app(door: Door, *, bind_host: str, port_of, token: str | None, mcp: bool = True):
    """The whole server as one ASGI app (the guard outermost)."""
    import contextlib

    from kyb_cli.serve.guard import Guard
    from kyb_cli.serve.openapi import openapi

    schema = openapi(ROUTES)

    async def openapi_json(request: Request) -> Response:
        return JSONResponse(schema)

    routes: list[Any] = [StarletteRoute(r.path, _endpoint(r, door), methods=[r.method]) for r in ROUTES]
    routes += [StarletteRoute("/openapi.json", openapi_json, methods=["GET"]),
               StarletteRoute("/", console, methods=["GET"]),
               StarletteRoute("/static/{path:path}", static, methods=["GET"])]
    endpoint = None
    if mcp:
        from kyb_cli.serve.mcp_http import McpEndpoint

        endpoint = McpEndpoint(door.store_path, readonly=door.readonly, default_workspace=door.default_workspace)
        # first: an agent's every call comes here, and Starlette tries the routes in order (no path overlaps)
        routes.insert(0, StarletteRoute("/mcp", endpoint, methods=["GET", "POST", "DELETE"]))

    @contextlib.asynccontextmanager
    async def lifespan(app):
        if endpoint is None:
            yield
            return
        async with endpoint.running():
            yield

    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={HTTPException: _http_error, Exception: _crash})
    table = {(r.method, r.path): _fixed_get(r, door) for r in ROUTES
             if r.method == "GET" and "{" not in r.path and not r.body}
    if endpoint is not None:
        table["POST", "/mcp"] = endpoint
    from kyb_cli import api

    audit = api.git_dir(Path(door.store_path)) / "kyb" / "audit.jsonl"
    return Guard(Fixed(app, table), bind_host=bind_host, port_of=port_of, token=token, readonly=door.readonly,
                 audit_path=audit)
