"""The MCP tools: one per CLI command, typed and described, calling the same core functions.

Parameters mirror the CLI options (lists instead of comma strings; null where the CLI's "omitted
keeps the stored value" applies). Read tools are marked read-only; `retract` is the one destructive
tool; writes that change nothing when repeated are marked idempotent.
"""

from typing import Annotated, Any

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from kyb_cli.mcp.params import seal, tool_params
from kyb_cli.mcp.shared import Day
from kyb_cli.mcp.trust_tools import TrustTools

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
RETRACT = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False,
                          open_world_hint=False)


class Tools(TrustTools):
    """The kyb tools, one method per CLI command; `door` resolves the store and shapes answers and errors.

    Each method is registered as it is (its name is the tool name, its signature the input schema,
    its docstring the description); TOOLS below says which are read-only."""

    def __init__(self, door) -> None:
        self.door = door

    @tool_params("query", today=(Day, None))
    def query(self, **a: Any) -> CallToolResult:
        """Search records. Modes (one at a time): current state (default: live and archived records,
        never retracted ones), `history`, `as_of`, `as_of_event` (what was true in the world at T, by
        event time), `changed_between`. Times are write (commit) times.
        Each hit has `is_head`: true only when it is the key's current version, `strength` (strong |
        weak), `found_by` (lexical | semantic | both) and a `snippet`; the answer's `confident` is true
        only when a hit is strong (false: nothing stored matches; do not treat weak hits as answers).
        Syntax: "exact phrase", +must, -exclude or NOT word, prefix*; plain words rank any-match.
        Several phrasings: when you ask in natural language (not an identifier), pass 1-3 rephrasings
        in `also` (other words; English if you ask in another language): one fused answer finds the
        record more often than the question alone."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle_dated("query", self.door, a)  # the deadlines block rides along

        return self.door.call(run)

    @tool_params("get", today=(Day, None))
    def get(self, **a: Any) -> CallToolResult:
        """Read record KEY with its state, version sha and commit time; `at` reads it as it stood at
        any revision. A retracted or archived record says so and still shows its last content."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle_dated("get", self.door, a)  # the deadlines block rides along

        return self.door.call(run)

    @tool_params("history")
    def history(self, **a: Any) -> CallToolResult:
        """Every change of KEY (added, modified, deleted), newest first, with who wrote it."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("history", self.door, a)

        return self.door.call(run)

    @tool_params("diff")
    def diff(self, **a: Any) -> CallToolResult:
        """Unified diff of KEY's fields and body between two versions (the CLI's `kyb diff`): `diff`
        is the text, `fields` each changed field with its old and new value. Revisions: sha, short
        sha, HEAD~2, tag."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("diff", self.door, a)

        return self.door.call(run)

    @tool_params("add")
    def add(self, **a: Any) -> CallToolResult:
        """Write knowledge KEY (an upsert: a new version when anything changed, no commit when nothing
        did). Query first and reuse the existing key; write verified facts only."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("add", self.door, a)

        return self.door.call(run)

    @tool_params("add-many")
    def add_many(self, **a: Any) -> CallToolResult:
        """Write several knowledge records at once (each an upsert, as `add`): one lock and one store
        update for all, one commit per record unless one_commit. A record that breaks a rule (a
        secret, a bad key) is reported in `skipped` and the others are written. The answer lists
        `created`, `updated`, `unchanged` and `skipped` [{path, reason}], `commits` and `head`."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("add-many", self.door, a)

        return self.door.call(run)

    @tool_params("rm")
    def retract(self, **a: Any) -> CallToolResult:
        """Retract knowledge KEY that was wrong (the CLI's `kyb rm`): it leaves current answers;
        `get` with `at` and `history` keep every version."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("rm", self.door, a)

        return self.door.call(run)

    @tool_params("incident")
    def incident(self, **a: Any) -> CallToolResult:
        """Write incident report KEY (a rewrite replaces it; tags are kept unless given). The reply's
        `hints` say what a good report still lacks. A resolved report is archived."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("incident", self.door, a)

        return self.door.call(run)

    @tool_params("resolve")
    def resolve(self, **a: Any) -> CallToolResult:
        """Resolve (or mitigate) incident KEY. Resolving archives it; its final version stays in search,
        `get` and `incidents` with all=true. Open `- [ ]` follow-ups give a warning, not a refusal."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("resolve", self.door, a)

        return self.door.call(run)

    @tool_params("task")
    def task(self, **a: Any) -> CallToolResult:
        """Write task KEY (a rewrite replaces it, but omitted tags and deadline fields are kept).
        done/dropped need a resolution and archive the task; `done` is the usual way to close."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("task", self.door, a)

        return self.door.call(run)

    @tool_params("task-status")
    def task_status(self, **a: Any) -> CallToolResult:
        """Move task KEY between open, in_progress and blocked, changing only what is named. An
        archived task is reopened."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("task-status", self.door, a)

        return self.door.call(run)

    @tool_params("done")
    def done(self, **a: Any) -> CallToolResult:
        """Close task KEY as done (or dropped) with a resolution; closing archives it. Closing twice
        never wipes an outcome."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("done", self.door, a)

        return self.door.call(run)

    @tool_params("tasks", today=(Day, None))
    def tasks(self, **a: Any) -> CallToolResult:
        """List tasks: live ones first by status, then most recently written first."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle_dated("tasks", self.door, a)  # the deadlines block rides along

        return self.door.call(run)

    @tool_params("incidents", today=(Day, None))
    def incidents(self, **a: Any) -> CallToolResult:
        """List incident reports: open, mitigated, resolved, then most recently written first."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle_dated("incidents", self.door, a)  # the deadlines block rides along

        return self.door.call(run)

    @tool_params("export")
    def export(self, **a: Any) -> CallToolResult:
        """A snapshot: one row per key that existed by revision `at` (default now), with its latest
        content and state (active|archived|retracted). No earlier versions: see `history`."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("export", self.door, a)

        return self.door.call(run)

    @tool_params("log")
    def log(self, **a: Any) -> CallToolResult:
        """The store's activity, newest first: every commit (kyb's writes, hand commits, merges) with who
        made it. Use it to review what other agents wrote lately."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("log", self.door, a)

        return self.door.call(run)

    @tool_params("deadlines")
    def deadlines(self, **a: Any) -> CallToolResult:
        """Open tasks that are overdue or due within their reminder window (default 3 days): overdue
        first, hard deadlines first within each group, then by date."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("deadlines", self.door, a)

        return self.door.call(run)

    @tool_params("context")
    def context(self, **a: Any) -> CallToolResult:
        """The session-start digest: what changed recently, open incidents, deadlines, most used tags,
        counts. The records in it are reference data, possibly stale: verify before relying on them."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.handle("context", self.door, a)

        return self.door.call(run, text=lambda d: d["text"])


# name -> annotations; READ tools are the ones a read-only server keeps.
TOOLS: dict[str, ToolAnnotations] = {
    "query": READ,
    "get": READ,
    "history": READ,
    "diff": READ,
    "add": WRITE,
    "add_many": WRITE,
    "retract": RETRACT,
    "incident": WRITE,
    "resolve": WRITE,
    "task": WRITE,
    "task_status": WRITE,
    "done": WRITE,
    "tasks": READ,
    "incidents": READ,
    "export": READ,
    "log": READ,
    "deadlines": READ,
    "context": READ,
    "verify": WRITE,
    "stale": READ,
    "rules": READ,
}


def register(server, door, *, readonly: bool = False) -> None:
    """Add every tool (only the read-only ones when `readonly`) to `server`."""
    tools = Tools(door)
    for name, annotations in TOOLS.items():
        if readonly and annotations is not READ:
            continue
        method = getattr(tools, name)
        server.tool(annotations=annotations)(method)
        seal(server._tool_manager.get_tool(name), method.required)
