"""`pending_vectors` brought forward over the vectors added since it was kept (index/kept.py,
vectors._completed_sql): while the filler commits batches, the next process subtracts the versions
the batch completed instead of counting the slice again; every other change is counted again, and
after every step the count equals a fresh one."""

from __future__ import annotations

from tests.support.index_helpers import T0, put, remove

FP = "fp-one"
LONG = "\n\n".join(f"Paragraph {i}: " + " ".join(f"word{i}x{j}" for j in range(120)) for i in range(8))


def slices():
    from kyb_cli.core.index.slice import Filters, Slice

    return [Slice("current"), Slice("history"), Slice("changed_between", window=(T0 + 5, T0 + 100)),
            Slice("as_of", as_of=T0 + 15), Slice("current", filters=Filters(tags=["red"])),
            Slice("as_of_event", as_of_event=T0 + 100)]


def seed(store_path):
    put(store_path, "alpha", "Alpha", "first text", T0, tags=["red"])
    put(store_path, "beta", "Beta", LONG, T0 + 10)
    put(store_path, "alpha", "Alpha", "alpha again", T0 + 20, tags=["red"])


def conn(store_path):
    from kyb_cli.core.index.fresh import fresh

    return fresh(store_path).conn


def check(store_path) -> list[int]:
    """Each slice asked by two new processes, both equal to a fresh count of the SQL."""
    from kyb_cli.core.index.vectors import _missing_sql, pending

    out = []
    for s in slices():
        got = []
        for _ in range(2):
            c = conn(store_path)
            got.append(pending(c, FP, s))
            c.close()
        c = conn(store_path)
        sql, params = _missing_sql(s, "count(DISTINCT c.vid)")
        want = c.execute(sql, params | {"fp": FP}).fetchone()[0]
        c.close()
        assert got == [want, want], (s, got, want)
        out.append(want)
    return out


def missing(store_path, n: int) -> list[str]:
    from kyb_cli.core.index.vectors import missing_in_order

    c = conn(store_path)
    try:
        return missing_in_order(c, FP, n)
    finally:
        c.close()


def add(store_path, shas) -> None:
    """A batch of vectors committed from another connection, as the filler writes them."""
    c = conn(store_path)
    with c:
        c.executemany("INSERT OR REPLACE INTO vectors(text_sha, fingerprint, vec) VALUES(?, ?, zeroblob(16))",
                      [(h, FP) for h in shas])
    c.close()


def test_a_batch_of_vectors_brings_the_kept_count_forward(store_path):
    """The kept rows are doctored (+1000): the next process subtracts what the batch completed from
    them, it does not count again (counted again, it would say the truth)."""
    seed(store_path)
    before = check(store_path)
    c = conn(store_path)
    with c:
        for k, v in c.execute("SELECT k, v FROM meta WHERE k GLOB 'count:*'").fetchall():
            said, _, n = v.rpartition("\n")
            c.execute("UPDATE meta SET v = ? WHERE k = ?", (f"{said}\n{int(n) + 1000}", k))
    c.close()
    add(store_path, missing(store_path, 1))  # the newest version's one text: alpha's current one
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import pending

    c = conn(store_path)
    try:
        assert pending(c, FP, Slice("current")) == before[0] - 1 + 1000
        assert pending(c, FP, Slice("history")) == before[1] - 1 + 1000
    finally:
        c.close()


def test_never_stale_through_batches_writes_retractions_and_removals(store_path):
    seed(store_path)
    c = conn(store_path)
    parts = [r[0] for r in c.execute("SELECT t.text_sha FROM vtext t JOIN versions v ON v.id = t.version_id "
                                     "WHERE v.key = 'beta' ORDER BY t.part")]
    c.close()
    assert len(parts) > 1  # beta's version has several passages
    first = check(store_path)
    add(store_path, parts[:-1])  # all but one passage: beta stays pending
    assert check(store_path) == first
    add(store_path, parts[:1])  # present already (a REPLACE): nothing completes
    assert check(store_path) == first
    add(store_path, parts[-1:])  # beta complete now
    assert check(store_path)[1] == first[1] - 1
    add(store_path, parts[:1])  # a complete version's vector written again: it completes nothing new
    assert check(store_path)[1] == first[1] - 1
    put(store_path, "gamma", "Gamma", "third text", T0 + 30, tags=["red"])
    check(store_path)
    add(store_path, missing(store_path, 1))
    check(store_path)
    remove(store_path, "alpha", T0 + 40)
    check(store_path)
    add(store_path, missing(store_path, 2))
    check(store_path)
    c = conn(store_path)
    with c:
        c.execute("DELETE FROM vectors WHERE text_sha = ?", (parts[0],))  # beta incomplete again
    c.close()
    assert check(store_path)[1] == first[1] - 1 + 1 - 2
    add(store_path, missing(store_path, 10))
    assert check(store_path) == [0] * len(slices())


def test_the_log_is_kept_only_as_long_as_a_kept_count_needs_it(store_path):
    seed(store_path)
    check(store_path)
    for h in missing(store_path, 10):
        add(store_path, [h])
        check(store_path)
        c = conn(store_path)
        assert c.execute("SELECT count(*) FROM vec_added").fetchone()[0] == 0
        c.close()


def test_the_history_swap_after_batches_is_counted_again(store_path, monkeypatch):
    from tests.support.index_helpers import fill_in_background_now

    monkeypatch.setenv("KYB_STAGE_AT", "0")
    monkeypatch.setenv("KYB_BACKGROUND", "off")
    seed(store_path)
    check(store_path)
    add(store_path, missing(store_path, 1))
    snap = check(store_path)
    fill_in_background_now(store_path)  # history in (no model here: no vectors from it)
    add(store_path, missing(store_path, 1))
    full = check(store_path)
    assert full[1] >= snap[1] - 1


def test_a_fill_beyond_the_log_bound_is_counted_again_and_the_log_dropped(store_path, monkeypatch):
    """`kyb index --embed` adds every vector at once: more than MAX_SINCE since the kept rows, so the
    next count is made from the slice and no kept row holds the log any longer."""
    from kyb_cli.core.index import kept

    monkeypatch.setattr(kept, "MAX_SINCE", 1)
    seed(store_path)
    check(store_path)
    add(store_path, missing(store_path, 3))
    from kyb_cli.core.index.slice import Slice
    from kyb_cli.core.index.vectors import pending

    c = conn(store_path)
    pending(c, FP, Slice("current"))  # one slice counted again: the others' rows are too far behind
    assert c.execute("SELECT count(*) FROM vec_added").fetchone()[0] == 0
    c.close()
    check(store_path)
