"""Whether to trust a version: its verification (who, when, from what, still current?) and staleness.

Computed at read time from the key's versions in the index, so the schema keeps its columns:
- the verification of a version is its `[verified]` table; the commit that wrote it is the oldest
  version of the unbroken run (back from that version) carrying the same table: its sha and time
  are `sha`/`at`, its `Kyb-Agent` trailer (else its author) is `by` (rule "verification");
- `current` is false once the title or body differ from what was verified (the table's `content`
  digest; a hand-written table without one compares with the verifying version); tags do not count;
- stale (rule "stale"): knowledge whose verification (else its last title/body change) is older
  than `stale.days` (default 90), whose verification is not current, or whose `review_by` passed.
"""

from __future__ import annotations

import os
from kyb_cli.core.timestamps import date, datetime, timezone  # not datetime.py (timestamps.py)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`
    from typing import Any

from kyb_cli.core.index import schema
from kyb_cli.core.timestamps import rfc3339

DEFAULT_STALE_DAYS = 90


def stale_days(days: int | None = None) -> int:
    """`--days`, else config `stale.days`, else 90."""
    if days is not None:
        return days
    from kyb_cli.core.config.file import load_config
    from kyb_cli.core.errors import UsageError

    value = (load_config().get("stale") or {}).get("days", DEFAULT_STALE_DAYS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UsageError(f"config stale.days must be a whole number of days (got {value!r})")
    return value


def days_or_default() -> int:
    """Reads never fail on a bad `stale.days` (`kyb stale` reports it); they use the default."""
    from kyb_cli.core.errors import KybError

    try:
        return stale_days()
    except KybError:
        return DEFAULT_STALE_DAYS


def key_versions(conn, keys: list[str]) -> dict[str, list[tuple[int, str, int, dict]]]:
    """Per key its versions (id, sha, committed_at, doc), oldest first."""
    out: dict[str, list[tuple[int, str, int, dict]]] = {k: [] for k in keys}
    unique = sorted(set(keys))
    for start in range(0, len(unique), 500):
        chunk = unique[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for vid, key, sha, when, doc in conn.execute(
                f"SELECT id, key, sha, committed_at, doc FROM versions WHERE key IN ({marks}) ORDER BY key, id",
                chunk):
            out[key].append((vid, sha, when, schema.decode(doc)))
    return out


def _text(doc: dict) -> tuple[str, str]:
    return " ".join(str(doc.get("title", "")).split()), str(doc.get("body", ""))


def assess(versions: list[tuple[int, str, int, dict]], vid: int | None = None) -> dict[str, Any]:
    """For the version `vid` (default: the newest) of one key: the raw verification (sha, at, table,
    current), `changed_at` (its last title/body change) and `review_by`. `by` is filled by `attribute`."""
    upto = [v for v in versions if vid is None or v[0] <= vid]
    if not upto:
        return {"verified": None, "changed_at": None, "review_by": ""}
    _id, _sha, when, doc = upto[-1]
    text = _text(doc)
    changed_at = when
    for _v, _s, t, d in reversed(upto[:-1]):
        if _text(d) != text:
            break
        changed_at = t
    table = doc.get("verified") or None
    verified = None
    if table:
        origin = upto[-1]
        for item in reversed(upto[:-1]):
            if (item[3].get("verified") or None) != table:
                break
            origin = item
        if table.get("content"):
            from kyb_cli.core.records.model import content_digest  # only for verified records: ~6 ms to import

            current = table["content"] == content_digest(doc.get("title", ""), doc.get("body", ""))
        else:
            current = _text(origin[3]) == text
        at = _stamped_at(table) or origin[2]  # an imported verification keeps who and when (table by/at)
        verified = {"by": table.get("by") or None, "at": rfc3339(at), "source": table.get("source", ""),
                    "rev": table.get("rev", ""), "note": table.get("note", ""), "sha": origin[1],
                    "current": current, "_at": at}
    return {"verified": verified, "changed_at": changed_at, "review_by": doc.get("review_by", "") or "",
            "kind": doc.get("kind", "knowledge")}


def _stamped_at(table: dict) -> int | None:
    """The Unix time of an imported verification's `at` (RFC 3339), None when absent or unreadable."""
    text = str(table.get("at") or "")
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return int((when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp())


def attribute(store_path: Path, assessments: list[dict[str, Any]]) -> None:
    """Fill `by` of each verification from its commit (one `git cat-file --batch` for all), unless the
    table names it (an imported verification)."""
    blocks = [a["verified"] for a in assessments if a.get("verified") and not a["verified"].get("by")]
    shas = sorted({b["sha"] for b in blocks})
    if not shas:
        return
    from kyb_cli.core.canon import git  # only now: subprocess & co. cost a lexical query ~5 ms
    from kyb_cli.core.records.trailers import parse_trailers

    who: dict[str, str] = {}
    raw = _loose_commits(store_path, shas)
    packed = [sha for sha in shas if sha not in raw]
    for sha, obj in zip(packed, git.cat_file(store_path, packed) if packed else []):
        if obj is not None and obj[1] == "commit":
            raw[sha] = obj[2]
    for sha, data in raw.items():
        head, _sep, message = data.partition(b"\n\n")
        agent = parse_trailers(message.decode("utf-8", errors="replace")).get("Kyb-Agent", "")
        if not agent:
            for line in head.split(b"\n"):
                if line.startswith(b"author "):
                    agent = line[7:].decode("utf-8", errors="replace").rsplit(" ", 2)[0]
        who[sha] = agent
    for b in blocks:
        b["by"] = who.get(b["sha"], "")


def _loose_commits(store_path: Path, shas: list[str]) -> dict[str, bytes]:
    """Commit objects read straight from `.git/objects` when loose (most of kyb's own commits until a
    `git gc`): the query path then spawns no git process; packed ones are left to `git cat-file`."""
    import zlib

    from kyb_cli.core.canon import headfile

    out: dict[str, bytes] = {}
    try:
        objects = os.path.join(headfile.git_dir_str(store_path), "objects")  # strings: no pathlib (issue 38)
    except Exception:  # noqa: BLE001 - no readable .git: everything goes to cat-file
        return out
    for sha in shas:
        try:
            with open(os.path.join(objects, sha[:2], sha[2:]), "rb") as fh:
                data = zlib.decompress(fh.read())
        except (OSError, zlib.error):
            continue
        header, _nul, body = data.partition(b"\0")
        if header.startswith(b"commit "):
            out[sha] = body
    return out


def public(verified: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `verified` block as replies show it."""
    if verified is None:
        return None
    return {k: verified[k] for k in ("by", "at", "source", "rev", "note", "sha", "current")}


def staleness(a: dict[str, Any], *, days: int, today: date) -> str | None:
    """Why this assessment is stale (a short reason), or None; knowledge only."""
    if a.get("kind", "knowledge") != "knowledge" or a.get("changed_at") is None:
        return None
    verified = a.get("verified")
    if a.get("review_by") and a["review_by"] < today.isoformat():
        return f"review_by {a['review_by']} has passed"
    if verified is not None and not verified["current"]:
        return "changed since it was verified"
    last = verified["_at"] if verified is not None else a["changed_at"]
    age = (today - datetime.fromtimestamp(last, timezone.utc).date()).days
    if age > days:
        what = "verified" if verified is not None else "never verified; last changed"
        return f"{what} {age} days ago (over {days})"
    return None


def annotate_hits(store_path: Path, response: dict[str, Any], *, today: date | None = None) -> dict[str, Any]:
    """Add `verified` and `stale` to every hit of a query response (one SQL, at most one cat-file).
    Inside the query's own `with_index` it reads on that session's connection (fresh.joined)."""
    hits = response.get("hits") or []
    if not hits:
        return response
    from kyb_cli.core.index.fresh import with_index

    def run(f):
        kept = _kept(f.conn, f.head)
        wanted = [(h["key"], h.get("sha")) for h in hits]
        todo = [k for k in dict.fromkeys(wanted) if k not in kept]
        versions = key_versions(f.conn, [key for key, _sha in todo]) if todo else {}
        new = {}
        for key, sha in todo:
            rows = versions.get(key, [])
            vid = next((v[0] for v in rows if v[1] == sha), None)
            new[(key, sha)] = assess(rows, vid)
        return [new.get(k) or kept[k] for k in wanted], new, kept

    assessments, new, kept = with_index(store_path, run)
    attribute(store_path, list(new.values()))
    kept.update(new)  # attributed: a commit's author never changes
    days = days_or_default()
    today = today or date.today()
    for h, a in zip(hits, assessments):
        h["verified"] = public(a["verified"])
        h["stale"] = staleness(a, days=days, today=today) is not None
    return response


_KEPT: list = [(None, {})]  # [(index state, {(key, sha): assessment})] (annotate_hits)
_KEPT_MAX = 5000


def _kept(conn, head: str | None) -> dict:
    """The assessments made for this state of the index (its file, `head`, its newest version id: a
    write, a pull, a sync, a rebuild make a new one) in a long-lived door: an assessment reads and
    decodes every version of its key, and a door is asked about the same keys again and again.
    A one-shot process keeps nothing (a fresh dict)."""
    from kyb_cli.core.index import warm

    if not warm.keeping():
        return {}
    return warm.kept_for(_KEPT, warm.index_state(conn, head)[1], _KEPT_MAX)


def for_version(store_path: Path, key: str, sha: str) -> dict[str, Any]:
    """The assessment of `key`'s version written by `sha` (with `by` filled)."""
    from kyb_cli.core.index.fresh import with_index

    def run(f):
        rows = key_versions(f.conn, [key])[key]
        vid = next((v[0] for v in rows if v[1] == sha), None)
        return assess(rows, vid)

    a = with_index(store_path, run)
    attribute(store_path, [a])
    return a
