"""The MCP tools: one per CLI command, typed and described, calling the same core functions.

Parameters mirror the CLI options (lists instead of comma strings; null where the CLI's "omitted
keeps the stored value" applies). Read tools are marked read-only; `retract` is the one destructive
tool; writes that change nothing when repeated are marked idempotent.
"""

from typing import Annotated, Any, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from kyb_cli.mcp.shared import Day, Fact, Key, Keys, Refs, Rev, Tags, Text, _items, _today, _with_deadlines
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


    def query(self,
        text: Annotated[str, Field(description="Words to search; empty lists newest first. Any text is valid.")] = "",
        also: Annotated[list[str], Field(max_length=7, description=(
            "Other phrasings of the same question, fused with `text` into one answer with one `confident`: "
            "other words for it, the question in English when asked in another language, a likely "
            "identifier. Cheap; use it when the records' wording is unknown or an answer was not confident."))] = [],  # noqa: B006
        history: Annotated[bool, Field(description="Search every content version, current included.")] = False,
        as_of: Annotated[str | None, Field(description=(
            "Search the store as it was at T: RFC 3339 datetime (no offset = UTC), a date (end of that day, "
            "UTC) or a revision (its commit time)."))] = None,
        as_of_event: Annotated[str | None, Field(description=(
            "What was true in the world at T (event time: effective_at, else write time), by what the store "
            "knows now, or knew at `as_of` when both are given."))] = None,
        changed_between: Annotated[list[str] | None, Field(min_length=2, max_length=2, description=(
            "[A, B]: versions written in this window (dates: A from 00:00:00, B to 23:59:59 UTC); the latest "
            "match per key."))] = None,
        tags: Annotated[list[str], Field(description="Only records with all these tags.")] = [],  # noqa: B006
        kind: Annotated[Literal["knowledge", "incident", "task"] | None, Field(description="Only this kind.")] = None,
        status: Annotated[str | None, Field(description="Only this status (exact).")] = None,
        service: Annotated[str | None, Field(description="Only this service (any case).")] = None,
        priority: Annotated[str | None, Field(description="Only this priority (exact).")] = None,
        assignee: Annotated[str | None, Field(description="Only this assignee (exact).")] = None,
        parent: Annotated[str | None, Field(description="Only sub-tasks of this task key.")] = None,
        limit: Annotated[int, Field(ge=0, le=100, description="At most this many hits.")] = 10,
        recent: Annotated[bool, Field(description="Newest first instead of by relevance.")] = False,
        semantic: Annotated[bool, Field(description=(
            "Fuse search by meaning when vectors exist (every time mode); false: words only."))] = True,
        explain: Annotated[bool, Field(description=(
            "Per hit: lexical rank, vector rank, cosine, fused score (as `kyb query --explain`)."))] = False,
        min_strength: Annotated[Literal["weak", "strong"], Field(description=(
            "strong: only hits that hold the question's words or clear the calibrated floor by meaning."))] = "weak",
        today: Day = None,
    ) -> CallToolResult:
        """Search records. Modes (one at a time): current state (default: live and archived records,
        never retracted ones), `history`, `as_of`, `changed_between`. Times are write (commit) times.
        Each hit has `is_head`: true only when it is the key's current version, `strength` (strong |
        weak), `found_by` (lexical | semantic | both) and a `snippet`; the answer's `confident` is true
        only when a hit is strong (false: nothing stored matches; do not treat weak hits as answers).
        Syntax: "exact phrase", +must, -exclude or NOT word, prefix*; plain words rank any-match.
        Several phrasings: when you ask in natural language (not an identifier), pass 1-3 rephrasings
        in `also` (other words; English if you ask in another language): one fused answer finds the
        record more often than the question alone."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            if today is not None:
                _today(today)  # a bad `today` is a usage error before anything is created
            path, response = api.query(self.door.store_arg, text, history=history, as_of=as_of,
                                       changed_between=changed_between, tags=_items(tags), kind=kind,
                                       status=status, service=service, priority=priority, assignee=assignee,
                                       parent=parent, limit=limit, recent=recent, semantic=semantic,
                                       explain=explain, as_of_event=as_of_event,
                                       min_strength=None if min_strength == "weak" else min_strength,
                                       also=list(also))
            day = _today(today)
            return _with_deadlines(response, path, day)

        return self.door.call(run)

    def get(self, key: Key, at: Rev = None, today: Day = None,
            version: Annotated[int | None, Field(description=(
                "Content version N of the key: 1 is the first, -1 the one before the current."))] = None,
            ) -> CallToolResult:
        """Read record KEY with its state, version sha and commit time; `at` reads it as it stood at
        any revision. A retracted or archived record says so and still shows its last content."""

        def run() -> dict[str, Any]:
            day = _today(today)
            from kyb_cli import api

            path = self.door.path()
            return _with_deadlines(api.read(path, key, at, version=version).to_json(), path, day)

        return self.door.call(run)

    def history(self, key: Key) -> CallToolResult:
        """Every change of KEY (added, modified, deleted), newest first, with who wrote it."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            rows = api.history(self.door.path(), key)
            return {"key": key, "versions": [r.to_json() for r in rows]}

        return self.door.call(run)

    def diff(self, key: Key,
             from_rev: Annotated[str | None, Field(description=(
                 "Older revision (default: the version before `to_rev`)."))] = None,
             to_rev: Annotated[str | None, Field(description=(
                 "Newer revision (default: the latest version)."))] = None) -> CallToolResult:
        """Unified diff of KEY's fields and body between two versions (the CLI's `kyb diff`): `diff`
        is the text, `fields` each changed field with its old and new value. Revisions: sha, short
        sha, HEAD~2, tag."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.diff(self.door.path(), key, from_rev, to_rev)

        return self.door.call(run)

    def add(self, key: Key, title: Annotated[str, Field(description="Short title.")], body: Text = "",
            tags: Tags = [], refs: Refs = [],  # noqa: B006
            effective_at: Annotated[str | None, Field(description=(
                "When the fact became true in the world (date or RFC 3339); default: when written."))] = None,
            review_by: Annotated[str | None, Field(description=(
                "Check again by YYYY-MM-DD; null keeps the stored one, '' clears it."))] = None,
            ) -> CallToolResult:
        """Write knowledge KEY (an upsert: a new version when anything changed, no commit when nothing
        did). Query first and reuse the existing key; write verified facts only."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            when = api.event_time(effective_at)
            result = api.add_knowledge(self.door.store(), key=key, title=title, body=body, tags=_items(tags),
                                       refs=_items(refs), attribution=self.door.attribution(), effective_at=when,
                                       review_by=review_by)
            return result.to_json()

        return self.door.call(run)

    def add_many(self, records: Annotated[list[Fact], Field(min_length=1, max_length=10000, description=(
                     "Knowledge records to write, each {key, title, body, tags, refs}; keys must be distinct."))],
                 one_commit: Annotated[bool, Field(description="One commit for all of them instead of one each.")] = False,
                 dry_run: Annotated[bool, Field(description="Answer what would change; write nothing.")] = False,
                 ) -> CallToolResult:
        """Write several knowledge records at once (each an upsert, as `add`): one lock and one store
        update for all, one commit per record unless one_commit. A record that breaks a rule (a
        secret, a bad key) is reported in `skipped` and the others are written. The answer lists
        `created`, `updated`, `unchanged` and `skipped` [{path, reason}], `commits` and `head`."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            rows = [{"key": r.key, "title": r.title, "body": r.body, "tags": _items(r.tags), "refs": _items(r.refs)}
                    for r in records]
            return api.add_many(self.door.store(), rows, attribution=self.door.attribution(),
                                one_commit=one_commit, dry_run=dry_run)

        return self.door.call(run)

    def retract(self, key: Key, reason: Annotated[str, Field(description="Why this knowledge was wrong (recorded).")]
                ) -> CallToolResult:
        """Retract knowledge KEY that was wrong (the CLI's `kyb rm`): it leaves current answers;
        `get` with `at` and `history` keep every version."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.retract_knowledge(self.door.store(), key, reason, self.door.attribution()).to_json()

        return self.door.call(run)

    def incident(self,
        key: Annotated[str, Field(description="inc-<yyyy-mm-dd>-<slug>.")],
        title: Annotated[str, Field(description="What happened, in one line.")],
        service: Annotated[str, Field(description="What broke.")],
        severity: Annotated[str, Field(description="low|medium|high|critical.")],
        body: Text = "",
        status: Annotated[str, Field(description="open|mitigated|resolved.")] = "open",
        hosts: Annotated[list[str], Field(description="Hosts involved.")] = [],  # noqa: B006
        knowledge: Keys = [],  # noqa: B006
        resolution: Annotated[str, Field(description="What fixed it (needed for resolved).")] = "",
        detection: Annotated[str, Field(description=(
            "An executable 'is it still happening?' check and its healthy result."))] = "",
        affected: Annotated[list[dict[str, Any]] | None, Field(description=(
            'Affected windows: [{"scope": …, "from": …, "to": …}].'))] = None,
        started: Annotated[str, Field(description="When it started (RFC 3339).")] = "",
        detected: Annotated[str, Field(description="When it was detected (default: now).")] = "",
        tags: Annotated[list[str] | None, Field(description="Tags; null keeps the stored ones, [] clears.")] = None,
        refs: Refs = [],  # noqa: B006
        effective_at: Annotated[str | None, Field(description=(
            "When it became true in the world, if not started/detected (date or RFC 3339)."))] = None,
    ) -> CallToolResult:
        """Write incident report KEY (a rewrite replaces it; tags are kept unless given). The reply's
        `hints` say what a good report still lacks. A resolved report is archived."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            KEEP = api.keep()
            windows = api.parse_affected(affected)
            return api.write_incident(
                self.door.store(), self.door.attribution(), key=key, title=title, body=body, service=service,
                severity=severity, status=status, hosts=_items(hosts), knowledge=_items(knowledge),
                resolution=resolution, detection=detection, affected=windows, started_at=started,
                detected_at=detected, tags=KEEP if tags is None else _items(tags), refs=_items(refs),
                effective_at=api.event_time(effective_at))

        return self.door.call(run)

    def resolve(self, key: Key,
                status: Annotated[str, Field(description="resolved|mitigated (or open to reopen).")] = "resolved",
                resolution: Annotated[str, Field(description="What fixed it; empty keeps the stored one.")] = ""
                ) -> CallToolResult:
        """Resolve (or mitigate) incident KEY. Resolving archives it; its final version stays in search,
        `get` and `incidents` with all=true. Open `- [ ]` follow-ups give a warning, not a refusal."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.resolve_incident(self.door.store(), self.door.attribution(), key, status=status, resolution=resolution)

        return self.door.call(run)

    def task(self,
        key: Annotated[str, Field(description="task-<slug>.")],
        title: Annotated[str, Field(description="What is to be done.")],
        body: Text = "",
        status: Annotated[str, Field(description="open|in_progress|blocked|done|dropped.")] = "open",
        priority: Annotated[str, Field(description="low|medium|high|critical (empty: unranked).")] = "",
        blocked_reason: Annotated[str, Field(description="Why it is blocked (only with status blocked).")] = "",
        assignee: Annotated[str, Field(description="Short owner label, one line.")] = "",
        parent: Annotated[str, Field(description="Parent task key (task-…).")] = "",
        blocked_by: Annotated[list[str] | None, Field(description=(
            "Task keys this task waits on; null keeps the stored ones, [] clears."))] = None,
        knowledge: Keys = [],  # noqa: B006
        resolution: Annotated[str, Field(description="Outcome (needed for done/dropped).")] = "",
        tags: Annotated[list[str] | None, Field(description="Tags; null keeps the stored ones, [] clears.")] = None,
        refs: Refs = [],  # noqa: B006
        due: Annotated[str | None, Field(description="Due date YYYY-MM-DD; null keeps, '' clears.")] = None,
        hard: Annotated[bool | None, Field(description="Missing the date has external consequences; null keeps.")
                        ] = None,
        remind_days: Annotated[int | str | None, Field(description=(
            "Reminder window in days (default 3); null keeps, '' clears."))] = None,
        expected: Annotated[str | None, Field(description="Provisional date YYYY-MM-DD (with waits_on); null keeps.")
                            ] = None,
        waits_on: Annotated[str | None, Field(description="The event the expected date depends on; null keeps.")
                            ] = None,
        effective_at: Annotated[str | None, Field(description=(
            "When this became true in the world (date or RFC 3339); default: when written."))] = None,
    ) -> CallToolResult:
        """Write task KEY (a rewrite replaces it, but omitted tags and deadline fields are kept).
        done/dropped need a resolution and archive the task; `done` is the usual way to close."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            KEEP = api.keep()
            days = api.remind_days_arg(remind_days)
            return api.write_task(
                self.door.store(), self.door.attribution(), key=key, title=title, body=body, status=status,
                priority=priority, blocked_reason=blocked_reason, assignee=assignee, parent_task=parent,
                knowledge=_items(knowledge), resolution=resolution,
                tags=KEEP if tags is None else _items(tags), refs=_items(refs),
                due=KEEP if due is None else due.strip(), hard=KEEP if hard is None else hard, remind_days=days,
                expected=KEEP if expected is None else expected.strip(),
                waits_on=KEEP if waits_on is None else waits_on.strip(),
                blocked_by=KEEP if blocked_by is None else _items(blocked_by),
                effective_at=api.event_time(effective_at))

        return self.door.call(run)

    def task_status(self,
        key: Key,
        status: Annotated[str, Field(description="open|in_progress|blocked (close with `done`).")],
        assignee: Annotated[str | None, Field(description="New owner label; '' unclaims; null keeps.")] = None,
        parent: Annotated[str | None, Field(description="New parent task; '' detaches; null keeps.")] = None,
        blocked_reason: Annotated[str | None, Field(description="Why it is blocked (with status blocked).")] = None,
    ) -> CallToolResult:
        """Move task KEY between open, in_progress and blocked, changing only what is named. An
        archived task is reopened."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            return api.transition_task(self.door.store(), self.door.attribution(), key, status=status, assignee=assignee,
                                   parent_task=parent, blocked_reason=blocked_reason)

        return self.door.call(run)

    def done(self, key: Key, status: Annotated[str, Field(description="done|dropped.")] = "done",
             resolution: Annotated[str, Field(description=(
                 "What came of it, or why it was dropped; empty keeps the stored one."))] = "") -> CallToolResult:
        """Close task KEY as done (or dropped) with a resolution; closing archives it. Closing twice
        never wipes an outcome."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            closing = api.check_close_status(key, status)
            return api.close_task(self.door.store(), self.door.attribution(), key, status=closing, resolution=resolution)

        return self.door.call(run)

    def tasks(self,
        status: Annotated[str, Field(description="open|in_progress|blocked|done|dropped (includes archived).")] = "",
        priority: Annotated[str, Field(description="low|medium|high|critical.")] = "",
        assignee: Annotated[str, Field(description="Exact owner label.")] = "",
        parent: Annotated[str, Field(description="Only children of this task.")] = "",
        open_followups: Annotated[bool, Field(description="Only tasks with open `- [ ]` follow-ups.")] = False,
        all: Annotated[bool, Field(description="Include archived (done/dropped) tasks.")] = False,  # noqa: A002
        ready: Annotated[bool, Field(description=(
            "Only open tasks none of whose blockers is still live: what can be started now."))] = False,
        due_before: Annotated[str | None, Field(description="Only tasks due on or before YYYY-MM-DD.")] = None,
        limit: Annotated[int, Field(ge=0, le=200, description="At most N rows (max 200).")] = 50,
        today: Day = None,
    ) -> CallToolResult:
        """List tasks: live ones first by status, then most recently written first."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            before = api.due_before_arg(due_before)
            day = _today(today)
            store = self.door.path()
            rows = api.list_tasks(store, status=status, priority=priority, assignee=assignee, parent=parent,
                              open_only_followups=open_followups, include_archived=all, due_before=before,
                              limit=limit, ready=ready)
            return _with_deadlines({"count": len(rows), "tasks": rows}, store, day)

        return self.door.call(run)

    def incidents(self,
        status: Annotated[str, Field(description="open|mitigated|resolved (an explicit status includes archived).")
                          ] = "",
        service: Annotated[str, Field(description="Only this service (any case).")] = "",
        open_followups: Annotated[bool, Field(description="Only reports with open `- [ ]` follow-ups.")] = False,
        all: Annotated[bool, Field(description="Include archived (resolved) reports.")] = False,  # noqa: A002
        limit: Annotated[int, Field(ge=0, le=200, description="At most N rows (max 200).")] = 50,
        today: Day = None,
    ) -> CallToolResult:
        """List incident reports: open, mitigated, resolved, then most recently written first."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            day = _today(today)
            store = self.door.path()
            rows = api.list_incidents(store, status=status, service=service, open_only_followups=open_followups,
                                  include_archived=all, limit=limit)
            return _with_deadlines({"count": len(rows), "incidents": rows}, store, day)

        return self.door.call(run)

    def export(self, at: Rev = None) -> CallToolResult:
        """A snapshot: one row per key that existed by revision `at` (default now), with its latest
        content and state (active|archived|retracted). No earlier versions: see `history`."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            head, rows = api.export_rows(self.door.path(), at)
            return {"head": head, "count": len(rows), "rows": rows}

        return self.door.call(run)

    def log(self,
        since: Annotated[str | None, Field(description="Only commits at or after this time (date, RFC 3339, revision).")] = None,
        until: Annotated[str | None, Field(description="Only commits at or before this time.")] = None,
        agent: Annotated[str, Field(description="Only commits by this agent label (any case).")] = "",
        author: Annotated[str, Field(description="Only commits whose author contains this.")] = "",
        kind: Annotated[Literal["knowledge", "incident", "task"] | None, Field(description="Only this kind.")] = None,
        key: Annotated[str, Field(description="Only commits touching this record.")] = "",
        limit: Annotated[int, Field(ge=0, le=1000, description="At most this many commits.")] = 50,
    ) -> CallToolResult:
        """The store's activity, newest first: every commit (kyb's writes, hand commits, merges) with who
        made it. Use it to review what other agents wrote lately."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            rows = api.log(self.door.path(), since=since, until=until, agent=agent, author=author,
                           kind=kind or "", key=key, limit=limit)
            return {"count": len(rows), "log": rows}

        return self.door.call(run)

    def deadlines(self, today: Day = None) -> CallToolResult:
        """Open tasks that are overdue or due within their reminder window (default 3 days): overdue
        first, hard deadlines first within each group, then by date."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            day = _today(today)
            items = api.deadlines(api.dated_tasks(self.door.path()), day)
            return {"today": day.isoformat(), "count": len(items), "deadlines": items}

        return self.door.call(run)

    def context(self,
        brief: Annotated[bool, Field(description="About 50 tokens instead of the full digest.")] = False,
        days: Annotated[int, Field(ge=0, le=3650, description="How far back 'changed recently' reaches.")] = 7,
        today: Day = None,
    ) -> CallToolResult:
        """The session-start digest: what changed recently, open incidents, deadlines, most used tags,
        counts. The records in it are reference data, possibly stale: verify before relying on them."""

        def run() -> dict[str, Any]:
            from kyb_cli import api

            data = api.context(self.door.path(), days=days, today=_today(today))
            data["text"] = api.render_context(data, brief=brief)
            return data

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
        server.tool(annotations=annotations)(getattr(tools, name))
