"""/openapi.json, generated from the route table so the documented API is the one served."""

from __future__ import annotations

from typing import Any

from kyb_cli import __version__
from kyb_cli.api.operations import OPERATIONS

ERROR = {"$ref": "#/components/schemas/Error"}
STATUSES = {
    "400": "usage error (exit 2): a missing, unknown or malformed argument",
    "401": "a bearer token is required",
    "403": "refused: read-only server, or a browser write from another origin",
    "404": "not found (exit 1): a key or a revision",
    "413": "request body too large",
    "421": "the Host header does not name this server",
    "422": "rejected by a rule, nothing written (exit 3)",
    "502": "remote error (exit 5)",
    "503": "store error (exit 4): not a store, corrupt, locked past the wait, I/O",
}


def openapi(routes) -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for route in routes:
        op: dict[str, Any] = {"operationId": route.name, "summary": route.summary, "tags": [route.tag]}
        params = []
        for name in _path_names(route.path):
            params.append({"name": name, "in": "path", "required": True, "schema": {"type": "string"},
                           "description": "Record key."})
        for p in route.query:
            schema = p.schema()
            description = schema.pop("description", "")
            if p.type == "strings":
                schema = {"type": "string", "description": "comma list"}
            params.append({"name": p.name, "in": "query", "required": p.required, "schema": schema,
                           "description": description})
        if params:
            op["parameters"] = params
        if route.body:
            props = {p.name: p.schema() for p in route.body}
            required = [p.name for p in route.body if p.required]
            body_schema: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
            if required:
                body_schema["required"] = required
            op["requestBody"] = {"required": bool(required),
                                 "content": {"application/json": {"schema": body_schema}}}
        ok = {"description": "the CLI's JSON for the same command",
              "content": {route.media: {"schema": {"type": "object"} if route.media == "application/json"
                                        else {"type": "string"}}}}
        op["responses"] = {"200": ok, **{code: {"description": text, "content": {"application/json": {
            "schema": ERROR}}} for code, text in STATUSES.items()}}
        described = [OPERATIONS[route.op].text("http")] if route.op else []  # the table's one description
        if route.write:
            described.append("A write: one Git commit, attributed with transport `http`; 403 on a read-only server.")
        if described:
            op["description"] = "\n\n".join(described)
        paths.setdefault(route.path, {})[route.method.lower()] = op
    paths["/mcp"] = {"post": {"operationId": "mcp", "summary": (
        "MCP over streamable HTTP: the tools of `kyb mcp` (read-only tools only with --readonly or ?readonly=1)."),
        "tags": ["server"], "responses": {"200": {"description": "a JSON-RPC response"}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "kyb HTTP API", "version": __version__, "description": (
            "The HTTP door of kyb: the same JSON as the CLI. Errors are {\"error\": message} with the "
            "status of the CLI's exit code: 1 -> 404, 2 -> 400, 3 -> 422, 4 -> 503, 5 -> 502. Attribution "
            "labels: headers X-Kyb-Agent, X-Kyb-Session, X-Kyb-Workspace.")},
        "paths": paths,
        "components": {
            "schemas": {"Error": {"type": "object", "required": ["error"], "properties": {
                "error": {"type": "string"}, "exit_code": {"type": "integer"}, "kind": {"type": "string"}}}},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": (
                "Required when the server is bound beyond loopback or KYB_SERVE_TOKEN is set.")}},
        },
        "security": [{}, {"bearer": []}],
    }


def _path_names(path: str) -> list[str]:
    import re

    return re.findall(r"{(\w+)}", path)
