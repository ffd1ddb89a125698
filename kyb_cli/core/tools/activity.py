"""`kyb log`: the store's activity, newest first — kyb's writes, hand commits and merges, each labelled.

Read from Git itself (`git log` through canon/git.py), not from the index: the index keeps versions of
records, while the log is about commits, including the ones that wrote no new version (a merge that
kept both sides, a re-verification, a hand commit of a README). Every filter is handed to git
(`--since/--until`, `--author`, `--grep` on the `Kyb-Agent` trailer, a pathspec for `--kind`/`--key`),
so `--limit N` reads N commits, whatever the length of history.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kyb_cli.core.errors import UsageError
from kyb_cli.core.records.keys import KIND_DIRS, key_of_path, kind_of_key, paths_of_key
from kyb_cli.core.records.trailers import parse_trailers, served_text
from kyb_cli.core.timestamps import rfc3339

MAX_LIMIT = 1000
KINDS = ("knowledge", "incident", "task")
_SUBJECT = re.compile(r"^kyb: (?P<verb>[a-z-]+)(?: (?P<key>[a-z0-9-]+))?")


def log(store_path: Path, *, since: int | None = None, until: int | None = None, agent: str = "",
        author: str = "", kind: str = "", key: str = "", limit: int = 50) -> list[dict[str, Any]]:
    """Commits of the store's branch, newest first, as rows of `kyb log` (see `row`)."""
    from kyb_cli.core.canon.git import run
    from kyb_cli.core.errors import StoreError

    if limit < 0 or limit > MAX_LIMIT:
        raise UsageError(f"limit must be between 0 and {MAX_LIMIT}", field="limit")
    if kind and kind not in KINDS:
        raise UsageError(f"kind must be one of {', '.join(KINDS)}, not '{kind}'", field="kind")
    if limit == 0:
        return []
    # Separators no message can forge (issue 24, failure 7): a fresh random token per call, not a
    # control character a peer's commit or a retraction reason may contain.
    import secrets

    rec, fld = f"\x1e{secrets.token_hex(16)}R", f"\x1f{secrets.token_hex(16)}F"
    args = ["log", "--no-color", "--no-renames", "--name-only", f"-n{limit}",
            "--format=" + "".join((rec, "%H", fld, "%ct", fld, "%P", fld, "%an <%ae>", fld, "%B", fld))]
    if since is not None:
        args.append(f"--since=@{since}")
    if until is not None:
        args.append(f"--until=@{until}")
    if author:
        args += ["--regexp-ignore-case", f"--author={re.escape(author)}"]
    if agent:
        args += ["--regexp-ignore-case", "--extended-regexp", f"--grep=^Kyb-Agent: {re.escape(agent)}$"]
    args.append("HEAD")
    paths: list[str] = []
    if key:
        from kyb_cli.core.records.validate import check_key

        check_key(key)
        paths = list(paths_of_key(key))  # both shapes (records/keys.py)
    elif kind:
        paths = [f"{KIND_DIRS[kind]}/"]
    if paths:
        args += ["--", *paths]
    proc = run(args, store_path)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()
        if "does not have any commits" in err or "bad default revision" in err or "unknown revision" in err:
            return []
        raise StoreError(f"cannot read the store's log: {err.splitlines()[-1] if err else 'git log failed'}")
    out = proc.stdout.decode("utf-8", "replace")
    rows = [row(chunk, fld) for chunk in out.split(rec)[1:]]
    # git reads `--since=@N` past its date range (about year 2100) as "now", so a far bound would let
    # this second's commits through: the bounds are applied here as well.
    return [r for r in rows if (since is None or _epoch(r) >= since) and (until is None or _epoch(r) <= until)]


def _epoch(r: dict[str, Any]) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(r["committed_at"]).timestamp())


def row(chunk: str, sep: str = "\x1f") -> dict[str, Any]:
    """One commit: {sha, committed_at, action, key, kind, agent, session, transport, author, message, keys}.

    `action` is the commit's `Kyb-Action` trailer (add, update, retract, archive, sync, …); a commit
    without one is `merge` when it has several parents, else `hand` (made with plain git). `key` is
    the record the commit is about (from kyb's subject line, else the one record file it touched);
    `keys` lists every record file it touched, for hand commits that touched several. A subject,
    author or trailer value that looks like a secret is redacted (records/trailers.py, `served_text`).
    """
    sha, ct, parents, author, rest = chunk.split(sep, 4)
    message, _sep, names = rest.partition(sep)
    message = message.strip("\n")
    trailers = parse_trailers(message)
    keys = []
    for name in names.split("\n"):
        name = name.strip()
        if not name:
            continue
        k = key_of_path(name)
        if k and k not in keys:
            keys.append(k)
    subject = message.split("\n", 1)[0]
    action = trailers.get("Kyb-Action", "")
    m = _SUBJECT.match(subject)
    if not action:
        if not parents.split() and m and m.group("verb") == "init":
            action = "init"  # the empty root commit `kyb init` makes
        else:
            action = "merge" if len(parents.split()) > 1 else "hand"
    key = m.group("key") if m and m.group("key") and action not in ("sync", "merge", "init", "hand", "migrate") else ""
    if not key and len(keys) == 1:
        key = keys[0]
    return {
        "sha": sha, "committed_at": rfc3339(int(ct)), "action": action, "key": key,
        "kind": kind_of_key(key) if key else "", "agent": trailers.get("Kyb-Agent", ""),
        "session": trailers.get("Kyb-Session", ""), "transport": trailers.get("Kyb-Transport", ""),
        "author": served_text(author, "author"), "message": served_text(subject, "message"), "keys": keys,
    }
