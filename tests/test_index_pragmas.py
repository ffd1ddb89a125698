"""A build and a snapshot write with their own pragmas (no journal, no fsync, a 64 MiB page cache):
set one statement each — apsw runs a multi-statement script only up to the first statement that
returns a row (`journal_mode` does), so a script had left every pragma after it unset."""

from __future__ import annotations

from kyb_cli.core.index import build, gitlog, schema, snapshot
from tests.support.index_helpers import T0, put


def _pragmas_at_create(monkeypatch) -> list:
    seen = []
    real = schema.create

    def spy(conn, **kw):
        seen.append([conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("synchronous", "cache_size")])
        return real(conn, **kw)

    monkeypatch.setattr(schema, "create", spy)
    return seen


def test_a_snapshot_and_a_build_write_with_their_pragmas(store_path, tmp_path, monkeypatch):
    put(store_path, "note-a", "alpha", "body", when=T0)
    seen = _pragmas_at_create(monkeypatch)
    snapshot.build(store_path, tmp_path / "snap.sqlite", gitlog.head(store_path))
    build.rebuild(store_path, tmp_path / "full.sqlite", gitlog.head(store_path))
    assert seen == [[0, -65536], [0, -65536]]  # synchronous OFF, 64 MiB
