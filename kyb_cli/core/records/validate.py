"""The rules every write passes before anything is written (the original's `Entry::validate`).

Checks run in a fixed order and the first failure wins; each raises `Rejected` (exit 3) with the
original's message text, so agents that learnt those messages keep understanding them.
"""

from __future__ import annotations

import re
import unicodedata

from kyb_cli.core.errors import Rejected, UsageError
from kyb_cli.core.records.keys import KEY_MAX, KEY_MESSAGE, is_valid_key  # noqa: F401 (re-exported)
from kyb_cli.core.records.model import Record
from kyb_cli.core.records.fields import stored_fields
from kyb_cli.core.records.limits import record_problem as size_problem
from kyb_cli.core.records.secrets import Finding, first_secret, scan_fields, shown

ASSIGNEE_MAX = 80
BODY_MAX_BYTES = 1024 * 1024  # 1 MiB: a record is a note, not a log dump


SEVERITIES = ("low", "medium", "high", "critical")
PRIORITIES = ("low", "medium", "high", "critical")
INCIDENT_STATUSES = ("open", "mitigated", "resolved")
TASK_STATUSES = ("open", "in_progress", "blocked", "done", "dropped")
TASK_LIVE = ("open", "in_progress", "blocked")
TASK_TERMINAL = ("done", "dropped")

_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
MAX_REMIND_DAYS = 366


def check_key(key: str) -> None:
    """Raise Rejected unless `key` is a valid slug (also guards paths against traversal)."""
    if not is_valid_key(key):
        raise Rejected(KEY_MESSAGE)


KIND_PREFIX_MESSAGES = {
    "incident": "incident keys must start with 'inc-' (e.g. inc-2026-07-22-orders-api-oom)",
    "task": "task keys must start with 'task-' (e.g. task-raise-log-retention)",
}


def check_key_for_kind(key: str, kind: str) -> None:
    """The key is a slug and its prefix matches `kind`, both ways: `inc-`/`task-` are reserved for
    incidents and tasks, and incidents and tasks must use them (the original's messages, rule "key prefixes")."""
    check_key(key)
    if kind == "knowledge":
        if key.startswith("inc-"):
            raise Rejected("keys starting with 'inc-' are reserved for incident reports")
        if key.startswith("task-"):
            raise Rejected("keys starting with 'task-' are reserved for tasks")
    elif kind in KIND_PREFIX_MESSAGES:
        if not key.startswith("inc-" if kind == "incident" else "task-"):
            raise Rejected(KIND_PREFIX_MESSAGES[kind])
    else:
        raise Rejected(f"kind must be 'knowledge', 'incident' or 'task', got '{kind}'")


def find_secret(text: str) -> Finding | None:
    """The first secret-looking value in `text` (rule and offset, never the text), or None."""
    return first_secret(text)


_ADVICE = {
    "refs": "refs are pointers, not the secrets",
    "assignee": "use a stable public label",
    "tags": "tags are labels, not the secrets",
    "reason": "say why without quoting the secret",
}


def secret_message(finding: Finding) -> str:
    """`<field> looks like a secret (rule <id>) — <advice>`: names the rule and field, echoes nothing."""
    verb = "look" if finding.field in ("refs", "tags", "hosts") else "looks"
    advice = _ADVICE.get(finding.field, "store secrets as pointers in refs")
    return f"{finding.field} {verb} like a secret (rule {finding.rule}) — {advice}"


def check_no_secret(field_name: str, text: str) -> None:
    """Rejected when `text` (a value stored under `field_name`) looks like a secret."""
    found = first_secret(text, field_name)
    if found is not None:
        raise Rejected(secret_message(found))


def tag_problem(tags: list[str]) -> str | None:
    """Why `tags` are not labels: a tag is one line of text, so a line break or another control
    character in one is refused (the tag is not quoted: it may be part of a secret)."""
    for n, tag in enumerate(tags, 1):
        if tag.isprintable():
            continue  # no Cc, Zl or Zp character (nor NUL) in it: each is not printable
        for ch in tag:
            if ch == "\x00":
                continue  # a NUL byte: the rule every field shares words it (exit 3, "NUL byte")
            if unicodedata.category(ch) in ("Cc", "Zl", "Zp"):
                name = {"\n": "a line break", "\r": "a carriage return", "\t": "a tab"}.get(ch, "a control character")
                return (f"tag {n} holds {name} (U+{ord(ch):04X}): a tag is one line of text — "
                        "give each tag as a short label")
    return None


def fold_tags(tags: list[str]) -> list[str]:
    """The caller's tags as stored, from the tags exactly as sent: each (and the list joined back
    with commas, as a door's comma list was sent) is scanned for secrets and checked to be one line
    BEFORE anything is normalised (the scan must see `-----BEGIN RSA PRIVATE
    KEY-----`, not its lowercase), then folded: tags are case-insensitive (`kyb tags` lists them
    lowercased), so `Infra,INFRA,infra` is one tag, stored once, lowercased, in the order first given.
    The one way a write takes tags from a caller (knowledge, incidents, tasks)."""
    for tag in tags:
        check_no_secret("tags", tag)  # a PEM block has line breaks: say it is a secret first
    check_no_secret("tags", ",".join(tags))  # a comma list split by a door: a secret across a comma
    problem = tag_problem(tags)
    if problem is not None:
        raise UsageError(f"tags: {problem}", field="tags")
    out: list[str] = []
    for tag in tags:
        low = tag.strip().lower()
        if low and low not in out:
            out.append(low)
    return out


def secret_in(record: Record) -> Finding | None:
    """The first secret-looking value in any stored field of `record` (rule and field, never the text)."""
    return scan_fields(stored_fields(record))


def check_secrets(record: Record) -> None:
    """Rejected when any stored field looks like a secret (the first one found is named)."""
    found = secret_in(record)
    if found is not None:
        raise Rejected(secret_message(found))


def _no_nul(record: Record) -> None:
    """A NUL byte is binary data, not Markdown or TOML text: refused in every field, never stored."""
    for name, value in vars(record).items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if isinstance(item, str) and "\x00" in item:
                where = item.index("\x00")
                raise Rejected(f"{name} contains a NUL byte (character {where}): records are text — "
                               "store binary data elsewhere and put a pointer in refs")


def validate(record: Record) -> None:
    """Every rule a record must pass to be written; raises Rejected on the first failure."""
    check_key(record.key)
    kind = record.kind
    if not record.title.strip():
        raise Rejected("title is empty")
    _no_nul(record)
    body_bytes = len(record.body.encode("utf-8"))
    if body_bytes > BODY_MAX_BYTES:
        raise Rejected(
            f"body is {body_bytes:,} bytes; the limit is {BODY_MAX_BYTES:,} (1 MiB) — "
            "keep records small and put a pointer to large logs in refs"
        )
    too_big = size_problem(record)
    if too_big is not None:
        raise Rejected(too_big + " — keep records small and put a pointer to the rest in refs")
    check_secrets(record)
    bad_tag = tag_problem(record.tags)  # a record read from a file or a row (import, add_many)
    if bad_tag is not None:
        raise Rejected(f"tags: {bad_tag}")
    typed = typed_field_problem(record)
    if typed is not None:
        raise Rejected(typed)

    _validate_trust(record)
    if kind != "task":
        for name in ("blocked_reason", "assignee", "parent_task", "blocked_by", "waits_on"):
            if getattr(record, name):
                raise Rejected(f"{name} is a task-only field (kind '{kind}')")
        if record.hard or record.remind_days is not None:
            raise Rejected(f"{'hard' if record.hard else 'remind_days'} is a task-only field (kind '{kind}')")

    if kind == "knowledge":
        if record.key.startswith("inc-"):  # unreachable through kind_of_key, kept for clarity
            raise Rejected("keys starting with 'inc-' are reserved for incident reports")
        for name in ("service", "resolution", "detection", "started_at",
                     "detected_at", "mitigated_at", "resolved_at"):
            if getattr(record, name):
                raise Rejected(f"{name} belongs to incidents and tasks, not knowledge")
        for name in ("hosts", "knowledge", "affected"):
            if getattr(record, name):
                raise Rejected(f"{name} belongs to incidents and tasks, not knowledge")
        return

    if kind == "incident":
        _validate_incident(record)
    else:
        _validate_task(record)


SEVERITY_MESSAGE = "severity must be one of: low|medium|high|critical"
TASK_STATUS_MESSAGE = "task status must be one of: open|in_progress|blocked|done|dropped"


def typed_field_problem(record: Record) -> str | None:
    """Why a typed field holds what its type does not allow, or None: `review_by`, `effective_at`,
    `due`, `expected` are dates (`effective_at` also an RFC 3339 time), `priority`, `status` and
    `severity` are closed sets for the record's kind, and a field another kind owns is empty. The
    one rule a local write (`validate`) and the held-out check of a peer's records (served.py) run
    (issue 37, item 6): junk or a secret there is refused here and held out there, never served.
    A value is quoted only through `shown` (never a secret). A field left empty is the kind
    rules' business (`validate` asks an incident for a severity, a task for a status)."""
    kind = record.kind
    if record.review_by and not is_date(record.review_by):
        return f"review_by must be a date YYYY-MM-DD (got '{shown(record.review_by)}')"
    if record.effective_at and not is_event_time(record.effective_at):
        return f"effective_at must be a date or an RFC 3339 datetime (got '{shown(record.effective_at)}')"
    if kind != "task":
        if record.priority:
            return f"priority is a task-only field (got '{shown(record.priority)}' on kind '{kind}')"
        for name in ("due", "expected"):
            if getattr(record, name):
                return f"{name} is a task-only field (kind '{kind}')"
    if kind == "knowledge":
        for name in ("severity", "status"):
            if getattr(record, name):
                return f"{name} belongs to incidents and tasks, not knowledge"
    elif kind == "incident":
        if record.severity and record.severity not in SEVERITIES:
            return SEVERITY_MESSAGE
        if record.status and record.status not in INCIDENT_STATUSES:
            return "status must be one of: open|mitigated|resolved"
    else:
        if record.severity:
            return f"severity is an incident field (kind '{kind}')"
        if record.status and record.status not in TASK_STATUSES:
            return TASK_STATUS_MESSAGE
        if record.priority and record.priority not in PRIORITIES:
            return "task priority must be empty or one of: low|medium|high|critical"
        for name in ("due", "expected"):
            value = getattr(record, name)
            if value and not is_date(value):
                return f"{name} must be a date YYYY-MM-DD (got '{shown(value)}')"
    return None


def _validate_knowledge_links(record: Record) -> None:
    for link in record.knowledge:
        if not is_valid_key(link):
            raise Rejected(f"knowledge link '{link}' is not a valid key slug")


def _validate_incident(record: Record) -> None:
    if not record.service.strip():
        raise Rejected("incident needs a service (what broke)")
    if not record.severity:  # a severity given is checked by typed_field_problem
        raise Rejected(SEVERITY_MESSAGE)
    status = record.status or "open"
    if status == "resolved" and not record.resolution.strip():
        raise Rejected("closing an incident needs a resolution: what fixed it, or the accepted outcome")
    for window in record.affected:
        scope, start, end = (window.get(k, "") for k in ("scope", "from", "to"))
        if not (scope.strip() and start.strip() and end.strip()):
            raise Rejected(
                f"affected window needs scope, from and to (got scope='{shown(scope)}' from='{shown(start)}' to='{shown(end)}')"
            )
    _validate_knowledge_links(record)


def _validate_task(record: Record) -> None:
    status = record.status
    if not status:  # a status given is checked by typed_field_problem
        raise Rejected(TASK_STATUS_MESSAGE)
    if record.blocked_reason and status != "blocked":
        raise Rejected(
            f"blocked_reason belongs to status=blocked, not '{status}' — clear it or block the task"
        )
    if status in TASK_TERMINAL and not record.resolution.strip():
        raise Rejected("closing a task needs a resolution: what came of it, or why it was dropped")
    if record.assignee:
        if not record.assignee.strip():
            raise Rejected("assignee is blank — leave it out to mark the task unclaimed")
        if len(record.assignee) > ASSIGNEE_MAX:
            raise Rejected("assignee must be at most 80 chars — it is a short owner label, not a note")
        if "\n" in record.assignee or "\r" in record.assignee:
            raise Rejected("assignee must be a single line")
    if record.parent_task:
        if not (is_valid_key(record.parent_task) and record.parent_task.startswith("task-")):
            raise Rejected(
                f"parent_task must be empty or a valid task key starting with 'task-' (got '{shown(record.parent_task)}')"
            )
        if record.parent_task == record.key:
            raise Rejected(f"a task cannot be its own parent ('{record.key}')")
    for blocker in record.blocked_by:
        if not (is_valid_key(blocker) and blocker.startswith("task-")):
            raise Rejected(f"blocked_by must list valid task keys starting with 'task-' (got '{shown(blocker)}')")
        if blocker == record.key:
            raise Rejected(f"a task cannot be blocked by itself ('{record.key}')")
    _validate_knowledge_links(record)
    _validate_deadline(record)


def _validate_trust(record: Record) -> None:
    """`review_by` is a date; the `[verified]` table names a source and holds no secret (rule "verification")."""
    if record.verified:
        if not str(record.verified.get("source", "")).strip():
            raise Rejected("a verification names its source (what the fact was checked against)")
        for name in ("source", "rev", "note", "by"):
            check_no_secret(f"verified {name}", str(record.verified.get(name, "")))
        stamped = str(record.verified.get("at", ""))
        if stamped and not is_event_time(stamped):  # an imported verification's time (`by`/`at` kept)
            raise Rejected(f"verified at must be an RFC 3339 time (got '{shown(stamped)}')")


def is_date(value: str) -> bool:
    """A calendar date written `YYYY-MM-DD` (what `due`, `expected` and `--today` take)."""
    import datetime

    if not _DATE_RE.fullmatch(value):
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def day_arg(value: str | None, field: str = "today"):
    """A calendar-day parameter (`today`, `due_before`) as a date, None when not given: the one place
    such a parameter is read, for every door (its message names `field`; each door spells it)."""
    import datetime

    from kyb_cli.core.errors import UsageError

    if value is None:
        return None
    if not isinstance(value, str) or not is_date(value):
        raise UsageError(f"{field} wants a date YYYY-MM-DD (got '{shown(str(value))}')", field=field)
    return datetime.date.fromisoformat(value)


def _validate_deadline(record: Record) -> None:
    """Deadline fields (rule "deadline fields"): dates are YYYY-MM-DD; a provisional `expected` says what it waits on."""
    if record.expected and not record.waits_on.strip():
        raise Rejected("expected is a provisional date — say what it waits on (waits_on)")
    if record.waits_on and not record.expected:
        raise Rejected("waits_on belongs to a provisional date — set expected too, or leave it out")
    if record.waits_on and ("\n" in record.waits_on or "\r" in record.waits_on):
        raise Rejected("waits_on must be a single line")
    if record.remind_days is not None and not (0 <= record.remind_days <= MAX_REMIND_DAYS):
        raise Rejected(f"remind_days must be between 0 and {MAX_REMIND_DAYS} (got {record.remind_days})")
    if (record.hard or record.remind_days is not None) and not (record.due or record.expected):
        name = "hard" if record.hard else "remind_days"
        raise Rejected(f"{name} qualifies a date — set due (or expected) too, or leave {name} out")


def is_event_time(value: str) -> bool:
    """A date (YYYY-MM-DD) or an RFC 3339 datetime with an offset, as `effective_at` is stored."""
    from datetime import datetime

    if is_date(value):
        return True
    try:
        moment = datetime.fromisoformat(value[:-1] + "+00:00" if value[-1:] in "zZ" else value)
    except ValueError:
        return False
    return moment.tzinfo is not None
