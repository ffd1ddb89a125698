"""The HTTP API's route table: method, path, the backend call, its arguments, and what it is.

The app dispatches from this table and /openapi.json is generated from it, so the documented API is
the served one. Every route's arguments are the operations table's fields
(kyb_cli/api/operations.py), so this door takes exactly what the others take. Arguments keep the CLI's names (`as_of`, `changed_between`, `blocked_reason`, …) and
the MCP tools' JSON types; replies are the CLI's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kyb_cli.api.operations import OPERATIONS, TODAY
from kyb_cli.serve import backend
from kyb_cli.serve.params import P


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    call: Callable
    about: str  # what a route outside the operation table is (/healthz); a table route says "" (see summary)
    query: tuple[P, ...] = ()
    body: tuple[P, ...] = ()
    write: bool = False
    tag: str = "records"
    media: str = "application/json"
    op: str = ""  # the operation of the table this route serves (tests/test_doors_parity.py)

    @property
    def name(self) -> str:
        return self.call.__name__

    @property
    def summary(self) -> str:
        """The operation's one description (the first line of the table's, which every door reads), or `about`."""
        if not self.op:
            return self.about
        return f"{OPERATIONS[self.op].text('http').split(chr(10) * 2)[0]} (`kyb {self.op}`)"


def _args(operation: str, path: str = "") -> tuple[P, ...]:
    """The route's query or body arguments: the operation's fields not in `path`, spelled the HTTP way."""
    return OPERATIONS[operation].http_fields(path)


def _dated(operation: str, path: str = "") -> tuple[P, ...]:
    """`_args` plus `today`, the reader's day of the deadlines block that rides along (get, search,
    tasks, incidents: the same door parameter MCP's four tools take; the CLI prints the block)."""
    return _args(operation, path) + (TODAY.for_http(),)


ROUTES: tuple[Route, ...] = (
    Route("GET", "/healthz", backend.health,
          "Liveness and what the store holds: version, head, counts, history_complete, pending_vectors, "
          "capabilities.", tag="server"),
    Route("GET", "/search", backend.search, "", _dated("query"),
          op="query"),
    Route("GET", "/knowledge/{key}", backend.get, "",
          _dated("get", "/knowledge/{key}"), op="get"),
    Route("GET", "/knowledge/{key}/history", backend.history, "", op="history"),
    Route("GET", "/knowledge/{key}/diff", backend.diff, "",
          _args("diff", "/knowledge/{key}/diff"), op="diff"),
    Route("POST", "/knowledge", backend.add, "",
          body=_args("add"), write=True, op="add"),
    Route("DELETE", "/knowledge/{key}", backend.retract, "",
          _args("rm", "/knowledge/{key}"), write=True, op="rm"),
    Route("GET", "/export", backend.export, "", _args("export"),
          media="application/x-ndjson", op="export"),
    Route("GET", "/tags", backend.tags, "", op="tags"),
    Route("GET", "/incidents", backend.incidents, "",
          _dated("incidents"), tag="incidents", op="incidents"),
    Route("POST", "/incidents", backend.incident, "",
          body=_args("incident"), write=True, tag="incidents", op="incident"),
    Route("POST", "/incidents/{key}/resolve", backend.resolve, "",
          body=_args("resolve", "/incidents/{key}/resolve"), write=True, tag="incidents", op="resolve"),
    Route("GET", "/tasks", backend.tasks, "",
          _dated("tasks"), tag="tasks", op="tasks"),
    Route("POST", "/tasks", backend.task, "",
          body=_args("task"), write=True, tag="tasks", op="task"),
    Route("POST", "/tasks/{key}/transition", backend.transition, "",
          body=_args("task-status", "/tasks/{key}/transition"), write=True, tag="tasks", op="task-status"),
    Route("POST", "/tasks/{key}/resolve", backend.close, "",
          body=_args("done", "/tasks/{key}/resolve"), write=True, tag="tasks", op="done"),
    Route("GET", "/deadlines", backend.deadlines, "",
          _args("deadlines"), tag="tasks", op="deadlines"),
    Route("GET", "/context", backend.context, "",
          _args("context"), op="context"),
    Route("GET", "/recall", backend.recall, "", _args("recall"), op="recall"),
    Route("GET", "/reads", backend.reads, "", _args("reads"), op="reads"),
)

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
