"""One FTS5 table out of shards built apart: their segments copied in, nothing tokenized again (issue 39).

Why: FTS5 inserts are serial (tokenizing, the pending-terms hash, segment writes): HEAD's 100k
records into `fts_now` cost 1.8-2.6 CPU s in one process, most of a first answer's 3 s. Worker
processes can each write a share of the rows (disjoint rowids) into a table of the SAME definition
in a file of their own; `merge` then copies the shards' segments into the real table at the level
of FTS5's shadow tables (~60-110 ms for 100k rows, called outside a transaction), and the table
answers as if every row had been inserted there: `integrity-check` passes, the fts5vocab tables
are equal, bm25() gives the same doubles in the same order, and inserts, deletes
(contentless_delete), 'merge' and 'optimize' go on working (tests/test_fts_merge.py;
bench/exp_fts_merge.py at 10k and 100k rows). Only the segments differ: a shard's stay as it wrote
them (levels kept), so the table has the shards' segments side by side until FTS5 merges them.

The format it relies on (SQLite's ext/fts5/fts5_index.c; what 3.54.1 writes, decoded by the tests):
- `<t>_data` rowid 10, the structure record: a 4-byte big-endian config cookie; the 4 bytes
  FF 00 00 01 when it is a V2 record (contentless_delete=1 tables); varints: levels, segments,
  write counter; per level: segments in an ongoing merge (nMerge), segments; per segment
  (oldest first): segid, first leaf, last leaf, and in V2 five more: lowest and highest origin,
  tombstone hash pages, tombstones that count, rows. The next origin is not stored: it is the
  highest origin + 1.
- `<t>_data` rowid 1, the averages record: varints: rows, then per column its total tokens.
- Every other `<t>_data` row belongs to one segment: rowid = segid << 37 | dlidx << 36 |
  height << 31 | page, and a tombstone hash page (segid + 2**16) << 37 | page. Renumbering a
  segment is adding (new - old) << 37 to its rowids; nothing inside a page names its segment.
- `<t>_idx(segid, term, pgno)`: the b-tree of each segment's first terms.
- `<t>_docsize(id, sz[, origin])`: each row's token counts, and in V2 the origin (the origin
  counter when it was inserted): a delete puts its tombstone into the segments whose origin range
  holds it, so a shard's origins move up past the ones already taken, as its segments' do.
The config cookie and `<t>_config` stay the target's (a shard's hashsize, automerge... are its own).
The shards must be committed and closed. A shard stopped in the middle of an incremental merge
(a level's nMerge) keeps it (its inputs the oldest of their level, its output the newest of the
next); two such on one level are refused.

FTS5 keeps the structure and the averages of a table cached per connection, and writes them back
at a savepoint or commit: `merge` first has the table flush its pending rows and drop its cache
(`'merge', 0` does both), lets a savepoint write the cached averages out, and drops the cache
again after writing, so the connection reads the merged table from then on.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

V2 = b"\xff\x00\x00\x01"
STRUCTURE_ROWID = 10
AVERAGES_ROWID = 1
SEGID_SHIFT = 37  # FTS5_DATA_PAGE_B + FTS5_DATA_HEIGHT_B + FTS5_DATA_DLI_B
TOMBSTONE_SEGIDS = 1 << 16  # a tombstone page's rowid is that of segid + 2**16
MAX_SEGMENTS = 2000  # FTS5_MAX_SEGMENT: a structure with more is corrupt
# SQLite releases whose FTS5 format the tests above were run against: the format is FTS5's own, not a
# promise, so on any other release a caller builds its table by INSERTs (known_format), never guessing
VERIFIED = ("3.54.",)
MAX_ATTACHED = 8  # SQLite attaches at most 10 databases by default: more shards are read apart


def known_format() -> bool:
    """Whether this SQLite is one whose FTS5 shadow-table format `merge` was verified against."""
    import apsw

    return apsw.sqlite_lib_version().startswith(VERIFIED)


class ShardMismatch(ValueError):
    """A shard that cannot go into the table: another definition, overlapping rowids, too many segments."""


def varint(data: bytes, i: int) -> tuple[int, int]:
    """SQLite's varint at data[i]: (value, next offset). 7 bits a byte, high bit first; a 9th byte
    gives 8."""
    value = 0
    for n in range(9):
        byte = data[i]
        i += 1
        if n == 8:
            return (value << 8) | byte, i
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, i
    raise AssertionError("unreachable")


def put_varint(value: int) -> bytes:
    """SQLite's varint of 0 <= value < 2**64."""
    if value >> 56:  # nine bytes: eight of 7 bits, the last of 8
        out = [value & 0xFF]
        value >>= 8
        for _ in range(8):
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        return bytes(reversed(out))
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    return bytes(reversed(out))


def decode_structure(data: bytes) -> dict:
    """The structure record: cookie, v2, counter (write counter), levels [[nMerge, [segment]]],
    each segment [segid, first, last] + (V2) [origin1, origin2, tombstone pages, tombstones, rows]."""
    v2 = data[4:8] == V2
    i = 8 if v2 else 4
    n_levels, i = varint(data, i)
    n_segments, i = varint(data, i)
    counter, i = varint(data, i)
    levels = []
    for _ in range(n_levels):
        n_merge, i = varint(data, i)
        n_seg, i = varint(data, i)
        segments = []
        for _ in range(n_seg):
            seg = []
            for _ in range(8 if v2 else 3):
                value, i = varint(data, i)
                seg.append(value)
            segments.append(seg)
        levels.append([n_merge, segments])
    if i != len(data) or sum(len(s) for _m, s in levels) != n_segments:
        raise ShardMismatch("a structure record this code does not read (another FTS5 format?)")
    return {"cookie": int.from_bytes(data[:4], "big"), "v2": v2, "counter": counter, "levels": levels}


def encode_structure(s: dict) -> bytes:
    levels = [lvl for lvl in s["levels"]]
    while levels and not levels[-1][1]:  # FTS5 keeps empty levels below used ones only
        levels.pop()
    out = bytearray(s["cookie"].to_bytes(4, "big"))
    if s["v2"]:
        out += V2
    out += put_varint(len(levels)) + put_varint(sum(len(segs) for _m, segs in levels))
    out += put_varint(s["counter"])
    for n_merge, segments in levels:
        out += put_varint(n_merge) + put_varint(len(segments))
        for seg in segments:
            out += b"".join(put_varint(v) for v in seg)
    return bytes(out)


def decode_averages(data: bytes | None, n_columns: int) -> list[int]:
    """[rows, tokens of column 0, ...]: zeros when there is no record yet."""
    values, i = [], 0
    while data and i < len(data):
        value, i = varint(data, i)
        values.append(value)
    return (values + [0] * (n_columns + 1))[:n_columns + 1]


def next_origin(s: dict, docsize_max: int | None) -> int:
    """The origin the next flushed segment gets (FTS5: the highest origin in the structure + 1);
    never below a row's own. 1 in a table without origins (not V2)."""
    if not s["v2"]:
        return 1
    highest = max((seg[4] for _m, segs in s["levels"] for seg in segs), default=0)
    return max(highest, docsize_max or 0) + 1


def page_rowid(rowid: int, old: int, new: int) -> int:
    """A `_data` rowid of segment `old` (a leaf, a doclist-index page, a tombstone page) once the
    segment is `new`."""
    return rowid + ((new - old) << SEGID_SHIFT)


def row_origin(origin: int, shift: int) -> int:
    """A shard row's origin in the merged table: its segments' origins moved by `shift` too."""
    return origin + shift


def add_averages(total: list[int], more: list[int]) -> None:
    """The averages record of two tables' rows: row counts and each column's tokens summed."""
    for i, value in enumerate(more):
        total[i] += value


def merge(conn, table: str, shard_paths: Sequence[str | Path]) -> None:
    """Copy the rows of each shard file's `table` (same CREATE VIRTUAL TABLE, committed, rowids
    disjoint from each other and from the table's) into `table` of `conn`, segments and all.
    Raises ShardMismatch (and changes nothing) when a shard does not fit. Outside a transaction the
    shards are ATTACHed and copied by SQL (~10x faster: 100k rows' _docsize); inside one, where
    SQLite can attach but not detach, their rows go through Python."""
    import apsw

    q, data, docsize = _quote(table), _shadow(table, "data"), _shadow(table, "docsize")
    ddl = _ddl(conn, table)
    attached = [] if conn.in_transaction or len(shard_paths) > MAX_ATTACHED else \
        [f"fts_merge_{i}" for i in range(len(shard_paths))]
    try:
        for alias, path in zip(attached, shard_paths, strict=False):
            conn.execute(f"ATTACH {_literal(str(path))} AS {alias}")
        conn.execute("SAVEPOINT fts_merge")
        try:
            conn.execute(f"INSERT INTO {q}({q}, rank) VALUES('merge', 0)")  # pending rows out, cache dropped
            conn.execute("SAVEPOINT fts_merge_sync")  # a cached averages record is written out here
            conn.execute("RELEASE fts_merge_sync")
            into = decode_structure(_one(conn, f"SELECT block FROM {data} WHERE id = {STRUCTURE_ROWID}"))
            n_columns = len(_columns(conn, table))
            averages = decode_averages(_one(conn, f"SELECT block FROM {data} WHERE id = {AVERAGES_ROWID}"),
                                       n_columns)
            with_origin = into["v2"]  # contentless_delete=1: _docsize has the origin column
            origin = next_origin(into, _one(conn, f"SELECT max(origin) FROM {docsize}") if with_origin else None)
            used = {seg[0] for _m, segs in into["levels"] for seg in segs}
            for i, path in enumerate(shard_paths):
                shard = None if attached else apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
                try:
                    src, schema = (conn, attached[i]) if attached else (shard, "main")
                    if _ddl(src, table, schema) != ddl:
                        raise ShardMismatch(f"{path}: {table} is not defined as in the index")
                    origin = _copy(conn, src, schema, table, into, averages, used, origin, n_columns)
                finally:
                    if shard is not None:
                        shard.close()
            if len(used) > MAX_SEGMENTS:
                raise ShardMismatch(f"{len(used)} segments: FTS5 reads at most {MAX_SEGMENTS}")
            conn.execute(f"REPLACE INTO {data}(id, block) VALUES({STRUCTURE_ROWID}, ?)", (encode_structure(into),))
            conn.execute(f"REPLACE INTO {data}(id, block) VALUES({AVERAGES_ROWID}, ?)",
                         (b"".join(put_varint(v) for v in averages),))
            conn.execute(f"INSERT INTO {q}({q}, rank) VALUES('merge', 0)")  # the cache read again from here
        except BaseException:
            conn.execute("ROLLBACK TO fts_merge")
            conn.execute("RELEASE fts_merge")
            raise
        conn.execute("RELEASE fts_merge")
    finally:
        for alias in attached:
            if conn.execute("SELECT 1 FROM pragma_database_list WHERE name = ?", (alias,)).fetchone():
                conn.execute(f"DETACH {alias}")


def _copy(conn, src, schema: str, table: str, into: dict, averages: list[int], used: set[int], origin: int,
          n_columns: int) -> int:
    """One shard's segments, pages, _idx and _docsize rows into `conn`, read from `schema` of `src`
    (`conn` itself when attached); its structure and averages into `into` and `averages`. The
    origin the next shard starts at."""
    import apsw

    data, idx, docsize = (_shadow(table, s) for s in ("data", "idx", "docsize"))
    theirs_data, theirs_idx, theirs_docsize = (f"{schema}.{t}" for t in (data, idx, docsize))
    theirs = decode_structure(_one(src, f"SELECT block FROM {theirs_data} WHERE id = {STRUCTURE_ROWID}"))
    if theirs["v2"] != into["v2"]:
        raise ShardMismatch(f"{table}: a shard's structure is not the index's version")
    shift = origin - 1  # their origin 1 becomes ours `origin`
    renumber: dict[int, int] = {}
    free = 1
    for _m, segs in theirs["levels"]:
        for seg in segs:
            while free in used:
                free += 1
            renumber[seg[0]] = free
            used.add(free)

    def copy(target: str, columns: tuple[str, ...], select: str, args: tuple) -> None:
        insert = f"INSERT INTO main.{target}({', '.join(columns)})"
        if src is conn:  # attached: SQL copies the rows
            conn.execute(f"{insert} {select}", args)
        else:
            conn.executemany(f"{insert} VALUES({', '.join('?' * len(columns))})", src.execute(select, args))

    for old, new in renumber.items():
        delta = page_rowid(0, old, new)
        for lo in (old, old + TOMBSTONE_SEGIDS):
            copy(data, ("id", "block"), f"SELECT id + {delta}, block FROM {theirs_data} "
                 "WHERE id >= ? AND id < ?", (lo << SEGID_SHIFT, (lo + 1) << SEGID_SHIFT))
        copy(idx, ("segid", "term", "pgno"), f"SELECT {new}, term, pgno FROM {theirs_idx} "
             "WHERE segid = ?", (old,))
    try:
        if into["v2"]:
            copy(docsize, ("id", "sz", "origin"),
                 f"SELECT id, sz, origin + {row_origin(0, shift)} FROM {theirs_docsize}", ())
        else:
            copy(docsize, ("id", "sz"), f"SELECT id, sz FROM {theirs_docsize}", ())
    except apsw.ConstraintError as exc:  # a rowid the table has already
        raise ShardMismatch(f"{table}: a shard's rowids are not disjoint from the index's ({exc})") from None
    add_averages(averages, decode_averages(
        _one(src, f"SELECT block FROM {theirs_data} WHERE id = {AVERAGES_ROWID}"), n_columns))
    into["counter"] += theirs["counter"]
    before = [n_merge for n_merge, _segs in into["levels"]]
    for n_level, (n_merge, segs) in enumerate(theirs["levels"]):
        moved = [[renumber[seg[0]], *seg[1:]] for seg in segs]
        if into["v2"]:
            for seg in moved:
                seg[3] += shift
                seg[4] += shift
        ours_below = n_level > 0 and theirs["levels"][n_level - 1][0] > 0
        _place(into, before, n_level, n_merge, ours_below, moved, table)
    return next_origin(theirs, _one(src, f"SELECT max(origin) FROM {theirs_docsize}") if into["v2"] else None) + shift


def _place(into: dict, before: list[int], n_level: int, n_merge: int, ours_below: bool, moved: list,
           table: str) -> None:
    """A shard's segments of one level into the same level of `into` (`before`: each level's nMerge
    before this shard). An ongoing merge's inputs are its level's oldest segments and its output the
    newest segment of the level below it: a shard's stay so, and so do the ones there already. Two
    ongoing merges on one level cannot be."""
    levels = into["levels"]
    while len(levels) <= n_level:
        levels.append([0, []])
    segs = levels[n_level][1]
    if n_merge:
        if n_level < len(before) and before[n_level]:
            raise ShardMismatch(f"{table}: two ongoing merges on level {n_level}: run 'merge' in a shard")
        segs[:0] = moved[:n_merge]
        moved = moved[n_merge:]
        levels[n_level][0] = n_merge
    theirs_below = 0 < n_level <= len(before) and before[n_level - 1] > 0
    if theirs_below and not ours_below and segs:  # the newest one here is that merge's output
        segs[-1:-1] = moved
    else:
        segs.extend(moved)


def _one(conn, sql: str):
    row = conn.execute(sql).fetchone()
    return row[0] if row else None


def _shadow(table: str, name: str) -> str:
    return _quote(f"{table}_{name}")


def _ddl(conn, table: str, schema: str = "main") -> str:
    """The table's CREATE VIRTUAL TABLE, blanks folded: a shard's must be the index's."""
    sql = _one(conn, f"SELECT sql FROM {schema}.sqlite_master WHERE type = 'table' AND name = {_literal(table)}")
    if sql is None:
        raise ShardMismatch(f"no table {table}")
    return " ".join(sql.split())


def _columns(conn, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA main.table_info({_quote(table)})")]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
