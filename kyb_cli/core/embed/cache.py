"""The on-disk embedding cache shared by every store of the user (`<cache dir>/embeddings.sqlite3`).

Key = (fingerprint of model files + recipe, sha256 of the exact model input). A version's text never
changes, so an entry never goes stale; a new model or recipe has a new fingerprint and simply misses.
Vectors are little-endian float32 blobs. WAL mode and a busy timeout make concurrent processes safe
(readers never block; writers take turns). apsw only: no numpy needed to read or write.
"""

from __future__ import annotations

from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors(
    fingerprint TEXT NOT NULL, text_sha TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY (fingerprint, text_sha)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS file_digests(
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, inode INTEGER, sha256 TEXT);
CREATE TABLE IF NOT EXISTS model_loads(key TEXT PRIMARY KEY, result TEXT NOT NULL);
"""


def default_cache_path() -> Path:
    from kyb_cli.core.config.dirs import cache_dir

    return cache_dir() / "embeddings.sqlite3"


class VectorCache:
    """Get and put vectors by (fingerprint, text hash); also memoises model-file digests."""

    def __init__(self, path: Path | None = None) -> None:
        import apsw

        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        import _thread

        self.db = apsw.Connection(str(self.path))
        self.db.setbusytimeout(10_000)
        # One connection per process, and a door answers from several threads: apsw refuses a
        # connection busy in another thread (ThreadingViolationError), so each use takes turns.
        self.lock = _thread.allocate_lock()
        self._setup()

    def _setup(self) -> None:
        """WAL once (it persists in the file) and the schema. Switching the journal mode while another
        process opens the same new file can answer "database is locked" without waiting for the busy
        handler (SQLite does not wait there), so that step is retried for a few seconds."""
        import time

        import apsw

        deadline = time.monotonic() + 10.0
        while True:
            try:
                mode = self.db.execute("PRAGMA journal_mode").fetchone()[0]
                if str(mode).lower() != "wal":
                    self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
                self.db.execute(SCHEMA)
                return
            except apsw.BusyError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def get_many(self, fingerprint: str, hashes: list[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        with self.lock:
            self._get_into(out, fingerprint, hashes)
        return out

    def _get_into(self, out: dict[str, bytes], fingerprint: str, hashes: list[str]) -> None:
        for start in range(0, len(hashes), 500):
            part = hashes[start:start + 500]
            marks = ",".join("?" * len(part))
            for text_sha, vec in self.db.execute(
                f"SELECT text_sha, vec FROM vectors WHERE fingerprint=? AND text_sha IN ({marks})",
                (fingerprint, *part),
            ):
                out[text_sha] = bytes(vec)

    def get_each(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], bytes]:
        """{(fingerprint, text hash): vector} of those `pairs` cached, in one statement (a door's
        question under both models: one look-up, not one a model)."""
        out: dict[tuple[str, str], bytes] = {}
        if not pairs:
            return out
        marks = ",".join("(?,?)" for _ in pairs)
        with self.lock:
            for fp, text_sha, vec in self.db.execute(
                f"SELECT fingerprint, text_sha, vec FROM vectors WHERE (fingerprint, text_sha) IN (VALUES {marks})",
                    [x for pair in pairs for x in pair]):
                out[(fp, text_sha)] = bytes(vec)
        return out

    def get(self, fingerprint: str, text_sha: str) -> bytes | None:
        return self.get_many(fingerprint, [text_sha]).get(text_sha)

    def put_many(self, fingerprint: str, vectors: dict[str, bytes]) -> None:
        if not vectors:
            return
        with self.lock, self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO vectors(fingerprint, text_sha, dim, vec) VALUES (?,?,?,?)",
                [(fingerprint, h, len(v) // 4, v) for h, v in vectors.items()],
            )

    def put_each(self, rows: list[tuple[str, str, bytes]]) -> None:
        """(fingerprint, text hash, vector) rows of several models, in one transaction."""
        with self.lock, self.db:
            self.db.executemany(
                "INSERT OR REPLACE INTO vectors(fingerprint, text_sha, dim, vec) VALUES (?,?,?,?)",
                [(fp, h, len(v) // 4, v) for fp, h, v in rows],
            )

    def fingerprints(self) -> dict[str, int]:
        """Vectors per fingerprint (for `kyb doctor`-style reports of mixed models)."""
        with self.lock:
            return dict(self.db.execute("SELECT fingerprint, count(*) FROM vectors GROUP BY fingerprint"))

    def known_digest(self, path: str, size: int, mtime_ns: int, inode: int) -> str | None:
        with self.lock:
            row = self.db.execute(
                "SELECT sha256 FROM file_digests WHERE path=? AND size=? AND mtime_ns=? AND inode=?",
                (path, size, mtime_ns, inode),
            ).fetchone()
        return row[0] if row else None

    def remember_digest(self, path: str, size: int, mtime_ns: int, inode: int, sha: str) -> None:
        with self.lock, self.db:
            self.db.execute("INSERT OR REPLACE INTO file_digests VALUES (?,?,?,?,?)",
                            (path, size, mtime_ns, inode, sha))

    def known_load(self, key: str) -> str | None:
        """What `remember_load` kept for `key` (a model's fingerprint and the runtime that loaded it)."""
        with self.lock:
            row = self.db.execute("SELECT result FROM model_loads WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def remember_load(self, key: str, result: str) -> None:
        with self.lock, self.db:
            self.db.execute("INSERT OR REPLACE INTO model_loads VALUES (?,?)", (key, result))

    def close(self) -> None:
        self.db.close()
