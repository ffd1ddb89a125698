"""The index database: one SQLite file per store, inside `.git/kyb/`, rebuilt from Git at will.

Tables
- `meta`      schema version, the commit the index reflects (`head`), and `history`: `complete`, or
              `pending` while only HEAD's snapshot is in (see snapshot.py; the filler builds the rest).
- `commits`   every indexed commit in revision order (`seq`: parents before children).
- `versions`  one row per content version of a key (a distinct text the key had), with its commit;
              `id` is the integer a vector table joins on, and grows in revision order.
              In a snapshot `sha`/`committed_at` are NULL: the commit that wrote it is not known yet.
- `events`    per key, in revision order: `content` (a version became the key's text) or `deleted`
              (retracted knowledge / archived incident or task; `version_id` is the final text).
- `keys`      the state at `head`: last event, last version, state active|archived|retracted.
- `fts`       FTS5 over versions (contentless; rowid = versions.id), columns weighted for BM25.
- `unreadable` versions that break the write rules (records/keys.py `load`): kept so history and
              `get` can say so, excluded from every query slice, never in `fts` or `vtext`.
- `fts_now`   the same over each key's current version only (live or archived, never retracted):
              the "what is true now" question, the hot path, ranks 10k rows instead of every version
              (BM25 statistics of the current store, which is the corpus that question asks about).
- `vtext`     per version and passage (`part`, 0 = the first), the hash of the exact text the
              embedding model is handed for it (recipe: a long body is several passages);
              passages with the same text share one vector; a version scores by its two best passages.
- `vectors`   float32 vectors by (text hash, model+recipe fingerprint): a cache refilled from the
              user-wide embedding cache; only rows of the current fingerprint are ever read.
The schema version carries the recipe version, so a new recipe rebuilds the index (new text hashes).
"""

from __future__ import annotations

import os

from kyb_cli.core.embed.recipe import RECIPE_VERSION
from kyb_cli.core.known import made_path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`

SCHEMA_VERSION = f"10.r{RECIPE_VERSION}"  # 8: docs carry review_by and [verified] (issue 15); 9: `unreadable`, first-parent events
# 10: a typed field of the wrong type makes a version unreadable (issue 37 item 6): indexes built before rebuild
FTS_COLUMNS = ("title", "tags", "keytext", "fields", "body")
# BM25 weights in FTS_COLUMNS order: title above tags, key and kind fields, above body.
FTS_WEIGHTS = (3.0, 1.5, 1.5, 1.5, 1.0)
FTS_WEIGHTS_SQL = ", ".join(str(w) for w in FTS_WEIGHTS)  # bm25(table, FTS_WEIGHTS_SQL)
# Our choice (see docs/guide/search.md, "Tokenizer choice"): unicode61 splits identifiers into words,
# folds case and Latin diacritics; porter stems English; Russian gets query-side stem prefixes.
TOKENIZER = "porter unicode61 remove_diacritics 2"

DDL = f"""
CREATE TABLE meta(k TEXT PRIMARY KEY, v TEXT);
CREATE TABLE commits(seq INTEGER PRIMARY KEY, sha TEXT NOT NULL UNIQUE, committed_at INTEGER NOT NULL);
CREATE TABLE versions(
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    sha TEXT,                       -- NULL in a snapshot: not known before the history is in
    committed_at INTEGER,
    blob TEXT NOT NULL,
    title TEXT NOT NULL,
    tags_lc TEXT NOT NULL,          -- JSON list, lowercased
    service_lc TEXT NOT NULL,
    status TEXT NOT NULL,
    priority TEXT NOT NULL,
    assignee TEXT NOT NULL,
    parent_task TEXT NOT NULL,
    doc TEXT NOT NULL               -- Record.to_json() as JSON
);
CREATE INDEX versions_key ON versions(key, id);
CREATE INDEX versions_time ON versions(committed_at);
CREATE INDEX versions_title ON versions(lower(title));  -- a write's "same title" hint (kinds/wording.similar)
CREATE TABLE events(
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    committed_at INTEGER NOT NULL,
    action TEXT NOT NULL,           -- content | deleted
    version_id INTEGER NOT NULL,
    blob TEXT                       -- NULL for deleted
);
CREATE INDEX events_time ON events(committed_at, key, id);
CREATE INDEX events_key ON events(key, id);
CREATE TABLE keys(
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,            -- active | archived | retracted
    version_id INTEGER NOT NULL,
    event_id INTEGER NOT NULL,
    blob TEXT,                      -- blob at head, NULL when not in the tree
    ended_sha TEXT,
    ended_at INTEGER
) WITHOUT ROWID;
CREATE TABLE unreadable(version_id INTEGER PRIMARY KEY, reason TEXT NOT NULL);
CREATE TABLE vtext(version_id INTEGER NOT NULL, part INTEGER NOT NULL, text_sha TEXT NOT NULL,
    PRIMARY KEY (version_id, part)) WITHOUT ROWID;
CREATE INDEX vtext_sha ON vtext(text_sha);
CREATE TABLE vectors(
    text_sha TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    vec BLOB NOT NULL,              -- little-endian float32, L2-normalised
    PRIMARY KEY (text_sha, fingerprint)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE fts USING fts5({", ".join(FTS_COLUMNS)}, content='', tokenize='{TOKENIZER}');
CREATE VIRTUAL TABLE fts_now USING fts5({", ".join(FTS_COLUMNS)}, content='', contentless_delete=1,
                                        tokenize='{TOKENIZER}');
"""


MMAP_BYTES = 1 << 30  # at most this much of the index file is mapped (address space, not memory)


class Damaged(Exception):
    """A row of the index that will not decode: real damage, which `fresh.with_index` heals by a
    rebuild (never a KybError: the user's store is fine, only its cache is not)."""


def decode(raw):
    """A JSON column of an index row (a version's doc, a tag list); Damaged when it will not decode."""
    import json

    try:
        return json.loads(raw)
    except (ValueError, TypeError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise Damaged(f"an index row does not decode: {exc}") from exc


def index_dir(git_dir: Path) -> Path:
    """`index_dir_str` as a Path."""
    return made_path(index_dir_str(git_dir))


def index_dir_str(git_dir: Path | str) -> str:
    """Where the index, its lock and its temp files live: `.git/kyb`, or — when the store cannot be
    written there (a read-only `.git/kyb`, a store on a read-only mount) — a directory of the user's
    own cache named after the store, so reads still answer (the index is only a cache of the canon;
    `fresh` checks it against HEAD on every read wherever it lives)."""
    kyb = os.path.join(git_dir, "kyb")  # strings: every answer asks, the Paths are made once (known.made_path)
    if os.access(kyb if os.path.isdir(kyb) else git_dir, os.W_OK | os.X_OK):
        return kyb  # a string: the query path never imports pathlib (issue 38)
    return str(_elsewhere(made_path(os.fspath(git_dir))))


def _elsewhere(git_dir: Path) -> Path:
    import hashlib

    from kyb_cli.core.config.dirs import cache_dir
    from kyb_cli.core.errors import StoreError

    name = hashlib.sha256(os.fsencode(os.path.realpath(git_dir))).hexdigest()[:24]
    where = cache_dir() / "read-only-stores" / name
    try:
        where.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not os.access(where, os.W_OK | os.X_OK) or where.is_symlink():
            raise PermissionError(13, "not writable", str(where))
    except OSError as exc:
        raise StoreError(
            f"{git_dir / 'kyb'} is read-only and the index cannot be kept in {where} either "
            f"({exc.strerror or exc}): make one of them writable (or set XDG_CACHE_HOME to a writable "
            "directory) and run the command again", path=str(git_dir.parent)) from None
    return where


def index_path(git_dir: Path) -> Path:
    return made_path(index_path_str(git_dir))


def index_path_str(git_dir: Path | str) -> str:
    return os.path.join(index_dir_str(git_dir), "index.sqlite")


def connect(path: Path, *, create: bool = False):
    """An apsw connection with the pragmas every reader and writer uses."""
    import apsw

    flags = apsw.SQLITE_OPEN_READWRITE | (apsw.SQLITE_OPEN_CREATE if create else 0)
    conn = apsw.Connection(str(path), flags=flags)
    conn.set_busy_timeout(15000)
    # Reads through a memory map: the vector side reads every passage's 1.5 kB vector, and copying
    # each through the page cache cost 3x the query (bench/bench_hybrid.py --keys 2000: nearest()
    # 55 -> 17 ms). SQLite maps for reads only; writes still go through its journal.
    conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
    return conn


def history_complete(meta: dict) -> bool:
    """Whether the index holds the whole history (its `meta.history`), or HEAD's snapshot whose
    history the filler is still building (index/staged.py)."""
    return meta.get("history", "complete") == "complete"


def read_meta(conn) -> dict[str, str]:
    return {k: v for k, v in conn.execute("SELECT k, v FROM meta")}


# Indexes no build statement reads: a build from nothing makes them once its rows are in (`create_later`),
# one sort each instead of a B-tree insert per row into pages that no longer fit the page cache at 100k keys.
LATER = ("versions_time", "versions_title", "events_time", "events_key", "vtext_sha")


def _later(line: str) -> bool:
    return line.startswith("CREATE INDEX ") and line.split()[2] in LATER


def create(conn, *, later: bool = False) -> None:
    """The tables; `later`: without the LATER indexes, which `create_later` adds (the same statements)."""
    conn.execute("PRAGMA journal_mode=DELETE")
    with conn:
        conn.execute("\n".join(line for line in DDL.splitlines() if not (later and _later(line))))
        conn.execute("INSERT INTO meta(k, v) VALUES('schema', ?)", (SCHEMA_VERSION,))
        conn.execute("INSERT INTO meta(k, v) VALUES('history', 'complete')")


def pool_terms(conn, table: str, nbytes: int) -> None:
    """FTS5 `hashsize`: `table`'s terms pooled in memory up to `nbytes` before a segment is written
    (a connection's own setting: every bulk writer of a full-text table sets it, build.bulk's size)."""
    conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('hashsize', {int(nbytes)})")


def create_later(conn) -> None:
    """The indexes `create(later=True)` left out."""
    for line in DDL.splitlines():
        if _later(line):
            conn.execute(line)


def open_valid(path: Path):
    """(conn, meta) of a usable index, or None when missing, corrupt or of another schema."""
    import apsw

    if not os.path.exists(path):  # a str or a Path (issue 38: a query builds no Path)
        return None
    try:
        conn = connect(path)
        meta = read_meta(conn)
        if meta.get("schema") != SCHEMA_VERSION:
            conn.close()
            return None
        return conn, meta
    except apsw.BusyError:
        raise
    except apsw.Error:
        return None
