"""The vector side's passage rows found from the vectors present, while they are few (issue 39).

After a fresh clone the background filler embeds the slice a batch at a time; meanwhile a one-shot
hybrid query scanned its slice as semantic.py's _score_rows builds it: the whole slice materialized
(~100k current keys at 100k) and joined to the few vectors present. Starting from the model's
vectors instead — vectors (fingerprint) → vtext by text hash → versions by id → keys → not
unreadable — gives the same rows by lookups (100k keys, 1,792 vectors: 10 ms against 128 ms). The
lookups lose once about half the slice is embedded (bench/bench_hybrid_pending.py --crossover:
2,240 vectors 9.7 against 93 ms, 50k 315 against 388, 100k 542 against 456), so they are used while
the model's vectors are fewer than FEWER_THAN of the slice's versions (`few`).

Exact for the slices whose candidates are a join the lookups can end on (slice.py's _candidates):
current and history, with their filters (on versions `v`, joined here too) and the question's
operators. The other modes keep the materialized slice.
"""

from __future__ import annotations

from kyb_cli.core.index import kept
from kyb_cli.core.index.slice import BY_KEY, Slice
from kyb_cli.core.index.vectors import per_state

# The modes whose slice the lookups end on exactly: a version's key row says it is in (slice.BY_KEY).
_KEY_OF = {mode: f"k.key = v.key AND {BY_KEY[mode]}" for mode in ("current", "history")}
# The versions of each mode, unreadable ones included (a few): what the choice is made against.
# Counted from keys and the versions' smallest index: ~2 ms at 100k keys (370k versions), where the
# slice's own SQL took 7 and 85 ms.
_VERSIONS = {"current": "SELECT count(*) FROM keys WHERE state != 'retracted'",
             "history": "SELECT count(*) FROM versions"}
FEWER_THAN = 0.5  # of the slice's versions: below it the lookups win (the crossover above)


def lookups(s: Slice, select: str, where: str) -> str | None:
    """SELECT `select` (over x, t, v, k) of every passage of slice `s` with a vector under `:fp`,
    found from the vectors, `where` (s.sql()'s filters and the operators, on v and t) added; None:
    a mode these lookups do not give exactly. CROSS JOIN holds the order: SQLite would start from
    the slice otherwise."""
    on = _KEY_OF.get(s.mode)
    if on is None:
        return None
    return (f"SELECT {select} FROM vectors x CROSS JOIN vtext t ON t.text_sha = x.text_sha "
            f"CROSS JOIN versions v ON v.id = t.version_id CROSS JOIN keys k ON {on} "
            f"WHERE x.fingerprint = :fp AND t.version_id NOT IN (SELECT version_id FROM unreadable){where}")


def few(conn, fp: str, s: Slice) -> bool:
    """Whether the model's vectors (all of them: the lookups read each) are fewer than FEWER_THAN
    of the versions of `s`'s mode (_VERSIONS; its filters aside: the materialized slice is built in
    full before them). Two counts kept as `pending_vectors` is (kept.py): the slice's versions, which added
    vectors do not move, and the vectors, brought forward by the log of those added and counted
    only up to the bound (a filled index is not read through)."""
    if s.mode not in _KEY_OF:
        return False

    def make() -> bool:
        versions = kept.count(conn, _VERSIONS[s.mode], {}, "SELECT 0")
        bound = int(versions * FEWER_THAN)
        if bound <= 0:
            return False
        present = kept.count(conn, "SELECT count(*) FROM (SELECT 1 FROM vectors WHERE fingerprint = :fp LIMIT :bound)",
                             {"fp": fp, "bound": bound},
                             f"SELECT -count(*) FROM {kept.ADDED} WHERE id > :since AND fingerprint = :fp")
        return present < bound

    return per_state(conn, ("few vectors", fp, s.mode), make)
