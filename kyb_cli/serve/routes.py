"""The HTTP API's route table: method, path, the backend call, its arguments, and what it is.

The app dispatches from this table and /openapi.json is generated from it, so the documented API is
the served one. The arguments of query, add, task and tasks are the operations table's fields
(kyb_cli/api/operations.py), so this door takes exactly what the others take. Arguments keep the CLI's names (`as_of`, `changed_between`, `blocked_reason`, …) and
the MCP tools' JSON types; replies are the CLI's JSON.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from kyb_cli.api.operations import BODY, KNOWLEDGE, OPERATIONS, REFS, TAGS_KEEP
from kyb_cli.api.work import LISTING_MAX_LIMIT
from kyb_cli.serve import backend
from kyb_cli.serve.params import P


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    call: Callable
    summary: str
    query: tuple[P, ...] = ()
    body: tuple[P, ...] = ()
    write: bool = False
    tag: str = "records"
    media: str = "application/json"

    @property
    def name(self) -> str:
        return self.call.__name__


TODAY = P("today", description="The reader's calendar day YYYY-MM-DD (default: the server's local date).")
LIST_LIMIT = P("limit", "integer", 50, f"At most N rows (max {LISTING_MAX_LIMIT}).", minimum=0,
               maximum=LISTING_MAX_LIMIT)

SEARCH = OPERATIONS["query"].http_fields()

INCIDENT = (
    P("key", description="inc-<yyyy-mm-dd>-<slug>.", required=True),
    P("title", description="What happened, in one line.", required=True),
    P("service", description="What broke.", required=True),
    P("severity", description="low|medium|high|critical.", required=True),
    BODY,
    P("status", default="open", description="open|mitigated|resolved."),
    P("hosts", "strings", [], "Hosts involved."),
    KNOWLEDGE,
    P("resolution", default="", description="What fixed it (needed for resolved)."),
    P("detection", default="", description="An executable 'is it still happening?' check and its healthy result."),
    P("affected", "objects", None, 'Affected windows: [{"scope": …, "from": …, "to": …}].'),
    P("started", default="", description="When it started (RFC 3339)."),
    P("detected", default="", description="When it was detected (default: now)."),
    TAGS_KEEP,
    REFS,
)

TASK = OPERATIONS["task"].http_fields()

ROUTES: tuple[Route, ...] = (
    Route("GET", "/healthz", backend.health,
          "Liveness and what the store holds: version, head, counts, history_complete, pending_vectors, "
          "capabilities.", tag="server"),
    Route("GET", "/search", backend.search,
          "Search (kyb query): current state by default, or history, as_of, changed_between.", SEARCH),
    Route("GET", "/knowledge/{key}", backend.get,
          "A record with its state, version sha and commit time (kyb get); `at` reads it at a revision.",
          (P("at", description="A revision: sha, short sha, HEAD~2, tag or branch."),
           P("version", "integer", None, "Content version N of the key: 1 the first, -1 the one before the current."))),
    Route("GET", "/knowledge/{key}/history", backend.history,
          "Every change of the key, newest first, with who wrote it (kyb history)."),
    Route("GET", "/knowledge/{key}/diff", backend.diff,
          "Unified diff of fields and body between two versions (kyb diff); default: previous vs latest.",
          (P("from", description="Older revision (default: the version before `to`)."),
           P("to", description="Newer revision (default: the latest version)."))),
    Route("POST", "/knowledge", backend.add,
          "Write knowledge (kyb add): an upsert; an identical write makes no commit.",
          body=OPERATIONS["add"].http_fields(), write=True),
    Route("DELETE", "/knowledge/{key}", backend.retract,
          "Retract knowledge that was wrong (kyb rm); `reason` is recorded in the commit.",
          (P("reason", description="Why this knowledge was wrong.", required=True),), write=True),
    Route("GET", "/export", backend.export,
          "A snapshot, one row per key that existed by `at` (kyb export).",
          (P("at", description="A revision (default: the current commit)."),
           P("format", default="jsonl", description="jsonl | json | csv.", enum=("jsonl", "json", "csv"))),
          media="application/x-ndjson"),
    Route("GET", "/tags", backend.tags, "Tags of live records with counts, most used first (kyb tags)."),
    Route("GET", "/incidents", backend.incidents,
          "Incident reports: open, mitigated, resolved, then most recently written first (kyb incidents).",
          (P("status", default="", description="open|mitigated|resolved (an explicit status includes archived)."),
           P("service", default="", description="Only this service (any case)."),
           P("open_followups", "boolean", False, "Only reports with open `- [ ]` follow-ups."),
           P("all", "boolean", False, "Include archived (resolved) reports."), LIST_LIMIT), tag="incidents"),
    Route("POST", "/incidents", backend.incident,
          "Write an incident report (kyb incident); `hints` say what a good report still lacks.",
          body=INCIDENT, write=True, tag="incidents"),
    Route("POST", "/incidents/{key}/resolve", backend.resolve,
          "Resolve (or mitigate) an incident (kyb resolve); resolving archives it.",
          body=(P("status", default="resolved", description="resolved|mitigated (or open to reopen)."),
                P("resolution", default="", description="What fixed it; empty keeps the stored one.")),
          write=True, tag="incidents"),
    Route("GET", "/tasks", backend.tasks,
          "Tasks: live ones first by status, then most recently written first (kyb tasks).",
          OPERATIONS["tasks"].http_fields(), tag="tasks"),
    Route("POST", "/tasks", backend.task,
          "Write a task (kyb task): a rewrite replaces it, but omitted tags and deadline fields are kept.",
          body=TASK, write=True, tag="tasks"),
    Route("POST", "/tasks/{key}/transition", backend.transition,
          "Move a task between open, in_progress and blocked, changing only what is named (kyb task-status).",
          body=(P("status", description="open|in_progress|blocked (close with /resolve).", required=True),
                P("assignee", description="New owner label; '' unclaims; null keeps.", nullable=True),
                P("parent", description="New parent task; '' detaches; null keeps.", nullable=True),
                P("blocked_reason", description="Why it is blocked (with status blocked).", nullable=True)),
          write=True, tag="tasks"),
    Route("POST", "/tasks/{key}/resolve", backend.close,
          "Close a task as done or dropped with a resolution (kyb done); closing archives it.",
          body=(P("status", default="done", description="done|dropped."),
                P("resolution", default="", description="What came of it, or why it was dropped; required "
                  "unless one is stored.")), write=True, tag="tasks"),
    Route("GET", "/deadlines", backend.deadlines,
          "Open tasks overdue or due within their reminder window: overdue first, hard first (kyb deadlines).",
          (TODAY,), tag="tasks"),
)

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
