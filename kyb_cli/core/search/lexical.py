"""The four questions about time, answered from the index (lexical; vectors plug in later).

- current         the key's version at HEAD, live or archived (its final version); never retracted;
- history         every content version, current included;
- as_of T         per key the latest event recorded no later than T in revision order (slice first),
                  then the match; a retraction in the slice hides knowledge, an archive keeps it;
- changed_between content versions written inside [A, B] that match; the latest one per key.
`lexical()` returns a ranked list of (version_id, hit) so a semantic list can be fused with it (search/fusion.py).
"""

from __future__ import annotations

import json
from functools import lru_cache

from kyb_cli.core.index import schema
from kyb_cli.core.index.slice import Filters, candidates, filter_sql, time_params
from kyb_cli.core.timestamps import rfc3339

MAX_LIMIT = 100
_COLUMNS = ("id", "key", "sha", "committed_at", "doc", "hit_state", "score", "is_head")
_HIDDEN_KEYS = frozenset(("key", "title", "kind", "body", "tags", "refs", "extra"))


def lexical(conn, text: str, *, mode: str = "current", as_of: int | None = None,
            window: tuple[int, int] | None = None, filters: Filters | None = None,
            limit: int = 10, recent: bool = False, as_of_event: int | None = None,
            plan=None, later: bool = False) -> list[tuple[int, dict]]:
    """Ranked (version_id, hit) pairs for one question; an empty or wordless text lists newest first.
    `plan`: the text's syntax.query_plan when the caller has it already (parsed once per question).
    `later`: each hit a Later (its key and score only), shaped by the caller once kept. Its reads
    (a new word's postings, the state, the ranking) run in one read transaction (index/kept_state.one_read:
    ~11 us a statement saved, ~6 statements of a new question in a door)."""
    from kyb_cli.core.index.kept_state import one_read

    with one_read(conn):
        return _lexical(conn, text, mode, as_of, window, filters, limit, recent, as_of_event, plan, later)


def _lexical(conn, text: str, mode: str, as_of: int | None, window: tuple[int, int] | None,
             filters: Filters | None, limit: int, recent: bool, as_of_event: int | None, plan,
             later: bool) -> list[tuple[int, dict]]:
    """lexical()'s steps, inside its read transaction."""
    filters = filters or Filters()
    params: dict = {"limit": max(0, min(int(limit), MAX_LIMIT))}
    time_params(mode, params, as_of=as_of, window=window, as_of_event=as_of_event)
    if plan is None:
        from kyb_cli.core.search.syntax import query_plan

        plan = query_plan(text)[1]
    expr = plan.match
    where = filter_sql(filters, params)
    if expr is None:  # nothing to rank by: list newest first (without the excluded words)
        source = "SELECT c.vid, c.state, 0.0 AS score FROM cand c"
        if plan.exclude:
            params["x"] = plan.exclude
            source += " WHERE c.vid NOT IN (SELECT rowid FROM fts WHERE fts MATCH :x)"
        recent = True
    else:
        params["q"] = expr
        table = "fts_now" if mode == "current" else "fts"  # current versions only: see schema.py
        source = (f"SELECT c.vid, c.state, -bm25({table}, {schema.FTS_WEIGHTS_SQL}) AS score FROM {table} "
                  f"JOIN cand c ON c.vid = {table}.rowid WHERE {table} MATCH :q")
    # Narrow rows (ids, scores) are filtered, reduced and ordered first; documents are read last.
    narrow = (f"SELECT m.vid AS vid, m.state AS hit_state, m.score AS score, v.key AS key "
              f"FROM ({source}) m JOIN versions v ON v.id = m.vid"
              + (" WHERE " + " AND ".join(where) if where else ""))
    if mode == "changed_between":
        narrow = (f"SELECT vid, hit_state, score, key FROM (SELECT n.*, row_number() OVER "
                  f"(PARTITION BY n.key ORDER BY n.vid DESC) AS rn FROM ({narrow}) n) WHERE rn = 1")
    order = "vid DESC" if recent else "score DESC, vid DESC"
    top = f"SELECT * FROM ({narrow}) ORDER BY {order} LIMIT :limit"
    with_ = f"WITH cand AS MATERIALIZED ({candidates(mode, params)}) "
    if mode == "current" and expr is not None and not where and not recent:
        # The hot path: every fts_now row is a current version, so rank it alone and join the top
        # rows only (no candidate set to build and probe: 10 ms instead of 40 at 10k keys).
        ranked = _kept_top(conn, expr, params["limit"])
        if ranked is None:
            from kyb_cli.core.search import bm25

            ranked = bm25.rare_top(conn, expr, params["limit"])
        if ranked is None:
            best = (f"SELECT rowid AS vid, -bm25(fts_now, {schema.FTS_WEIGHTS_SQL}) AS score FROM fts_now "
                    f"WHERE fts_now MATCH :q "
                    f"ORDER BY score DESC, vid DESC LIMIT :limit")
        else:  # the same rows and scores: the door's postings, or bm25() over the rarer words' rows (bm25.py)
            best = ("SELECT column1 AS vid, column2 AS score FROM (VALUES "
                    + ", ".join(f"(:v{i}, :s{i})" for i in range(len(ranked))) + ")"
                    if ranked else "SELECT NULL AS vid, NULL AS score WHERE 0")
            for i, (vid, score) in enumerate(ranked):
                params[f"v{i}"], params[f"s{i}"] = vid, score
        top = (f"SELECT f.vid AS vid, k.state AS hit_state, f.score AS score, v.key AS key FROM ({best}) f "
               f"JOIN versions v ON v.id = f.vid JOIN keys k ON k.key = v.key")
        with_ = ""
    elif mode in ("history", "as_of") and expr is not None and not recent:
        ranked3 = _slice_top(conn, mode, expr, params, where)
        if ranked3 is not None:  # the same rows, states and scores, from the words' kept parts
            for i, (vid, score, state) in enumerate(ranked3):
                params[f"v{i}"], params[f"s{i}"], params[f"h{i}"] = vid, score, state
            best = ("SELECT column1 AS vid, column2 AS score, column3 AS hit_state FROM (VALUES "
                    + ", ".join(f"(:v{i}, :s{i}, :h{i})" for i in range(len(ranked3))) + ")"
                    if ranked3 else "SELECT NULL AS vid, NULL AS score, NULL AS hit_state WHERE 0")
            top = f"SELECT f.vid AS vid, f.hit_state AS hit_state, f.score AS score FROM ({best}) f"
            with_ = ""
    sql = (f"{with_}"
           f"SELECT t.vid, v.key, v.sha, v.committed_at, v.doc, t.hit_state, t.score, "
           f"(k.version_id = v.id AND k.state != 'retracted') AS is_head "
           f"FROM ({top}) t JOIN versions v ON v.id = t.vid JOIN keys k ON k.key = v.key "
           f"ORDER BY {'t.' + order.replace(', ', ', t.')}")
    out: list[tuple[int, dict]] = []
    for row in conn.execute(sql, params):
        r = dict(zip(_COLUMNS, row))
        score = 0.0 if recent else r["score"]
        out.append((r["id"], Later(r, key=r["key"], score=_score(score)) if later else _hit(r, score)))
    return out


class Later(dict):
    """A hit not shaped yet: what the caller set on it, and its row (`row`). Fusion keeps ~35
    candidates for 10 hits (10k keys: ~0.5 ms a question shaping them all); only the hits kept are
    shaped (shaped()), each as it would have been, then given what was set here (the same keys in
    the same order). A version's doc holds its key (records/served.py): `key` is the row's."""

    __slots__ = ("row",)

    def __init__(self, row: dict, **known) -> None:
        super().__init__(known)
        self.row = row


def shaped(hit: dict) -> dict:
    """`hit` itself, or the hit a Later stands for (an Unread's row read first: readable)."""
    if not isinstance(hit, Later):
        return hit
    full = _hit(hit.row, 0.0)
    full.update(hit)
    return full


def _slice_top(conn, mode: str, match: str, params: dict, where: list[str]) -> list[tuple[int, float, str]] | None:
    """The top (version id, score, state) of `fts MATCH match` inside the mode's slice and the
    filters, from each word's bm25() parts over `fts` kept on disk (search/common_rows.py, issue 39:
    bm25() over every version holding a common word and the whole slice built cost ~1 s at 100k
    keys); None when the question is not an OR of distinct words, a word's parts are not kept yet,
    or the kept best rows cannot prove the top (then the SQL above)."""
    from kyb_cli.core.index.slice import among
    from kyb_cli.core.search import bm25, common_rows

    words = bm25.words_of(match)
    if not words or len(set(words)) != len(words) or params["limit"] <= 0:
        return None
    phrases = [f'"{w}"' for w in words]
    from kyb_cli.core.index import warm

    kept = (common_rows.kept_here(conn, phrases, schema.FTS_WEIGHTS_SQL) if warm.keeping()
            else common_rows.kept(conn, phrases, 1, schema.FTS_WEIGHTS_SQL, table="fts"))
    if kept is None:
        return None
    phrases = [p for p in phrases if kept[p].n]  # a word no row holds adds 0.0 and matches none
    if any(kept[p].ids is None for p in phrases):
        return None
    filtered = "".join(f" AND {w}" for w in where)

    def member(vids: list[int]) -> dict[int, str]:
        ids = ",".join(str(int(v)) for v in vids)
        return dict(conn.execute(f"SELECT c.vid, c.state FROM ({among(mode, ids)}) c "
                                 f"JOIN versions v ON v.id = c.vid WHERE 1{filtered}", params))

    if not phrases:
        return []
    return common_rows.slice_top([kept[p] for p in phrases], params["limit"], member)


def _kept_top(conn, match: str, limit: int) -> list[tuple[int, float]] | None:
    """The hot path's top rows from a long-lived door's postings (search/bm25.py), else None."""
    from kyb_cli.core.index import warm

    if not warm.keeping():
        return None
    from kyb_cli.core.search import bm25

    return bm25.top(conn, match, limit)


class Unread(Later):
    """A vector side's hit whose row is not read yet (`row` None): fusion grades ~25 semantic-only
    candidates for the ~10 kept, and reading every one's row (the doc with it) was ~0.25 ms of each
    hybrid answer on the runbooks (issue 38). `readable` reads the rows of the ones kept, shaped as
    lexical() shapes its hits (shaped()); a version no row is found for (gone) is left out."""

    __slots__ = ("vid", "state", "gone")

    def __init__(self, vid: int, state: str) -> None:
        super().__init__(None)
        self.vid, self.state, self.gone = vid, state, False


def readable(conn, hits: list[dict], limit: int | None = None) -> list[dict]:
    """`hits` without the Unread ones whose version is gone, each other Unread's row read; with
    `limit`, the first `limit` such hits only (rows read for those alone, then for the next ones
    while some were gone): what reading every row, then a cut to `limit`, gives."""
    out: list[dict] = []
    start, want = 0, len(hits) if limit is None else max(0, int(limit))
    while len(out) < want and start < len(hits):
        chunk = hits[start:start + want - len(out)]
        start += len(chunk)
        _read(conn, [h for h in chunk if isinstance(h, Unread)])
        out.extend(h for h in chunk if not (isinstance(h, Unread) and h.gone))
    return out


def _read(conn, unread: list[Unread]) -> None:
    """Each of `unread`'s row, in one statement (`?` marks: SQLite's statement cache keeps one per
    count, where literal ids were parsed anew each time, ~40 us of 36 rows); a version not found is `gone`."""
    todo = {h.vid: h for h in unread if h.row is None and not h.gone}
    if not todo:
        return
    for row in conn.execute(
            "SELECT v.id, v.key, v.sha, v.committed_at, v.doc, NULL, 0.0, "
            "(k.version_id = v.id AND k.state != 'retracted') FROM versions v JOIN keys k ON k.key = v.key "
            f"WHERE v.id IN ({','.join('?' * len(todo))})", tuple(int(v) for v in todo)):
        r = dict(zip(_COLUMNS, row))
        h = todo.pop(r["id"])
        r["hit_state"] = h.state
        h.row = r
    for h in todo.values():
        h.gone = True



def _hit(r: dict, score: float) -> dict:
    doc = schema.decode(r["doc"])
    hit = {"key": doc["key"], "title": doc["title"], "kind": doc["kind"], "body": doc.get("body", ""),
           "tags": doc.get("tags", [])}
    for name, value in doc.items():
        if name not in _HIDDEN_KEYS:
            hit[name] = value
    hit["refs"] = doc.get("refs", [])
    if doc.get("extra"):
        hit["extra"] = doc["extra"]
    hit["effective_at"] = doc.get("effective_at") or doc.get("started_at") or doc.get("detected_at") or None
    when = r["committed_at"]  # None in a snapshot: the writing commit is known once history is in
    hit.update(sha=r["sha"], committed_at=None if when is None else _when(when), state=r["hit_state"],
               is_head=bool(r["is_head"]), score=_score(score))
    return hit


@lru_cache(maxsize=4096)
def _when(epoch: int) -> str:
    """rfc3339(epoch), kept: a store's versions share few commit times, and making the string was
    ~2.3 us of each hit's ~9 (issue 38)."""
    return rfc3339(epoch)


def _score(score) -> float:
    """A hit's score as answers carry it (a Later's too: shaped() keeps it)."""
    return round(float(score), 6)
