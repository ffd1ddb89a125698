"""The slice of versions a query may answer with: one of the four time modes plus the filters.

Both sides of a search ask exactly this slice: the lexical side (lexical.py) matches inside it and
the semantic side (vectors.py) ranks inside it, so fusion never mixes answers from different slices.
- current         the key's version at HEAD, live or archived (its final version); never retracted;
- history         every content version, current included;
- as_of T         per key the latest event recorded no later than T (a retraction hides knowledge);
- changed_between content versions written inside [A, B].
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Filters:
    tags: list[str] = field(default_factory=list)
    kind: str | None = None
    status: str | None = None
    service: str | None = None
    priority: str | None = None
    assignee: str | None = None
    parent: str | None = None


def candidates(mode: str, params: dict) -> str:
    """SQL yielding (vid, state) for the versions a mode may answer with, before matching."""
    if mode == "current":
        return "SELECT version_id AS vid, state FROM keys WHERE state != 'retracted'"
    if mode == "history":
        return "SELECT v.id AS vid, k.state AS state FROM versions v JOIN keys k ON k.key = v.key"
    if mode == "as_of":
        return (
            "SELECT e.version_id AS vid, CASE e.action WHEN 'deleted' THEN 'archived' ELSE 'active' END AS state "
            "FROM (SELECT max(id) AS eid FROM events WHERE committed_at <= :t GROUP BY key) s "
            "JOIN events e ON e.id = s.eid "
            "WHERE NOT (e.action = 'deleted' AND e.key NOT LIKE 'inc-%' AND e.key NOT LIKE 'task-%')"
        )
    if mode == "changed_between":
        return ("SELECT v.id AS vid, k.state AS state FROM versions v JOIN keys k ON k.key = v.key "
                "WHERE v.committed_at BETWEEN :a AND :b")
    raise ValueError(mode)


def filter_sql(filters: Filters, params: dict) -> list[str]:
    """WHERE conditions (on versions `v`) for the filters; their values go into `params`."""
    where: list[str] = []
    for n, tag in enumerate(filters.tags):
        params[f"tag{n}"] = tag.strip().lower()
        where.append(f"EXISTS (SELECT 1 FROM json_each(v.tags_lc) WHERE value = :tag{n})")
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


@dataclass
class Slice:
    """The versions one query may answer with: a time mode plus the filters (as the lexical side)."""

    mode: str = "history"
    as_of: int | None = None
    window: tuple[int, int] | None = None
    filters: Filters = field(default_factory=Filters)

    def sql(self) -> tuple[str, str, dict]:
        """(WITH clause defining `cand`, extra WHERE on versions v, params)."""
        params: dict = {}
        if self.mode == "as_of":
            params["t"] = int(self.as_of)  # type: ignore[arg-type]
        elif self.mode == "changed_between":
            params["a"], params["b"] = self.window  # type: ignore[misc]
        where = filter_sql(self.filters, params)
        return (f"WITH cand AS MATERIALIZED ({candidates(self.mode, params)}) ",
                "".join(f" AND {w}" for w in where), params)
