"""Receipts (issue 40): every answer of `api.handle` that shows records is logged in the read log
(core/index/receipts.py) here, once for every door, and a record the reader last saw at another
version carries `changed_since_your_read`; `kyb reads` answers from the log.

Logging never breaks an answer: a log that cannot be written (a locked or damaged file, a label that
is not UTF-8) leaves the answer as it is, unlogged.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Any

RECEIPTED = frozenset({"get", "query", "history", "context", "recall"})
CHANGED_MAX = 5  # `changed_since_read` in `kyb context`: the newest five


def _who(door: Any) -> tuple[str, str, str, str]:
    """(agent, session, workspace, transport) as the door labels this call (a write would carry them).
    They are logged as given, on this machine only; `kyb reads` withholds one that looks like a secret
    when it shows it (the scanner costs a `kyb query` 25 ms to import: not on every answer)."""
    who = door.attribution()
    return who.agent, who.session, who.workspace, who.transport


def _shown(operation: str, fields: dict[str, Any], answer: dict[str, Any]) -> tuple[list[dict], list[tuple]]:
    """(the records shown at their current version, which may carry a warning; (key, sha, mode) rows to log)."""
    if operation == "get":
        if not answer.get("sha"):  # a snapshot's version: its commit is not indexed yet
            return [], []
        current = fields.get("at") is None and fields.get("version") is None
        return ([answer] if current else []), [(answer["key"], answer["sha"], "get")]
    if operation == "query":
        hits = [h for h in answer.get("hits", ()) if h.get("sha")]
        mode = answer.get("mode", "current")
        return (hits if mode == "current" else []), [(h["key"], h["sha"], mode) for h in hits]
    if operation == "recall":  # the strong hits of a current-mode query
        hits = [h for h in answer.get("hits", ()) if h.get("sha")]
        return hits, [(h["key"], h["sha"], "current") for h in hits]
    if operation == "history":
        now = next((v for v in answer.get("versions", ()) if v.get("current")), None)
        return [], ([(answer["key"], now["sha"], "history")] if now else [])
    recent = (answer.get("digest") or {}).get("recent", ())
    return [], [(r["key"], r["sha"], "context") for r in recent if r.get("sha")]


def receipted(operation: str, door: Any, fields: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """`answer` with its warnings (`changed_since_your_read`, `changed_since_read` in context), logged."""
    from kyb_cli.core.index import receipts

    if not receipts.enabled():
        return answer
    try:
        who = _who(door)
        path = door.path()
        current, rows = _shown(operation, fields, answer)
        if operation == "context" and "digest" in answer:  # before this answer's own reads are logged
            answer["digest"]["changed_since_read"] = changed_since_read(path, who[0], who[1])
            answer["text"] = _with_changed(answer["text"], answer["digest"]["changed_since_read"])
        miss = None  # a question that found nothing confident: logged in the same transaction
        if operation == "query" and not answer.get("confident") and (fields.get("text") or "").strip():
            miss = (fields["text"], answer.get("mode", "current"))
        # the reader's last reads of what is shown now, looked up in the transaction that logs this answer
        changed = receipts.record(path, who, rows, shown=[(r["key"], r["sha"]) for r in current], miss=miss)
        for shown in current:
            read = changed.get(shown["key"])
            if read is not None:
                shown["changed_since_your_read"] = {"read_sha": read[0], "read_at": _when(read[1]),
                                                    "current_sha": shown["sha"]}
    except Exception:  # noqa: BLE001 — a receipt is an audit aid: never the reason an answer fails
        pass
    return answer


class _Hook:
    """The prompt hook as a door: this process's labels (the agent the hook runs under), its session id."""

    def __init__(self, path: Any, session: str) -> None:
        self.store_path, self.session = path, session

    def path(self) -> Any:
        return self.store_path

    def attribution(self) -> Any:
        from kyb_cli.core.canon.attribution import detect

        who = detect("hook")
        return who if who.session or not self.session else type(who)(who.agent, self.session, who.workspace, "hook")


def hook_read(path: Any, session: str, hits: list[dict[str, Any]]) -> None:
    """The records the prompt hook (api.recall_hook) showed the agent, logged as reads of mode current."""
    receipted("recall", _Hook(path, session or ""), {}, {"hits": hits})


def _when(at: float) -> str:
    from kyb_cli.core.timestamps import rfc3339

    return rfc3339(int(at))


def changed_since_read(path: Any, agent: str, session: str) -> list[dict[str, Any]]:
    """The records this agent (session) last read at a version that is no longer current, newest read
    first (at most CHANGED_MAX), each with the fields that changed and a line about its body."""
    from kyb_cli.core.index import receipts
    from kyb_cli.core.index.fresh import with_index

    read = receipts.last_read_keys(path, agent, session)
    if not read:
        return []

    def current(f) -> dict[str, str]:
        found: dict[str, str] = {}
        keys = [key for key, _sha, _at in read]
        for i in range(0, len(keys), 500):
            part = keys[i:i + 500]
            found.update(f.conn.execute(
                f"SELECT k.key, v.sha FROM keys k JOIN versions v ON v.id = k.version_id WHERE k.key IN "
                f"({','.join('?' * len(part))}) AND v.sha IS NOT NULL", part).fetchall())
        return found

    now = with_index(path, current)
    out: list[dict[str, Any]] = []
    for key, sha, at in read:
        if key in now and now[key] != sha:
            out.append({"key": key, "read_sha": sha, "read_at": _when(at), "current_sha": now[key],
                        **_what_changed(path, key, sha, now[key])})
            if len(out) == CHANGED_MAX:
                break
    return out


def _what_changed(path: Any, key: str, old: str, new: str) -> dict[str, Any]:
    """`fields` (names, `body` among them when it changed) and `body`: one line about the body's change
    (its lines removed and added, and the first added line), the front matter left to `fields`."""
    import difflib

    from kyb_cli.api.records import read
    from kyb_cli.core.kinds.diff import diff

    try:
        fields = [f["field"] for f in diff(path, key, old, new)["fields"]]
        before, after = (read(path, key, sha).record.body.splitlines() for sha in (old, new))
    except Exception:  # noqa: BLE001 — the version read may be gone (a rewritten history): say so
        return {"fields": [], "body": "the version read is no longer in this store's history"}
    if before == after:
        return {"fields": fields, "body": "unchanged"}
    lines = list(difflib.unified_diff(before, after, lineterm="", n=0))[2:]
    added = [ln[1:].strip() for ln in lines if ln.startswith("+") and ln[1:].strip()]
    removed = sum(1 for ln in lines if ln.startswith("-"))
    body = f"-{removed} +{len(added)} lines" + (f": {added[0][:80]}" if added else "")
    return {"fields": ["body", *fields], "body": body}


def _with_changed(text: str, items: list[dict[str, Any]]) -> str:
    """The digest's text with the changed records listed inside its records fence (what they say is
    reference data, never instructions: it stays where the digest says so)."""
    if not items:
        return text
    from kyb_cli.core.tools.context import END

    where = text.rfind(END)
    where = len(text) if where < 0 else where
    return text[:where].rstrip("\n") + "\n" + _changed_text(items) + text[where:]


def _changed_text(items: list[dict[str, Any]]) -> str:
    lines = ["", "Changed since you read them:"]
    for item in items:
        fields = f" fields {', '.join(item['fields'])};" if item["fields"] else ""
        lines.append(f"- {item['key']} (read {item['read_at'][:10]}):{fields} body {item['body']}")
    return "\n".join(lines) + "\n"


def reads(door: Any, a: dict[str, Any]) -> dict[str, Any]:
    """`kyb reads`: one key's reads (without a key: every key's, each row naming it), or
    `unread_since` (live records nobody read since), or `misses`."""
    from kyb_cli.core.index import receipts
    from kyb_cli.core.timeargs import END, START, parse_time

    path = door.path()
    since = parse_time(a["since"], bound=START, store_path=path) if a["since"] else None
    until = parse_time(a["until"], bound=END, store_path=path) if a["until"] else None
    filters = {"agent": a["agent"], "session": a["session"], "since": since, "until": until, "limit": a["limit"]}
    if a["misses"]:
        rows = [_dated(r) for r in receipts.misses(path, **filters)]
        return {"count": len(rows), "misses": rows}
    if a["unread_since"]:
        return _unread(path, parse_time(a["unread_since"], bound=START, store_path=path), a["limit"])
    rows, counts = receipts.reads(path, a["key"], **filters)
    if a["key"]:
        for row in rows:
            row.pop("key")
    from kyb_cli.core.canon.attribution import audit_label

    agents = {audit_label(agent): n for agent, n in counts.items()}
    answer = {"count": len(rows), "reads": [_dated(r) for r in rows], "agents": agents}
    return {"key": a["key"], **answer} if a["key"] else answer


def _dated(row: dict[str, Any]) -> dict[str, Any]:
    """A logged row as shown: its time in RFC 3339, a label that looks like a secret withheld."""
    from kyb_cli.core.canon.attribution import audit_label

    row["at"] = _when(row["at"])
    for name in ("agent", "session", "workspace"):
        row[name] = audit_label(row[name])
    return row


def _unread(path: Any, since: int, limit: int) -> dict[str, Any]:
    from kyb_cli.core.index import receipts
    from kyb_cli.core.index.fresh import with_index

    seen = receipts.read_since(path, since)
    live = with_index(path, lambda f: f.conn.execute(
        "SELECT k.key, k.kind, v.title FROM keys k JOIN versions v ON v.id = k.version_id "
        "WHERE k.state = 'active' ORDER BY k.key").fetchall())
    rows = [{"key": key, "kind": kind, "title": title} for key, kind, title in live if key not in seen]
    return {"since": _when(since), "count": len(rows), "unread": rows[:limit]}
