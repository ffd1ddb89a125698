"""Time arguments a caller gives, parsed: `--as-of` and `--changed-between` as Unix seconds of
write (commit) time, `--effective-at` as an event time. Its own room above canon (a revision as a
time needs git); formatting a time is timestamps.py, a room near the bottom every layer may use.

- RFC 3339 / ISO 8601 datetimes (`2026-10-11T16:00:00Z`, `…+02:00`, `2026-10-11 16:00`); a datetime
  without an offset is UTC. Fractions of a second are dropped: commit time has 1 s resolution.
- A bare date (`2026-10-11`) is the end of that day (23:59:59 UTC) for `--as-of` and for the upper
  bound of a window, and its start (00:00:00 UTC) for the lower bound.
- Anything else is a revision (sha, short sha, tag, `HEAD~3`) and means its commit time; no exact
  tree is selected, so versions written in the same second cannot be told apart by a cutoff.
"""

from __future__ import annotations

import re
from kyb_cli.core.timestamps import date, datetime, time, timezone  # not datetime.py (timestamps.py)

from kyb_cli.core.errors import UsageError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`


def shown(value: object) -> str:
    """records.secrets.shown, imported only for an error: its rules cost ~7 ms to compile, more
    than a valid time ever needs (`kyb query` parses times on its hot path)."""
    from kyb_cli.core.records.secrets import shown as secret_safe

    return secret_safe(value)


# Matched through re's own cache (re.match), compiled on first use: a query without a time argument
# never needs them.
_DATE = r"^\d{4}-\d{2}-\d{2}$"
_DATETIME = r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}"

START = "start"
END = "end"


def is_time_text(text: str) -> bool:
    """True for a date or an RFC 3339 datetime (not a revision): what `get --at` reads as a time."""
    text = (text or "").strip()
    return bool(re.match(_DATE, text) or re.match(_DATETIME, text))


def parse_time(text: str, *, bound: str, store_path: Path | None = None, resolve=None) -> int:
    """Unix seconds for `text`; `bound` is END for --as-of and upper bounds, START for lower bounds.

    `resolve(rev) -> epoch seconds` turns a revision into its commit time; without it, `git rev-parse`
    in the store at `store_path` does (canon/git.py).
    """
    text = (text or "").strip()
    if not text:
        raise UsageError("an empty time; give a date (2026-10-11), a datetime (2026-10-11T16:00:00Z) or a revision")
    if re.match(_DATE, text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            raise UsageError(f"'{shown(text)}' is not a valid date") from None
        moment = time(23, 59, 59) if bound == END else time(0, 0, 0)
        return int(datetime.combine(day, moment, tzinfo=timezone.utc).timestamp())
    if re.match(_DATETIME, text):
        iso = text[:-1] + "+00:00" if text[-1] in "zZ" else text
        try:
            value = datetime.fromisoformat(iso)
        except ValueError:
            raise UsageError(f"'{shown(text)}' is not a valid RFC 3339 datetime") from None
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        try:
            value.astimezone(timezone.utc)  # raises when the offset pushes it past the calendar
            return int(value.timestamp() // 1)
        except (ValueError, OverflowError):  # the offset pushes it past year 1 or 9999 in UTC
            raise UsageError(f"'{shown(text)}' is outside the times kyb can represent (years 1 to 9999 in UTC)") from None
    if resolve is None:
        if store_path is None:
            raise UsageError(f"'{shown(text)}' is neither a date nor a datetime")
        resolve = _revision_resolver(store_path)
    return resolve(text)


def _revision_resolver(store_path: Path):
    def resolve(rev: str) -> int:
        from pathlib import Path  # only a revision asks git

        from kyb_cli.core.canon import headfile
        from kyb_cli.core.canon.git import could_be_revision, run

        bad = UsageError(f"'{shown(rev)}' is not a date (YYYY-MM-DD), an RFC 3339 datetime or a known revision")
        if not could_be_revision(rev):
            raise bad
        headfile.git_dir(store_path)  # StoreError when there is no store
        res = run(["-C", str(store_path), "rev-parse", "--verify", "-q", "--end-of-options", f"{rev}^{{commit}}"],
                  cwd=Path(store_path))
        sha = res.stdout.decode(errors="replace").strip()
        if res.returncode != 0 or not sha:
            raise bad
        res = run(["-C", str(store_path), "show", "-s", "--format=%ct", sha], cwd=Path(store_path))
        try:
            return int(res.stdout.decode().strip())
        except ValueError:
            raise bad from None

    return resolve


def event_time_arg(text: str | None) -> str:
    """`--effective-at TIME` as stored: '' when not given, else RFC 3339 in UTC (`2026-12-01T15:50:00Z`).

    A date means the start of that day (UTC); a datetime without an offset is UTC. Revisions are not
    event times (they are write times), so only dates and datetimes are taken."""
    text = (text or "").strip()
    if not text:
        return ""
    if not (re.match(_DATE, text) or re.match(_DATETIME, text)):
        raise UsageError(f"effective_at: '{shown(text)}' is neither a date (2026-12-01) nor a datetime "
                         "(2026-12-01T15:50:00Z)", field="effective_at")
    try:
        seconds = parse_time(text, bound=START)
    except UsageError as exc:
        raise UsageError(f"effective_at: {exc.message}", field="effective_at") from None
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def time_mode(*, history: bool = False, as_of: str | None = None,
              changed_between: tuple[str, str] | list[str] | None = None,
              store_path: Path | None = None) -> tuple[str, int | None, tuple[int, int] | None]:
    """(mode, as_of seconds, window) for the query options; one door's checks and texts for all doors."""
    modes = [m for m, on in (("history", history), ("as_of", as_of is not None),
                             ("changed_between", bool(changed_between))) if on]
    if len(modes) > 1:  # the table's names: each door spells them its own way (`--as-of` on the CLI)
        raise UsageError(f"choose one of {', '.join(modes)}", field=tuple(modes))
    if history:
        return "history", None, None
    if as_of is not None:
        return "as_of", parse_time(as_of, bound=END, store_path=store_path), None
    if changed_between:
        if len(changed_between) != 2:
            raise UsageError("changed_between takes two times: A B", field="changed_between")
        a = parse_time(changed_between[0], bound=START, store_path=store_path)
        b = parse_time(changed_between[1], bound=END, store_path=store_path)
        if a > b:
            raise UsageError("changed_between: the start is after the end", field="changed_between")
        return "changed_between", None, (a, b)
    return "current", None, None
