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

import re
TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any

from kyb_cli.api._query_op import (  # noqa: F401 - `query`'s entry, read by a query without this table
    COMPACT_DROPS, COMPACT_KEEPS, KINDS, LIMIT_MIN, QUERY, STRENGTHS,
)
from kyb_cli.api._table import Field, Operation  # the table's two records (kyb_cli/api/_table.py)
from kyb_cli.api.search import FILTER_TAGS_MAX  # declared beside its check (a query needs no table)
from kyb_cli.api.work import LISTING_MAX_LIMIT

TASK_STATUSES = ("open", "in_progress", "blocked", "done", "dropped")
PRIORITIES = ("low", "medium", "high", "critical")

BODY = Field("body", default="", description="Markdown body.", example="Checkout goes through node-3 port 9090.")
TAGS = Field("tags", "strings", [], "Tags (any case; stored as given, matched lowercased).", example=["infra"])
TAGS_KEEP = Field("tags", "strings", None, "Tags; null or absent keeps the stored ones, [] clears.", nullable=True,
                  example=["infra"])
REFS = Field("refs", "strings", [], "Pointers: paths, URLs, where a secret lives (never the secret).")
KNOWLEDGE = Field("knowledge", "strings", [], "Knowledge keys this record relates to.")
EFFECTIVE_AT = Field("effective_at", description=(
    "When it became true in the world (date or RFC 3339); default: when written. Anything else is a usage error."),
    example="2026-12-01", metavar="TIME")

FACT = (  # what one knowledge record is: `add` takes one, `add_many` a list of them
    Field("key", description="Record key: [a-z0-9-], at most 100 characters.", required=True, example="checkout-path"),
    Field("title", description="Short title.", required=True, example="Checkout path"),
    BODY, TAGS, REFS,
)
ADD = Operation("add", "Write knowledge KEY: an upsert, a new version when anything changed, no commit when nothing did.", (
    *FACT, EFFECTIVE_AT,
    Field("review_by", description="Check again by YYYY-MM-DD; null keeps the stored one, '' clears it.",
          nullable=True, example="2027-01-31", metavar="DATE"),
), example="kyb add --key checkout-path --title 'Checkout path' --body 'port 9090'")

ADD_MANY = Operation("add-many", "Write several knowledge records at once (each an upsert, as `add`): one lock "
                     "and one store update for all.", (
    Field("records", "objects", None, "Knowledge records to write, each {key, title, body, tags, refs}; keys must "
          "be distinct.", required=True, minimum=1, maximum=10000, items=FACT),
    Field("one_commit", "boolean", False, "One commit for all of them instead of one each."),
    Field("dry_run", "boolean", False, "Answer what would change; write nothing."),
), example='add_many {"records": [{"key": "checkout-path", "title": "Checkout path", "body": "port 9090"}]}',
    doors=("mcp",))  # a batch is MCP's: the CLI and HTTP import files (`kyb import`)

TASK = Operation("task", "Write task KEY: a rewrite replaces it, but omitted tags and deadline fields are kept.", (
    Field("key", description="task-<slug>.", required=True, example="task-renew-cert"),
    Field("title", description="What is to be done.", required=True, example="Renew cert"),
    BODY,
    Field("status", default="open", description="open|in_progress|blocked|done|dropped."),
    Field("priority", default="", description="low|medium|high|critical (empty: unranked)."),
    Field("blocked_reason", default="", description="Why it is blocked (only with status blocked)."),
    Field("assignee", default="", description="Short owner label, one line."),
    Field("parent", default="", description="Parent task key (task-…).", aliases=("--parent-task",)),
    Field("blocked_by", "strings", None, "Task keys this task waits on; null keeps the stored ones, [] clears.",
          nullable=True, example=["task-order-cert"], metavar="KEY[,KEY]"),
    KNOWLEDGE,
    Field("resolution", default="", description="Outcome (needed for done/dropped)."),
    TAGS_KEEP, REFS,
    Field("due", description="Due date YYYY-MM-DD; null keeps, '' clears.", nullable=True, example="2026-12-31", metavar="DATE"),
    Field("hard", "boolean", None, "Missing the date has external consequences; null keeps.", nullable=True),
    Field("remind_days", "any", None, "Reminder window in days (default 3); null keeps, '' clears.", nullable=True,
          metavar="N"),
    Field("expected", description="Provisional date YYYY-MM-DD (with waits_on); null keeps.", nullable=True,
          metavar="DATE"),
    Field("waits_on", description="The event the expected date depends on; null keeps.", nullable=True,
          metavar="TEXT"),
    EFFECTIVE_AT,
), example="kyb task --key task-renew-cert --title 'Renew cert' --due 2026-12-31 --hard")

TASKS = Operation("tasks", "List tasks: live ones first by status, then most recently written first.", (
    Field("status", default="", description="open|in_progress|blocked|done|dropped (includes archived)."),
    Field("priority", default="", description="low|medium|high|critical."),
    Field("assignee", default="", description="Exact owner label."),
    Field("parent", default="", description="Only children of this task.", aliases=("--parent-task",)),
    Field("open_followups", "boolean", False, "Only tasks with open `- [ ]` follow-ups."),
    Field("all", "boolean", False, "Include archived (done/dropped) tasks.", cli="include_all"),
    Field("ready", "boolean", False, "Only open tasks none of whose blockers is still live: what can start now."),
    Field("due_before", description="Only tasks due on or before YYYY-MM-DD.", example="2026-12-31", metavar="DATE"),
    Field("limit", "integer", 50, f"At most N rows (max {LISTING_MAX_LIMIT}).", metavar="N", minimum=LIMIT_MIN, maximum=LISTING_MAX_LIMIT),
), example="kyb tasks --ready")

LOG_LIMIT = 1000  # = core.tools.activity.MAX_LIMIT (the api imports the core lazily; a test keeps them equal)
KEY = Field("key", description="Record key: [a-z0-9-], at most 100 characters.", required=True, positional=True,
            example="checkout-path")
TODAY = Field("today", description="The reader's calendar day YYYY-MM-DD (default: the local date).",
              metavar="DATE", example="2026-12-01")

GET = Operation("get", "Read record KEY with its state, version sha and commit time; `at` reads it as it stood at any revision.", (
    KEY,
    Field("at", description=("A revision (sha, short sha, HEAD~2, tag, branch), or a date/datetime: what this "
                             "clone's branch showed then."), metavar="REV|DATE", example="HEAD~2"),
    Field("version", "integer", None, "Content version N: 1 is the first, -1 the one before the current "
          "(`history` numbers them).", metavar="N"),
), example="kyb get checkout-path --version 1")

HISTORY = Operation("history", "Every change of KEY (added, modified, deleted), newest first, with who wrote it.",
                    (KEY,), example="kyb history checkout-path")

DIFF = Operation("diff", "Unified diff of KEY's fields and body between two versions.", (
    KEY,
    Field("from_rev", description="Older revision (default: the version before the newer one).", positional=True,
          metavar="[FROM]", http="from"),
    Field("to_rev", description="Newer revision (default: the latest version).", positional=True, metavar="[TO]",
          http="to"),
), example="kyb diff checkout-path HEAD~2 HEAD")

RM = Operation("rm", "Retract knowledge KEY that was wrong: it leaves current answers; `get` at a revision and `history` keep every version.", (
    KEY, Field("reason", description="Why this knowledge was wrong (recorded in the commit).", required=True),
), example="kyb rm checkout-path --reason 'port moved to 9443'", mcp="retract")

VERIFY = Operation("verify", "Record that knowledge KEY was checked against its source.", (
    KEY,
    Field("source", description="What the fact was checked against: a file, URL, command, person.", required=True),
    Field("rev", default="", description="The source's revision checked (a commit, version, date).", metavar="REV"),
    Field("note", default="", description="How it was checked, in a line."),
), example="kyb verify checkout-path --source deploy/nginx.conf --rev a1b2c3d", doors=("cli", "mcp"))

INCIDENT = Operation("incident", "Write incident report KEY: a rewrite replaces it; tags are kept unless given.", (
    Field("key", description="inc-<yyyy-mm-dd>-<slug>.", required=True, example="inc-2026-12-01-checkout-502"),
    Field("title", description="What happened, in one line.", required=True),
    Field("service", description="What broke.", required=True),
    Field("severity", description="low|medium|high|critical.", required=True),
    BODY,
    Field("status", default="open", description="open|mitigated|resolved."),
    Field("hosts", "strings", [], "Hosts involved."),
    KNOWLEDGE,
    Field("resolution", default="", description="What fixed it (needed for resolved)."),
    Field("detection", default="", description="An executable 'is it still happening?' check and its healthy result."),
    Field("affected", "objects", None, 'Affected windows: [{"scope": …, "from": …, "to": …}] (CLI: that JSON).'),
    Field("started", default="", description="When it started (RFC 3339)."),
    Field("detected", default="", description="When it was detected (default: now)."),
    TAGS_KEEP, REFS, EFFECTIVE_AT,
), example="kyb incident --key inc-2026-12-01-checkout-502 --title '502 on checkout' --service checkout "
           "--severity high")

RESOLVE = Operation("resolve", "Resolve (or mitigate) incident KEY; resolving archives it.", (
    KEY,
    Field("status", default="resolved", description="resolved|mitigated (or open to reopen)."),
    Field("resolution", default="", description="What fixed it; empty keeps the stored one."),
), example="kyb resolve inc-2026-12-01-checkout-502 --resolution 'rolled back 4.2.1'")

TASK_STATUS = Operation("task-status", "Move task KEY between open, in_progress and blocked, changing only what "
                        "is named; an archived task is reopened (`created`).", (
    Field("key", description="task-<slug>.", required=True, positional=True, example="task-renew-cert"),
    Field("status", description="open|in_progress|blocked (close with `done`).", required=True),
    Field("assignee", description="New owner label; '' unclaims; null keeps.", nullable=True),
    Field("parent", description="New parent task; '' detaches; null keeps.", nullable=True, aliases=("--parent-task",)),
    Field("blocked_reason", description="Why it is blocked (with status blocked); null keeps.", nullable=True),
), example="kyb task-status task-renew-cert --status in_progress --assignee ops-bot")

DONE = Operation("done", "Close task KEY as done or dropped with a resolution; closing archives it.", (
    Field("key", description="task-<slug>.", required=True, positional=True, example="task-renew-cert"),
    Field("status", default="done", description="done|dropped."),
    Field("resolution", default="", description="What came of it, or why it was dropped; empty keeps the stored one."),
), example="kyb done task-renew-cert --resolution 'renewed until 2027-12'")

INCIDENTS = Operation("incidents", "List incident reports: open, mitigated, resolved, then most recently written first.", (
    Field("status", default="", description="open|mitigated|resolved (an explicit status includes archived)."),
    Field("service", default="", description="Only this service (any case)."),
    Field("open_followups", "boolean", False, "Only reports with open `- [ ]` follow-ups (archived too)."),
    Field("all", "boolean", False, "Include archived (resolved) reports.", cli="include_all"),
    Field("limit", "integer", 50, f"At most N rows (max {LISTING_MAX_LIMIT}).", metavar="N", minimum=LIMIT_MIN, maximum=LISTING_MAX_LIMIT),
), example="kyb incidents --service checkout --all")

DEADLINES = Operation("deadlines", "Open tasks overdue or due within their reminder window (default 3 days): "
                      "overdue first, hard deadlines first within each group, then by date.", (
    TODAY,
    Field("fail_on", default="none", enum=("overdue", "hard", "none"), doors=("cli",), description=(
        "Exit 3 when a task is overdue (overdue) or a hard deadline is overdue (hard); an exit status is the "
        "CLI's alone (CI gates)")),
), example="kyb deadlines --fail-on hard")

STALE = Operation("stale", "Knowledge to check again: its last verification (else last change) older than "
                  "`days` days, a verification that no longer covers its text, or a passed review_by date.", (
    Field("days", "integer", None, "Older than N days counts as stale (default: config stale.days, else 90).",
          minimum=0, metavar="N"),
    Field("today", description="Judge as if today were YYYY-MM-DD.", metavar="DATE"),
    Field("fail", "boolean", False, "Exit 3 when anything is stale (CI); the list goes to stderr.", doors=("cli",)),
), example="kyb stale --days 30 --fail", doors=("cli", "mcp"))

RULES = Operation("rules", "The store's standing rules for agents: live knowledge tagged `rule`, shown first by `context`.", (),
                  example="kyb rules", doors=("cli", "mcp"))

TAGS_OP = Operation("tags", "Tags of live records with counts, lowercased, most used first.", (), example="kyb tags",
                    doors=("cli", "http"))

EXPORT = Operation("export", "A snapshot: one row per key that existed by revision `at` (default now), with its "
                   "latest content and state (active|archived|retracted).", (
    Field("at", description="A revision (sha, tag, HEAD~2); default the current commit.", metavar="REV"),
    Field("format", default="jsonl", enum=("jsonl", "json", "csv"), cli="fmt", doors=("cli", "http"),
          description="jsonl | json | csv (MCP answers the rows as JSON)."),
), example="kyb export --format json > snapshot.json")

LOG = Operation("log", "The store's activity, newest first: every commit (kyb's writes, hand commits, merges) with who made it.", (
    Field("since", description="Only commits at or after TIME (date, datetime, revision).", metavar="TIME"),
    Field("until", description="Only commits at or before TIME.", metavar="TIME"),
    Field("agent", default="", description="Only commits whose Kyb-Agent is AGENT (any case)."),
    Field("author", default="", description="Only commits whose author name or email contains AUTHOR."),
    Field("kind", description="Only commits touching records of this kind.", enum=KINDS, metavar="KIND"),
    Field("key", default="", description="Only commits touching this record."),
    Field("limit", "integer", 50, "At most N commits.", metavar="N", minimum=LIMIT_MIN, maximum=LOG_LIMIT),
), example="kyb log --since 2026-11-30 --agent claude", doors=("cli", "mcp"))

CONTEXT = Operation("context", "The session-start digest: what changed recently, open incidents, deadlines, most "
                    "used tags, counts.", (
    Field("brief", "boolean", False, "About 50 tokens: counts, open incidents, overdue tasks, top tags."),
    Field("hook_json", "boolean", False, "Print the JSON a Claude Code SessionStart hook expects (additionalContext).",
          cli="hook", doors=("cli",)),
    Field("days", "integer", 7, "How far back 'changed recently' reaches.", minimum=0, maximum=3650),
    TODAY,
), example="kyb context --brief")

RECALL = Operation("recall", "What the store holds that bears on `text`, only when the answer is confident: at most "
                  "3 strong hits with their freshness, else none.", (
    Field("text", default="", description="The request or question, as typed.", positional=True, metavar="[TEXT]...",
          example="switch checkout to the new port"),
    Field("limit", "integer", 3, "At most this many hits.", minimum=LIMIT_MIN, maximum=3),
    Field("hook_json", "boolean", False, "Read a prompt hook's JSON on stdin, print the hook answer or nothing "
          "(a hook command line is the CLI's alone).", cli="hook", doors=("cli",)),
), example="kyb recall 'switch checkout to the new port'")

READS_OP = Operation("reads", "Who read record KEY, which version and how, newest first, with counts per agent.", (
    Field("key", default="", description="Record key.", positional=True, metavar="[KEY]", example="checkout-path"),
    Field("agent", default="", description="Only reads by this agent label."),
    Field("session", default="", description="Only reads in this session label (narrows agent)."),
    Field("since", description="Only reads at or after TIME (date, datetime, revision).", metavar="TIME"),
    Field("until", description="Only reads at or before TIME.", metavar="TIME"),
    Field("unread_since", description="List live records nobody read since TIME.", metavar="TIME"),
    Field("misses", "boolean", False, "List questions that found nothing confident (secrets cut out)."),
    Field("limit", "integer", 50, "At most N rows.", metavar="N", minimum=LIMIT_MIN, maximum=LOG_LIMIT),
), example="kyb reads checkout-path --agent claude-code")

CLI = ("cli",)  # the operations below are the command line's alone: a store's upkeep from a shell

SYNC = Operation("sync", "Pull the remote's records (every peer's input checked), then push this store's.", (),
                 example="kyb sync", doors=CLI)
DOCTOR = Operation("doctor", "What is wrong with this store and this install, with the fix for each.", (
    Field("fix", "boolean", False, "First repair the working tree: finish an interrupted update, "
          "restore record files missing or staged wrong (never a hand edit)."),
), example="kyb doctor --fix", doors=CLI)
INDEX = Operation("index", "Bring the index up to date and show its vector status; `embed` fills every missing vector.", (
    Field("embed", "boolean", False, "Embed every version that lacks a vector (user cache first)."),
), example="kyb index --embed", doors=CLI)
REINDEX = Operation("reindex", "Rebuild the search index from every commit (the index is only a cache).", (),
                    example="kyb reindex", doors=CLI)
EDIT = Operation("edit", "Open record KEY in $VISUAL/$EDITOR; saving writes one new version, checked as every write.",
                 (KEY,), example="kyb edit checkout-path", doors=CLI)
REMOTE = Operation("remote", "Show the shared Git remote `kyb sync` uses, or set it to `url`.", (
    Field("url", description="The remote to set (none: show it).", positional=True, metavar="[URL]"),
), example="kyb remote git@example.org:team/memory.git", doors=CLI)
IMPORT = Operation("import", "Import Markdown files and folders (recursively), or the JSONL/JSON/CSV `kyb export` writes: each record an upsert.", (
    Field("paths", "strings", None, "Files or folders to import.", required=True, positional=True, metavar="PATH…"),
    Field("format", default="auto", enum=("auto", "md", "jsonl", "json", "csv"), cli="fmt",
          description="auto: Markdown in folders and *.md; .jsonl/.json/.csv as `kyb export` writes them."),
    Field("kind", default="knowledge", enum=KINDS, description="Kind of the records made from Markdown files."),
    Field("tags", "strings", [], "Tags added to every imported record."),
    Field("key_from", default="path", enum=("path", "title", "front-matter"), description=(
        "Key of a file whose front matter has no `key`: a slug of its path (relative to the folder) or of its "
        "title; front-matter skips files without one.")),
    Field("exclude", "strings", [], ".gitignore-style pattern to leave out (repeatable); .gitignore files are "
          "honoured too.", cli="excludes", metavar="PATTERN", multiple=True),
    Field("dry_run", "boolean", False, "Answer what would change; write nothing."),
    Field("one_commit", "boolean", False, "One commit for every created or updated record."),
    Field("sync_deletes", "boolean", False, "Retract records whose source file disappeared since the last import "
          "of that folder."),
), example="kyb import notes/ --tags imported", doors=CLI)
MIGRATE = Operation("migrate", "Move an old flat store to the fanned-out layout: one commit, no new versions.", (),
                    example="kyb migrate", doors=CLI)

# The operations whose answer carries the deadlines block and that take the reader's `today` in the MCP
# and HTTP doors (the CLI prints the block on stderr): a door parameter, not a field of the operation.
DATED = ("query", "get", "tasks", "incidents")

OPERATIONS: dict[str, Operation] = {op.name: op for op in (
    QUERY, GET, HISTORY, DIFF, ADD, ADD_MANY, RM, VERIFY, INCIDENT, RESOLVE, TASK, TASK_STATUS, DONE, TASKS, INCIDENTS,
    DEADLINES, STALE, RULES, TAGS_OP, EXPORT, LOG, CONTEXT, RECALL, READS_OP, SYNC, DOCTOR, INDEX, REINDEX, EDIT, REMOTE,
    IMPORT, MIGRATE)}


def example(name: str) -> str:
    """`Example: kyb …`, the --help epilog of operation `name` (\b keeps Click from rewrapping it)."""
    return f"\b\nExample:\n  {OPERATIONS[name].example}"


def _spelling(name: str, door: str) -> str:
    """How a caller of `door` (cli | mcp | http) spells parameter `name`: the table's field when it has
    one (`q` for `text` over HTTP), else the door's rule (`--remind-days` on the CLI)."""
    for op in OPERATIONS.values():
        for f in op.fields:
            if f.name == name and not (door == "cli" and f.positional):
                return f.spelling(door)
    return "--" + name.replace("_", "-") if door == "cli" else name


def out_of_bounds(minimum: int | None, maximum: int | None, number: int) -> str | None:
    """Why `number` is outside minimum..maximum, in the one wording every door shows, or None."""
    span = f" ({minimum} to {maximum})" if minimum is not None and maximum is not None else ""
    if minimum is not None and number < minimum:
        return f"must be at least {minimum}{span}"
    if maximum is not None and number > maximum:
        return f"must be at most {maximum}{span}"
    return None


def spelled(exc: Any, door: str) -> str:
    """The message of a KybError with each parameter it names in the caller's spelling: the core says
    `remind_days`, the CLI shows `--remind-days`, MCP and HTTP keep `remind_days`."""
    message = exc.message
    for name in getattr(exc, "fields", ()):
        message = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", lambda _m, n=name: _spelling(n, door),
                         message, count=1)
    return message


def check_arguments(where: str, given: Any, known: Any) -> None:
    """UsageError (exit 2) when `given` holds a name `where` does not take: the door that has no
    parser of its own to say so (MCP) names the argument, lists the known ones and, when one is close,
    asks `did you mean` (difflib, as Click does on the CLI). A misspelled `att` or `limt` is refused,
    never ignored: ignoring it answers another question than the one asked."""
    import difflib

    from kyb_cli.core.errors import UsageError
    from kyb_cli.core.records.secrets import shown

    names = list(known)
    unknown = [name for name in given if name not in names]
    if not unknown:
        return
    name = str(unknown[0])
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" — did you mean '{close[0]}'?" if close else ""
    more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
    raise UsageError(f"{where}: unknown argument '{shown(name)}'{more}{hint} "
                     f"Known: {', '.join(names) or 'none'}.")
