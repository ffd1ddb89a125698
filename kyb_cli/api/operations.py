"""The table of operations: each one typed request, declared once, that the doors are made from.

A `Field` is one parameter of an operation with its type, default, help, allowed values, bounds,
whether "omitted keeps the stored value" (`keep`) and an example. The HTTP door's query and body
arguments and /openapi.json are generated from it (kyb_cli/serve/routes.py); the MCP tool
signatures and the Click options are checked against it (tests/test_doors_parity.py), so a door
cannot drift from the table. A door may spell a field its own way (`q` over HTTP for `text`,
`--tags` as a comma list on the CLI): `http=` / `cli=` say so here, once.

Adding a parameter to an operation is one `Field(...)` line in its tuple below, the handler passing
it on, and the MCP/Click signature growing the same name (the parity test says which door lacks it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kyb_cli.api.work import LISTING_MAX_LIMIT

KINDS = ("knowledge", "incident", "task")
TASK_STATUSES = ("open", "in_progress", "blocked", "done", "dropped")
PRIORITIES = ("low", "medium", "high", "critical")
STRENGTHS = ("weak", "strong")


@dataclass(frozen=True)
class Field:
    name: str
    type: str = "string"  # string | integer | boolean | strings | texts | objects | any
    # (texts: a list of strings each kept whole — no comma splitting; repeated in a query string)
    default: Any = None
    description: str = ""
    required: bool = False
    enum: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    nullable: bool = False  # `keep`: null (or absent) keeps the stored value
    example: Any = None
    http: str | None = None  # the HTTP name when it is not `name`
    cli: str | None = None  # the Click parameter name when it is not `name`

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of this field (for /openapi.json and MCP)."""
        base: dict[str, Any] = dict({
            "string": {"type": "string"}, "integer": {"type": "integer"}, "boolean": {"type": "boolean"},
            "strings": {"type": "array", "items": {"type": "string"}},
            "texts": {"type": "array", "items": {"type": "string"}},
            "objects": {"type": "array", "items": {"type": "object"}},
            "any": {},
        }[self.type])
        if self.enum:
            base["enum"] = list(self.enum)
        if self.minimum is not None:
            base["minimum"] = self.minimum
        if self.maximum is not None:
            base["maximum"] = self.maximum
        if self.default not in (None, [], "") or self.type == "boolean":
            base["default"] = self.default if self.default is not None else False
        if self.nullable:
            base = {"anyOf": [base, {"type": "null"}]}
        if self.description:
            base["description"] = self.description
        if self.example is not None:
            base["examples"] = [self.example]
        return base

    def for_http(self) -> Field:
        return replace(self, name=self.http) if self.http else self


@dataclass(frozen=True)
class Operation:
    name: str
    summary: str
    fields: tuple[Field, ...]
    example: str = ""  # one CLI call, shown in --help

    def http_fields(self, *, exclude: tuple[str, ...] = ()) -> tuple[Field, ...]:
        return tuple(f.for_http() for f in self.fields if f.name not in exclude)

    def field(self, name: str) -> Field:
        return next(f for f in self.fields if f.name == name)


BODY = Field("body", default="", description="Markdown body.", example="Checkout goes through node-3 port 9090.")
TAGS = Field("tags", "strings", [], "Tags (any case; stored as given, matched lowercased).", example=["infra"])
TAGS_KEEP = Field("tags", "strings", None, "Tags; null or absent keeps the stored ones, [] clears.", nullable=True,
                  example=["infra"])
REFS = Field("refs", "strings", [], "Pointers: paths, URLs, where a secret lives (never the secret).")
KNOWLEDGE = Field("knowledge", "strings", [], "Knowledge keys this record relates to.")
EFFECTIVE_AT = Field("effective_at", description=(
    "When it became true in the world (date or RFC 3339); default: when written. Anything else is a usage error."),
    example="2026-12-01")

QUERY = Operation("query", "Search records: current state, history, as_of, as_of_event or changed_between.", (
    Field("text", default="", description="Words to search; empty lists newest first. Any text is valid.",
          http="q", example="checkout port"),
    Field("also", "texts", [], (
        "Other phrasings of the same question (up to 7), fused with it into one answer with one `confident`. "
        "Give them when the words of the records are unknown: a paraphrase in other words, the question in "
        "English when asked in another language, a likely identifier; or when a first answer was not confident."),
        example=["how is an order written to the database"]),
    Field("limit", "integer", 10, "At most this many hits.", minimum=0, maximum=100),
    Field("tags", "strings", [], "Only records with all these tags (comma list)."),
    Field("kind", description="Only this kind.", enum=KINDS),
    Field("history", "boolean", False, "Search every content version, current included."),
    Field("as_of", description="Search the store as it was at T: RFC 3339, a date (end of day UTC) or a revision.",
          example="2026-11-30"),
    Field("as_of_event", description=(
        "What was true in the world at T (event time: effective_at, else write time), by what the store knows "
        "now, or knew at `as_of` when both are given."), example="2026-11-30"),
    Field("changed_between", "strings", None, "A,B: versions written in this window; the latest match per key.",
          example=["2026-11-01", "2026-11-30"]),
    Field("semantic", "boolean", True, "Fuse search by meaning when a model is there; false: words only."),
    Field("explain", "boolean", False, "Per hit: lexical rank, vector rank, cosine, fused score."),
    Field("min_strength", default="weak", enum=STRENGTHS, description=(
        "strong: only hits that hold the question's words or clear the calibrated floor by meaning.")),
    Field("status", description="Only this status (exact)."),
    Field("service", description="Only this service (any case)."),
    Field("priority", description="Only this priority (exact)."),
    Field("assignee", description="Only this assignee (exact)."),
    Field("parent", description="Only sub-tasks of this task key."),
    Field("recent", "boolean", False, "Newest first instead of by relevance."),
), example="kyb query 'checkout port' --as-of 2026-11-30")

ADD = Operation("add", "Write knowledge (an upsert; an identical write makes no commit).", (
    Field("key", description="Record key: [a-z0-9-], at most 100 characters.", required=True, example="checkout-path"),
    Field("title", description="Short title.", required=True, example="Checkout path"),
    BODY, TAGS, REFS, EFFECTIVE_AT,
    Field("review_by", description="Check again by YYYY-MM-DD; null keeps the stored one, '' clears it.",
          nullable=True, example="2027-01-31"),
), example="kyb add --key checkout-path --title 'Checkout path' --body 'port 9090'")

TASK = Operation("task", "Write a task: a rewrite replaces it, but omitted tags and deadline fields are kept.", (
    Field("key", description="task-<slug>.", required=True, example="task-renew-cert"),
    Field("title", description="What is to be done.", required=True, example="Renew cert"),
    BODY,
    Field("status", default="open", description="open|in_progress|blocked|done|dropped."),
    Field("priority", default="", description="low|medium|high|critical (empty: unranked)."),
    Field("blocked_reason", default="", description="Why it is blocked (only with status blocked)."),
    Field("assignee", default="", description="Short owner label, one line."),
    Field("parent", default="", description="Parent task key (task-…)."),
    Field("blocked_by", "strings", None, "Task keys this task waits on; null keeps the stored ones, [] clears.",
          nullable=True, example=["task-order-cert"]),
    KNOWLEDGE,
    Field("resolution", default="", description="Outcome (needed for done/dropped)."),
    TAGS_KEEP, REFS,
    Field("due", description="Due date YYYY-MM-DD; null keeps, '' clears.", nullable=True, example="2026-12-31"),
    Field("hard", "boolean", None, "Missing the date has external consequences; null keeps.", nullable=True),
    Field("remind_days", "any", None, "Reminder window in days (default 3); null keeps, '' clears.", nullable=True),
    Field("expected", description="Provisional date YYYY-MM-DD (with waits_on); null keeps.", nullable=True),
    Field("waits_on", description="The event the expected date depends on; null keeps.", nullable=True),
    EFFECTIVE_AT,
), example="kyb task --key task-renew-cert --title 'Renew cert' --due 2026-12-31 --hard")

TASKS = Operation("tasks", "Tasks: live ones first by status, then most recently written first.", (
    Field("status", default="", description="open|in_progress|blocked|done|dropped (includes archived)."),
    Field("priority", default="", description="low|medium|high|critical."),
    Field("assignee", default="", description="Exact owner label."),
    Field("parent", default="", description="Only children of this task."),
    Field("open_followups", "boolean", False, "Only tasks with open `- [ ]` follow-ups."),
    Field("all", "boolean", False, "Include archived (done/dropped) tasks.", cli="include_all"),
    Field("ready", "boolean", False, "Only open tasks none of whose blockers is still live: what can start now."),
    Field("due_before", description="Only tasks due on or before YYYY-MM-DD.", example="2026-12-31"),
    Field("limit", "integer", 50, f"At most N rows (max {LISTING_MAX_LIMIT}).", minimum=0, maximum=LISTING_MAX_LIMIT),
), example="kyb tasks --ready")

OPERATIONS: dict[str, Operation] = {op.name: op for op in (QUERY, ADD, TASK, TASKS)}


def min_strength_arg(value: str | None) -> str | None:
    """The core's `min_strength`: None for the default (weak: every hit), else the floor named."""
    return None if value in (None, "", "weak") else value


def example(name: str) -> str:
    """`Example: kyb …`, the --help epilog of operation `name` (\b keeps Click from rewrapping it)."""
    return f"\b\nExample:\n  {OPERATIONS[name].example}"
