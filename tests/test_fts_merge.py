"""index/fts_merge.py: an FTS5 table merged from shard files answers as the same rows INSERTed into
one table — integrity-check, fts5vocab (row, col, instance), the averages record, bm25() doubles and
order — and goes on doing so after inserts, deletes, 'merge' and 'optimize'. A merge with its segment
renumbering, averages or origins wrong is caught by the same checks (the tests can fail)."""

from __future__ import annotations

import random

import apsw
import pytest

from kyb_cli.core.index import fts_merge
from kyb_cli.core.index.fts_merge import ShardMismatch, decode_structure, merge
from kyb_cli.core.index.schema import FTS_COLUMNS, FTS_WEIGHTS_SQL, TOKENIZER

COLS = ", ".join(FTS_COLUMNS)
KINDS = {"fts_now": ", contentless_delete=1", "fts": ""}  # the index's two tables
WORDS = [f"{a}{b}" for a in ("port", "cache", "disk", "queue", "node", "shard", "token", "lease")
         for b in ("", "s", "ing", "er", "ed", "al", "ion", "ity", "less", "wise")]


def ddl(table: str, tokenizer: str = TOKENIZER) -> str:
    return f"CREATE VIRTUAL TABLE {table} USING fts5({COLS}, content=''{KINDS[table]}, tokenize='{tokenizer}')"


def rows(ids, seed: int = 1) -> list[tuple]:
    """Texts with common and rare words (Zipf) in every column, some rows empty in some columns."""
    rnd = random.Random(seed)
    weights = [1 / (i + 1) for i in range(len(WORDS))]

    def text(lo: int, hi: int) -> str:
        return " ".join(rnd.choices(WORDS, weights, k=rnd.randint(lo, hi)))
    return [(i, text(1, 6), text(0, 3), f"kn-{i}-{rnd.choice(WORDS)}", text(0, 8), text(5, 60)) for i in ids]


def table(path, name: str, content: list[tuple], hashsize: int | None = 6000, tokenizer: str = TOKENIZER):
    """A file with `name` holding `content`, inserted in one transaction; a small hash: many segments."""
    conn = apsw.Connection(str(path))
    for pragma in ("synchronous=OFF", "journal_mode=MEMORY"):  # no fsync; savepoints still roll back
        conn.execute(f"PRAGMA {pragma}").fetchall()
    conn.execute(ddl(name, tokenizer))
    if hashsize:
        conn.execute(f"INSERT INTO {name}({name}, rank) VALUES('hashsize', {hashsize})")
    with conn:
        conn.executemany(f"INSERT INTO {name}(rowid, {COLS}) VALUES(?,?,?,?,?,?)", content)
    return conn


QUERIES = (["portal", "cache", "diskless", "queues", "node OR shard", "port AND lease", "token NOT cache",
            '"cache port"', "sha*", "title : port", "{title body} : queue node", "le*", "tokens OR shardwise"]
           + [f"{a} OR {b}" for a, b in zip(WORDS[::7], WORDS[3::7])])


def differences(a, b, name: str) -> list[str]:
    """What tells table `name` of connection `a` from that of `b`; [] when nothing does."""
    out = []
    for conn, which in ((a, "one"), (b, "merged")):
        try:
            conn.execute(f"INSERT INTO {name}({name}) VALUES('integrity-check')")
        except apsw.Error as exc:
            out.append(f"{which}: integrity-check: {exc}")
    avg = [c.execute(f"SELECT block FROM {name}_data WHERE id = 1").fetchone() for c in (a, b)]
    if avg[0] != avg[1]:
        out.append(f"averages {avg}")
    for kind in ("row", "col", "instance"):
        got = []
        for conn in (a, b):
            conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_{kind} USING fts5vocab(main, {name}, {kind})")
            got.append(conn.execute(f"SELECT * FROM temp.v_{kind}").fetchall())
            conn.execute(f"DROP TABLE temp.v_{kind}")
        if got[0] != got[1]:
            out.append(f"fts5vocab {kind}")
    for q in QUERIES:
        sql = f"SELECT rowid, bm25({name}, {FTS_WEIGHTS_SQL}) s FROM {name} WHERE {name} MATCH ? ORDER BY s"
        x, y = a.execute(sql, (q,)).fetchall(), b.execute(sql, (q,)).fetchall()
        if x != y:  # rowids, order and the doubles exactly
            out.append(f"bm25 {q!r}")
    return out


def structure(conn, name: str) -> dict:
    return decode_structure(conn.execute(f"SELECT block FROM {name}_data WHERE id = 10").fetchone()[0])


def shards(tmp_path, name: str, parts: list[list[tuple]], **kw) -> list[str]:
    paths = []
    for i, part in enumerate(parts):
        paths.append(str(tmp_path / f"shard{i}.db"))
        table(paths[-1], name, part, **kw).close()
    return paths


def writes(conn, name: str, n: int) -> None:
    """The same later writes on either side: new rows, and (fts_now) deletes of rows of every shard."""
    with conn:
        conn.executemany(f"INSERT INTO {name}(rowid, {COLS}) VALUES(?,?,?,?,?,?)", rows(range(n + 1, n + 120), 9))
        if name == "fts_now":
            conn.executemany(f"DELETE FROM {name} WHERE rowid = ?", [(r,) for r in range(3, n + 100, 17)])


@pytest.mark.parametrize(("name", "in_transaction"), [("fts_now", False), ("fts", False), ("fts_now", True)])
def test_a_merged_table_answers_as_one_table(tmp_path, name, in_transaction):
    """Shards attached and copied by SQL; or (inside a transaction) their rows through Python."""
    n = 1200
    every = rows(range(1, n + 1))
    one = table(tmp_path / "one.db", name, every)
    parts = [every[:500], every[500:501], every[501:]]  # contiguous, one of a single row
    merged = table(tmp_path / "merged.db", name, [])
    if in_transaction:
        merged.execute("BEGIN")
    merge(merged, name, shards(tmp_path, name, parts))
    if in_transaction:
        merged.execute("COMMIT")
    assert [r[0] for r in merged.execute("SELECT name FROM pragma_database_list")] == ["main"]  # detached
    s = structure(merged, name)
    assert sum(len(segs) for _m, segs in s["levels"]) > 3  # several segments a shard, renumbered
    assert differences(one, merged, name) == []
    writes(one, name, n)
    writes(merged, name, n)
    assert differences(one, merged, name) == []
    for command in ("'merge', 200", "'merge', -16", "'optimize', NULL"):
        for conn in (one, merged):
            conn.execute(f"INSERT INTO {name}({name}, rank) VALUES({command})")
        assert differences(one, merged, name) == [], command


@pytest.mark.parametrize("in_transaction", [True, False])
def test_interleaved_rowids_into_a_table_already_in_use(tmp_path, in_transaction):
    """Shards of interleaved rowids into a table that this connection has written and read (FTS5's
    cached structure and averages), and holds pending rows and a delete of in an open transaction."""
    name, n = "fts_now", 1000
    every = rows(range(1, n + 1))
    own, theirs = every[:300], every[300:]
    one = table(tmp_path / "one.db", name, every)
    merged = table(tmp_path / "merged.db", name, own[:200])
    assert merged.execute(f"SELECT count(*) FROM {name} WHERE {name} MATCH 'port'").fetchone()[0] > 0
    paths = shards(tmp_path, name, [theirs[0::2], theirs[1::2]])
    if in_transaction:
        merged.execute("BEGIN")
    merged.executemany(f"INSERT INTO {name}(rowid, {COLS}) VALUES(?,?,?,?,?,?)", own[200:])  # pending
    merged.execute(f"DELETE FROM {name} WHERE rowid = 5")
    merge(merged, name, paths)
    if in_transaction:
        merged.execute("COMMIT")
    one.execute(f"DELETE FROM {name} WHERE rowid = 5")
    assert differences(one, merged, name) == []
    writes(one, name, n)
    writes(merged, name, n)
    assert differences(one, merged, name) == []


def _wrong(monkeypatch, what: str) -> None:
    if what == "segids":  # the structure renumbered, the pages left where they were
        monkeypatch.setattr(fts_merge, "page_rowid", lambda rowid, old, new: rowid)
    elif what == "averages":  # the target's totals kept, the shards' not added
        monkeypatch.setattr(fts_merge, "add_averages", lambda total, more: None)
    else:  # rows keep their shard's origins while its segments move up
        monkeypatch.setattr(fts_merge, "row_origin", lambda origin, shift: origin)


@pytest.mark.parametrize("what", ["segids", "averages", "origins"])
def test_a_wrong_merge_is_caught(tmp_path, monkeypatch, what):
    name, n = "fts_now", 900
    every = rows(range(1, n + 1))
    one = table(tmp_path / "one.db", name, every)
    merged = table(tmp_path / "merged.db", name, [])
    paths = shards(tmp_path, name, [every[:450], every[450:]])
    _wrong(monkeypatch, what)
    try:
        merge(merged, name, paths)
        writes(one, name, n)
        writes(merged, name, n)
        found = differences(one, merged, name)
    except apsw.Error as exc:  # pages on top of each other, a corrupt index
        found = [str(exc)]
    assert found != []


def test_ongoing_merges_in_shards(tmp_path):
    """A shard stopped half way through a merge (its inputs the oldest of a level, its output the
    newest of the next) keeps it going in the merged table; two on one level cannot be merged."""
    name, n = "fts", 1600
    every = rows(range(1, n + 1))
    one = table(tmp_path / "one.db", name, every)
    paths = shards(tmp_path, name, [every[:800], every[800:]], hashsize=20000)  # 9 segments on level 0
    a = apsw.Connection(paths[0])
    a.execute("PRAGMA synchronous=OFF")
    a.execute(f"INSERT INTO {name}({name}, rank) VALUES('merge', 3)")
    assert any(m for m, _segs in structure(a, name)["levels"])
    a.close()
    merged = table(tmp_path / "merged.db", name, [])
    merge(merged, name, paths)
    assert any(m for m, _segs in structure(merged, name)["levels"])
    assert differences(one, merged, name) == []
    merged.execute(f"INSERT INTO {name}({name}, rank) VALUES('merge', 2000)")
    assert differences(one, merged, name) == []
    b = apsw.Connection(paths[1])
    b.execute("PRAGMA synchronous=OFF")
    b.execute(f"INSERT INTO {name}({name}, rank) VALUES('merge', 3)")
    b.close()
    again = table(tmp_path / "again.db", name, [])
    with pytest.raises(ShardMismatch, match="two ongoing merges"):
        merge(again, name, paths)


def test_a_shard_that_does_not_fit_changes_nothing(tmp_path):
    name = "fts_now"
    merged = table(tmp_path / "merged.db", name, rows(range(1, 101)))
    before = [merged.execute(f"SELECT * FROM {name}_{t}").fetchall() for t in ("data", "idx", "docsize")]
    other = tmp_path / "other.db"
    table(other, name, rows(range(200, 260)), tokenizer="unicode61").close()
    with pytest.raises(ShardMismatch, match="not defined as"):
        merge(merged, name, [str(other)])
    overlapping = shards(tmp_path, name, [rows(range(300, 400)), rows(range(90, 110))])
    with pytest.raises(ShardMismatch, match="not disjoint"):
        merge(merged, name, overlapping)
    assert [merged.execute(f"SELECT * FROM {name}_{t}").fetchall() for t in ("data", "idx", "docsize")] == before
    merged.execute(f"INSERT INTO {name}({name}) VALUES('integrity-check')")


def test_varints_and_records_round_trip():
    for value in (0, 1, 127, 128, 16383, 16384, 2**35 + 7, 2**56 - 1, 2**56, 2**63 + 5, 2**64 - 1):
        data = fts_merge.put_varint(value)
        assert fts_merge.varint(b"\x00" + data + b"\x00", 1) == (value, 1 + len(data))
    conn = table(":memory:", "fts_now", rows(range(1, 300)))
    raw = conn.execute("SELECT block FROM fts_now_data WHERE id = 10").fetchone()[0]
    assert fts_merge.encode_structure(decode_structure(raw)) == raw


def test_a_sqlite_whose_format_was_not_verified_takes_the_inserts(monkeypatch, tmp_path):
    """The shadow tables are FTS5's format, not a promise: on another SQLite release the snapshot
    never shards (its workers return the rows and the writing process inserts them)."""
    import apsw

    from kyb_cli.core.index import schema, snapshot

    assert fts_merge.known_format()  # the release these tests run on is one the format was read from
    conn = apsw.Connection(str(tmp_path / "i.sqlite"))
    schema.create(conn)
    assert snapshot._shard_spec(conn, tmp_path / "t") is not None
    monkeypatch.setattr(apsw, "sqlite_lib_version", lambda: "3.99.0")
    assert not fts_merge.known_format()
    assert snapshot._shard_spec(conn, tmp_path / "t") is None
