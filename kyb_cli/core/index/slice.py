"""The slice of versions a query may answer with: one of the four time modes plus the filters.

Both sides of a search ask exactly this slice: the lexical side (lexical.py) matches inside it and
the semantic side (vectors.py) ranks inside it, so fusion never mixes answers from different slices.
- current         the key's version at HEAD, live or archived (its final version); never retracted;
- history         every content version, current included;
- as_of T         per key the latest event on HEAD's first-parent line no later than T, at each
                  commit's effective time (index/build.py; a retraction hides knowledge);
- changed_between content versions written inside [A, B];
- as_of_event T   per key the latest version whose effective time (`effective_at`, for incidents
                  `started_at`/`detected_at`, else its write time) is no later than T: what was true
                  in the world at T by what the store knows (now, or at W with `as_of`: bi-temporal).
"""

from __future__ import annotations

import json

from kyb_cli.core.plain import Factory, plain


@plain
class Filters:
    tags: list[str] = Factory(list)
    kind: str | None = None
    status: str | None = None
    service: str | None = None
    priority: str | None = None
    assignee: str | None = None
    parent: str | None = None


def candidates(mode: str, params: dict) -> str:
    """SQL yielding (vid, state) for the versions a mode may answer with, before matching.

    Unreadable (held-out) versions are never in a slice: a key whose version at that point breaks
    the write rules is absent from the answer, never served in its place."""
    return f"SELECT * FROM ({_candidates(mode, params)}) WHERE vid NOT IN (SELECT version_id FROM unreadable)"


# The as-of slice: each key's newest event up to :t ({keys}: only some keys), a deletion archiving an
# incident or a task and dropping a knowledge record. GROUP BY +key (the whole slice): the events up
# to T read from events_time alone (covering), then grouped; by `key` SQLite walked events_key and
# read every event's row for its time (0.64 -> 0.20 s at 100k keys, 382k events; the same groups).
_AS_OF = ("SELECT e.version_id AS vid, CASE e.action WHEN 'deleted' THEN 'archived' ELSE 'active' END AS state "
          "FROM (SELECT max(id) AS eid FROM events WHERE committed_at <= :t{keys} GROUP BY {group}) s "
          "JOIN events e ON e.id = s.eid "
          "WHERE NOT (e.action = 'deleted' AND e.key NOT LIKE 'inc-%' AND e.key NOT LIKE 'task-%')")


def _candidates(mode: str, params: dict) -> str:
    if mode == "current":
        return "SELECT version_id AS vid, state FROM keys WHERE state != 'retracted'"
    if mode == "history":
        return "SELECT v.id AS vid, k.state AS state FROM versions v JOIN keys k ON k.key = v.key"
    if mode == "as_of":
        return _AS_OF.format(keys="", group="+key")
    if mode == "changed_between":
        return ("SELECT v.id AS vid, k.state AS state FROM versions v JOIN keys k ON k.key = v.key "
                "WHERE v.committed_at BETWEEN :a AND :b")
    if mode == "as_of_event":
        # The store's knowledge at W (`:t`; now when no --as-of): which keys stood and in what state,
        # as the as_of slice says; then, among the versions known by W, the latest effective by T.
        known = ("SELECT v.key AS key, c.state AS state FROM (" + candidates("as_of", params) + ") c "
                 "JOIN versions v ON v.id = c.vid")
        # Both inner sets are MATERIALIZED: left inline, SQLite ran the grouped as_of slice again for
        # every version it joined (52 s at 10k keys; 0.2 s as built here).
        return (
            f"WITH known AS MATERIALIZED ({known}), "
            "told AS MATERIALIZED (SELECT version_id AS id FROM events WHERE action = 'content' AND committed_at <= :t) "
            "SELECT vid, state FROM (SELECT v.id AS vid, st.state AS state, row_number() OVER "
            f"(PARTITION BY v.key ORDER BY {EFFECTIVE} DESC, v.id DESC) AS rn "
            f"FROM versions v JOIN known st ON st.key = v.key "
            f"WHERE {EFFECTIVE} <= :te AND v.id IN (SELECT id FROM told)) WHERE rn = 1"
        )
    raise ValueError(mode)


# A version's effective time in Unix seconds: when the fact became true in the world, as the record
# says (effective_at; for incidents started_at, else detected_at), else when it was written.
EFFECTIVE = ("coalesce(unixepoch(nullif(json_extract(v.doc, '$.effective_at'), '')), "
             "unixepoch(nullif(json_extract(v.doc, '$.started_at'), '')), "
             "unixepoch(nullif(json_extract(v.doc, '$.detected_at'), '')), v.committed_at)")
NOW_AND_EVER = 2 ** 62  # `:t` when an as_of_event question has no --as-of: everything known now


def time_params(mode: str, params: dict, *, as_of: int | None, window: tuple[int, int] | None,
                as_of_event: int | None = None) -> None:
    """Put a mode's time values into `params` (`:t`, `:a`/`:b`, `:te`)."""
    if mode == "as_of":
        params["t"] = int(as_of)  # type: ignore[arg-type]
    elif mode == "changed_between":
        params["a"], params["b"] = window  # type: ignore[misc]
    elif mode == "as_of_event":
        params["te"] = int(as_of_event)  # type: ignore[arg-type]
        params["t"] = int(as_of) if as_of is not None else NOW_AND_EVER


def filter_sql(filters: Filters, params: dict) -> list[str]:
    """WHERE conditions (on versions `v`) for the filters; their values go into `params`."""
    where: list[str] = []
    tags = sorted({tag.strip().lower() for tag in filters.tags})
    if tags:  # one condition however many tags: every wanted tag is among the version's (all must match)
        params["tags"] = json.dumps(tags)
        where.append("NOT EXISTS (SELECT 1 FROM json_each(:tags) w "
                     "WHERE w.value NOT IN (SELECT value FROM json_each(v.tags_lc)))")
    for name, column in (("kind", "v.kind"), ("status", "v.status"), ("priority", "v.priority"),
                         ("assignee", "v.assignee"), ("parent", "v.parent_task")):
        value = getattr(filters, name)
        if value:
            params[name] = value
            where.append(f"{column} = :{name}")
    if filters.service:
        params["service"] = filters.service.lower()
        where.append("v.service_lc = :service")
    return where


@plain
class Slice:
    """The versions one query may answer with: a time mode plus the filters (as the lexical side)."""

    mode: str = "history"
    as_of: int | None = None
    window: tuple[int, int] | None = None
    filters: Filters = Factory(Filters)
    as_of_event: int | None = None

    def sql(self) -> tuple[str, str, dict]:
        """(WITH clause defining `cand`, extra WHERE on versions v, params)."""
        params: dict = {}
        time_params(self.mode, params, as_of=self.as_of, window=self.window, as_of_event=self.as_of_event)
        where = filter_sql(self.filters, params)
        return (f"WITH cand AS MATERIALIZED ({candidates(self.mode, params)}) ",
                "".join(f" AND {w}" for w in where), params)

    def sql_among(self, among: str) -> tuple[str, str, dict]:
        """As sql(), `cand` holding only the versions `among` (SQL yielding version ids) yields:
        looked up one by one where the mode allows, else the whole slice (then filtered by the caller)."""
        with_, where, params = self.sql()
        one_by_one = _AMONG.get(self.mode)
        if one_by_one is None:
            return with_, where, params
        return (f"WITH cand AS MATERIALIZED (SELECT * FROM ({one_by_one.format(among=among)}) "
                "WHERE vid NOT IN (SELECT version_id FROM unreadable)) ", where, params)


# A version v (versions) is in these modes' slices when its key's row k (keys, k.key = v.key) says
# so, unreadable versions aside: what their candidates() say, for a statement joining from versions
# (sql_among below, search/few_vectors.py).
BY_KEY = {"current": "k.version_id = v.id AND k.state != 'retracted'",
          "history": "1",
          "changed_between": "v.committed_at BETWEEN :a AND :b"}

# candidates() of these modes for given versions, through the versions' keys (no scan of `keys`).
_AMONG = {mode: ("SELECT v.id AS vid, k.state AS state FROM versions v JOIN keys k ON k.key = v.key "
                 f"WHERE v.id IN ({{among}}) AND {holds}") for mode, holds in BY_KEY.items()}


def among(mode: str, ids: str) -> str | None:
    """SQL yielding (vid, state) of candidates(mode) for the versions `ids` (SQL yielding version
    ids) only, through their keys (a slice is made per key): None for a mode not done so here."""
    if mode == "as_of":
        one_by_one = (_AS_OF.format(keys=f" AND key IN (SELECT key FROM versions WHERE id IN ({ids}))", group="key")
                      + f" AND e.version_id IN ({ids})")
    elif mode == "history":
        one_by_one = _AMONG["history"].format(among=ids)
    else:
        return None
    return f"SELECT * FROM ({one_by_one}) WHERE vid NOT IN (SELECT version_id FROM unreadable)"
