"""A snapshot's hits and listings name the commit that wrote each version, while the history is not in.

Apart from reads.py so that an answer from a snapshot whose origins cannot be named now (a long
history: 'origins' pending; too many keys) imports nothing more: reads.py brings the record model,
trailers and the secret rules (~30 compiled patterns), ~40 ms of a one-shot `kyb query` at 10k
keys before the history is in (issue 38)."""

from __future__ import annotations

SNAPSHOT_ORIGINS_MAX = 50  # an answer from a snapshot names at most this many versions' commits (one git log each, ~20 ms at 11k commits)


def snapshot_origins(f, keys: list[str]) -> dict[str, tuple[str, str]]:
    """key -> (sha, committed_at) of the commit that wrote its version, found per path as `get` does
    (keypaths.origin), while the history is not in: for up to SNAPSHOT_ORIGINS_MAX keys; beyond that
    they stay null until the history is in (history_complete: false says so) rather than one `git log`
    per record on a big fresh clone."""
    if f.history_complete or not f.head or not keys or len(keys) > SNAPSHOT_ORIGINS_MAX:
        return {}
    if f.conn.execute("SELECT 1 FROM meta WHERE k = 'origins' AND v = 'pending'").fetchone():
        return {}  # a long history: 1.8 s a hit at 382k commits; named once the history is in (issue 39)
    from kyb_cli.core.index.keypaths import origin
    from kyb_cli.core.timestamps import rfc3339

    named = {}
    for key in keys:
        found = origin(f.store_path, f.head, key)
        if found is not None:
            named[key] = (found[0], rfc3339(found[1]))
    return named


def fill_snapshot_origins(f, hits: list[dict]) -> None:
    """Hits read from a snapshot carry `sha: null`: name the commit that wrote each, as listings do."""
    named = snapshot_origins(f, [h["key"] for h in hits if h.get("sha") is None and h.get("key")])
    for hit in hits:
        if hit.get("key") in named:
            hit["sha"], hit["committed_at"] = named[hit["key"]]
