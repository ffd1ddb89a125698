"""A common word's bm25() part per row, kept on disk by index state for one-shot processes (issue 38).

When every word of a question is in at least half of fts_now's rows, bm25.rare_top ranks their
AND, and bm25() scored each row holding them all: 5.7k rows, ~4 ms of a ~13 ms one-shot answer at
10k keys (`kyb query "postgres replica"`), paid by every process. FTS5 sums a row's score over the
phrases in order, each part idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl)) from that
phrase's own counts, and a common word's idf is the 1e-6 clamp (fts5_aux.c); so each part is the
very double bm25() returns for the phrase alone, and 0.0 + part + part... in phrase order is the
AND's score. Kept per (state, phrase) in search/passage_file.py's file, as df_file.py keeps counts
(the same state: index file, HEAD, newest version id): the phrase's row count, and for a common one
its rows (ascending) with their parts and its KEEP best rows. The AND's top is then scored from
the best rows alone, proved as rare_top proves its bounds: a row outside every phrase's best holds
at most each KEEP-th part, so when the limit-th score is above their sum it cannot enter the top
(or tie); else None and bm25() scores every row as before. A phrase's parts are made the second
time it is asked at a state (its count the first). Any SQLite error keeps nothing.
With a rarer word (issue 39: FTS5 walked every row of the OR to keep the few holding one, ~120 of
~190 ms of a one-shot answer at 100k keys), the OR is scored the same way, a phrase a row lacks
adding 0.0: from every phrase's best rows once each phrase's parts are kept (a rarer one's too,
made the second time it is asked, as a common one's), else, for few rarer rows, from their own
bm25() and the common phrases' kept parts.
`--history` and `--as-of` (issue 39: the slice built whole, then bm25() over every version holding a
word, ~1 s at 100k keys) rank the OR the same way from each word's parts over `fts` (every version:
bm25()'s counts and lengths are the table's, whatever the slice), kept in `version_rows`: the best
rows of every word, deeper and deeper, their slice membership asked of those rows only (slice_top),
else every row's score in numpy, walked best first until `limit` rows are in the slice (full_top).
"""

from __future__ import annotations

import json
from array import array
try:  # bisect.py defines it in Python, then takes its C module's: one module fewer on a `kyb query` (issue 38)
    from _bisect import bisect_left
except ImportError:  # an interpreter without CPython's accelerator module
    from bisect import bisect_left
from itertools import compress, repeat
from operator import add, eq

KEEP = 256  # best rows kept per common phrase: at 10k keys the proof needs ~200 for two words
# `fts` (every version, issue 39's --as-of/--history): more best rows, a slice keeps a part of them
KEEP_FTS = 1024
# Words whose parts over `fts` are kept at once: ~4-6 MB each at 100k keys (369k versions), the file
# ~100-200 MB at most, its pages reused past that
MOST_FTS_WORDS = 32
_PAST = 2 ** 63 - 1
_KEPT_IN = {"fts_now": "common_rows", "fts": "version_rows"}  # the file's table for each index table


class Rows:
    """One phrase at one state: `n` rows hold it; for a common phrase its rows, parts and best."""

    def __init__(self, n: int, ids=None, parts=None, best=None, thr=None) -> None:
        self.n, self.thr, self.blobs = n, thr, (ids, parts, best)
        self.ids = _unpack("q", ids, _PAST)  # a sentinel past every rowid: a bisect never runs off the end
        self.parts = _unpack("d", parts, 0.0)
        self.best = _unpack("q", best)


def _unpack(code: str, blob, sentinel=None):
    if blob is None:
        return None
    out = array(code)
    out.frombytes(blob)
    if sentinel is not None:
        out.append(sentinel)
    return out


def kept(conn, phrases: list[str], half: int, weights: str, table: str = "fts_now") -> dict[str, Rows] | None:
    """{phrase: Rows} for each of `phrases` at the index's state now, read from the file or counted
    (up to `half`; scored with bm25(`table`, `weights`) the second time it is asked) and kept;
    None when the file cannot be used."""
    import apsw

    from kyb_cli.core.search import df_file, passage_file

    kept_in = passage_file.opened(conn)
    if kept_in is None:
        return None
    head = conn.execute("SELECT v FROM meta WHERE k = 'head'").fetchone()
    newest = conn.execute("SELECT coalesce(max(id), 0) FROM versions").fetchone()[0]
    state = df_file.state_of(conn, head[0] if head else None, newest)
    if state is None:
        return None
    name, keep = _KEPT_IN[table], KEEP if table == "fts_now" else KEEP_FTS
    out: dict[str, Rows] = {}
    try:
        try:
            for p in phrases:
                row = kept_in.conn.execute(f"SELECT n, ids, parts, best, thr FROM {name} WHERE state = ? AND phrase = ?",
                                           (state, p)).fetchone()
                if row is not None:
                    out[p] = Rows(*row)
        except apsw.SQLError:  # no table yet: made below
            pass
        # A phrase is scored the second time it is asked at a state (~10 ms a word at 10k keys,
        # two ANDs' worth): a store written between questions pays only its count, as before.
        missing = [p for p in dict.fromkeys(phrases) if p not in out or out[p].ids is None]
        if missing:
            made = {p: _made(conn, p, half, weights, p in out, table, keep) for p in missing}
            with kept_in.conn:
                kept_in.conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {name}(state TEXT NOT NULL, phrase TEXT NOT NULL, "
                    "n INTEGER NOT NULL, ids BLOB, parts BLOB, best BLOB, thr REAL, "
                    "PRIMARY KEY (state, phrase)) WITHOUT ROWID")
                kept_in.conn.execute(f"DELETE FROM {name} WHERE state != ?", (state,))
                if table == "fts" and kept_in.conn.execute(f"SELECT count(*) FROM {name} WHERE ids IS NOT NULL").fetchone()[0] \
                        + sum(r.ids is not None for r in made.values()) > MOST_FTS_WORDS:  # the others start afresh
                    kept_in.conn.execute(f"UPDATE {name} SET ids = NULL, parts = NULL, best = NULL, thr = NULL "
                                         "WHERE phrase NOT IN (SELECT value FROM json_each(?))", (json.dumps(phrases),))
                kept_in.conn.executemany(f"INSERT OR REPLACE INTO {name} VALUES (?, ?, ?, ?, ?, ?, ?)", [
                    (state, p, r.n, *r.blobs, r.thr)
                    for p, r in made.items()])
            out.update(made)
    except apsw.Error:
        kept_in.abandon()
        return None
    return out


def kept_here(conn, phrases: list[str], weights: str) -> dict[str, Rows]:
    """kept()'s {phrase: Rows} over `fts` in a door (index/warm.keeping), in this connection's memo
    by index state instead of the file (a door never opens it): a phrase's count the first time it
    is asked at a state, its parts the second; at most MOST_FTS_WORDS words' parts, then afresh."""
    from kyb_cli.core.index.vectors import conn_memo, db_state

    memo = conn_memo(conn)
    state = db_state(conn)
    held = memo.get("version_rows")
    if held is None or held[0] != state:
        held = memo["version_rows"] = (state, {})
    rows: dict[str, Rows] = held[1]
    missing = [p for p in dict.fromkeys(phrases) if p not in rows or rows[p].ids is None]
    if missing and sum(r.ids is not None for r in rows.values()) + len(missing) > MOST_FTS_WORDS:
        for p in [p for p in rows if p not in phrases]:
            del rows[p]
    for p in missing:
        rows[p] = _made(conn, p, 1, weights, p in rows, "fts", KEEP_FTS)
    return {p: rows[p] for p in phrases}


def _made(conn, phrase: str, half: int, weights: str, again: bool, table: str = "fts_now", keep: int = KEEP) -> Rows:
    """The phrase's count (up to `half`: rare_top asks no more), and when asked `again` its parts
    (their rows are its count: no count first)."""
    if not again:
        return Rows(conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                                 (phrase, half)).fetchone()[0])
    ids, parts = array("q"), array("d")
    for rowid, part in conn.execute(f"SELECT rowid, -bm25({table}, {weights}) FROM {table} "
                                    f"WHERE {table} MATCH ? ORDER BY rowid", (phrase,)):
        ids.append(rowid)
        parts.append(part)
    import heapq

    best = heapq.nlargest(keep, zip(parts, ids))
    thr = best[-1][0] if len(ids) > keep else None  # None: every row is among the best
    best = array("q", (rowid for _part, rowid in best))
    return Rows(len(ids), ids.tobytes(), parts.tobytes(), best.tobytes(), thr)


def top(common: list[Rows], limit: int) -> list[tuple[int, float]] | None:
    """The `limit` best (rowid, score) of the AND of `common` (in phrase order), newest first among
    equal scores, as bm25() ranks them; None when the kept best rows cannot prove it."""
    rowids: set[int] = set()
    for rows in common:
        rowids.update(rows.best)
    held = list(rowids)
    scores = [0.0] * len(held)
    for rows in common:  # one phrase at a time over every candidate, in C (map): ~0.2 ms, not ~1
        at = list(map(bisect_left, repeat(rows.ids, len(held)), held))  # ids end in a sentinel
        there = list(map(eq, map(rows.ids.__getitem__, at), held))  # not in every phrase: not in the AND
        scores = list(compress(map(add, scores, map(rows.parts.__getitem__, at)), there))
        held = list(compress(held, there))
    got = sorted(zip(scores, held), reverse=True)[:limit]
    if all(rows.thr is not None for rows in common):  # some row holding them all may be left out
        bound = 0.0
        for rows in common:
            bound += rows.thr
        if len(got) < limit or not got[-1][0] > bound:
            return None
    return [(rowid, score) for score, rowid in got]


def _parts_at(rows: Rows, held: list[int]) -> list[float]:
    """Each of `held` rows' part of the phrase (0.0 where the phrase is not in the row)."""
    at = list(map(bisect_left, repeat(rows.ids, len(held)), held))  # ids end in a sentinel
    return [part if rowid == want else 0.0 for part, rowid, want in
            zip(map(rows.parts.__getitem__, at), map(rows.ids.__getitem__, at), held)]


def or_top(phrases: list[Rows], limit: int) -> list[tuple[int, float]] | None:
    """The `limit` best (rowid, score) of the OR of `phrases` (distinct, in the question's order,
    each with its parts kept), as bm25() ranks them; None when their best rows cannot prove it: a
    row outside every phrase's best scores at most the thr of each (rounding is monotone)."""
    held = sorted(set().union(*(rows.best for rows in phrases)))
    scores = [0.0] * len(held)
    bound = 0.0
    for rows in phrases:
        scores = list(map(add, scores, _parts_at(rows, held)))
        bound += rows.thr if rows.thr is not None else 0.0  # None: every row holding it is in held
    got = sorted(zip(scores, held), reverse=True)[:limit]
    if bound > 0.0 and (len(got) < limit or not got[-1][0] > bound):
        return None
    return [(rowid, score) for score, rowid in got]


def few_rare(conn, phrases: list[str], kept: dict[str, Rows], rare: list[str], limit: int,
             weights: str) -> list[tuple[int, float]]:
    """The `limit` best (rowid, score) of the OR of `phrases` (distinct, in the question's order)
    among the rows holding one of `rare`, as bm25() of the OR scores them: a phrase a row lacks adds
    0.0. The common phrases' parts are kept (kept[p].ids); bm25.rare_top proves the rest out."""
    parts: dict[str, dict[int, float]] = {}
    for p in rare:
        parts[p] = dict(conn.execute(f"SELECT rowid, -bm25(fts_now, {weights}) FROM fts_now WHERE fts_now MATCH ?",
                                     (p,)))
    held = sorted(set().union(*parts.values()))
    scores = [0.0] * len(held)
    for p in phrases:
        if p in parts:
            got = list(map(parts[p].get, held, repeat(0.0)))
        else:
            got = _parts_at(kept[p], held)
        scores = list(map(add, scores, got))
    return [(rowid, score) for score, rowid in sorted(zip(scores, held), reverse=True)[:limit]]


def slice_top(phrases: list[Rows], limit: int, member) -> list[tuple[int, float, str]] | None:
    """The `limit` best (rowid, score, state) of the OR of `phrases` (distinct, in the question's
    order, each with its parts kept over `fts`) among the rows `member` admits ({rowid: state} of
    the rowids given that are in the slice and pass the filters), as bm25() ranks them; None when
    the kept best rows cannot prove it. Each phrase's best rows are taken deeper and deeper: a row
    outside the first d of every phrase scores at most the sum of each one's d-th part (in the
    question's order: rounding is monotone), or 0.0 for a phrase whose rows are all taken."""
    states: dict[int, str | None] = {}
    depth = min(KEEP, KEEP_FTS)
    while True:
        bound, complete = 0.0, True
        taken: set[int] = set()
        for rows in phrases:
            d = min(depth, len(rows.best))
            taken.update(rows.best[:d])
            if len(rows.ids) - 1 > d:  # some row holding it is left out (ids end in a sentinel)
                complete = False
                last = rows.best[d - 1]
                bound += rows.parts[bisect_left(rows.ids, last)]
        new = [v for v in taken if v not in states]
        if new:
            got_states = member(new)
            for v in new:
                states[v] = got_states.get(v)
        held = sorted(v for v in taken if states[v] is not None)
        scores = [0.0] * len(held)
        for rows in phrases:
            scores = list(map(add, scores, _parts_at(rows, held)))
        got = sorted(zip(scores, held), reverse=True)[:limit]
        if complete or (len(got) >= limit and got[-1][0] > bound):
            return [(rowid, score, states[rowid]) for score, rowid in got]  # type: ignore[misc]
        if depth >= min(KEEP_FTS, max(len(rows.best) for rows in phrases)):
            return full_top(phrases, limit, member, states)
        depth *= 4


MOST_ASKED = 10_000  # rows full_top asks `member` about before leaving the question to bm25() (~60 ms at 100k)


def full_top(phrases: list[Rows], limit: int, member, states: dict | None = None) -> list[tuple[int, float, str]] | None:
    """slice_top's answer from every row's score (numpy: each phrase's parts added in the question's
    order, the same doubles), the rows taken best first (score, then the newest) and asked of
    `member` a batch at a time until `limit` are in; None past MOST_ASKED rows asked."""
    import numpy as np

    states = dict(states or {})
    size = max(int(np.frombuffer(rows.blobs[0], dtype=np.int64)[-1]) for rows in phrases) + 1
    score = np.zeros(size, dtype=np.float64)
    matched = np.zeros(size, dtype=bool)
    for rows in phrases:
        at = np.frombuffer(rows.blobs[0], dtype=np.int64)
        score[at] += np.frombuffer(rows.blobs[1], dtype=np.float64)  # each row once a phrase
        matched[at] = True
    ids = np.flatnonzero(matched)
    scores = score[ids]
    out: list[tuple[int, float, str]] = []
    want, floor = 4 * limit, None  # rows scoring at least `floor` are asked (ties all taken)
    while True:
        kth = None
        if want >= len(ids):
            taken = np.ones(len(ids), dtype=bool)
        else:
            kth = np.partition(scores, len(scores) - want)[len(scores) - want]
            taken = scores >= kth
        if floor is not None:
            taken &= scores < floor  # walked in an earlier batch
        order = np.lexsort((-ids[taken], -scores[taken]))
        batch_ids, batch_scores = ids[taken][order].tolist(), scores[taken][order].tolist()
        step = max(64, 2 * limit)  # many rows may tie at the floor: asked a few at a time, in order
        for at in range(0, len(batch_ids), step):
            new = [v for v in batch_ids[at:at + step] if v not in states]
            if len(states) + len(new) > MOST_ASKED:
                return None
            if new:
                got = member(new)
                for v in new:
                    states[v] = got.get(v)
            for v, sc in zip(batch_ids[at:at + step], batch_scores[at:at + step]):
                if states[v] is not None:
                    out.append((v, sc, states[v]))
                    if len(out) == limit:
                        return out
        if kth is None:
            return out
        floor, want = kth, want * 8
