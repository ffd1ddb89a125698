"""Honest failure: the index heals only real damage (a corrupt file, not a database, a row that
will not decode); a bug raised inside a read propagates at once and rebuilds nothing. A bug is an
internal error (exit 70), said the same way by every door (errors.internal_error_message)."""

from __future__ import annotations

import apsw
import pytest

from kyb_cli import api
from kyb_cli.core.canon.headfile import git_dir
from kyb_cli.core.index import fresh as fresh_mod
from kyb_cli.core.index.schema import index_path
from tests.support.index_helpers import T0, put, query


class Bug(Exception):
    pass


def _indexed(store_path):
    put(store_path, "panda", "Panda facts", "the panda eats bamboo", T0)
    assert query(store_path, "bamboo")["count"] == 1
    return index_path(git_dir(store_path))


def test_a_bug_inside_a_read_propagates_and_does_not_rebuild_the_index(store_path, monkeypatch):
    db = _indexed(store_path)
    inode = db.stat().st_ino
    rebuilds = []
    real = fresh_mod.fresh
    monkeypatch.setattr(fresh_mod, "fresh", lambda *a, **kw: rebuilds.append(kw.get("force_rebuild")) or real(*a, **kw))

    def buggy(_f):
        raise Bug("a key error in our own code")

    with pytest.raises(Bug):
        fresh_mod.with_index(store_path, buggy)
    assert rebuilds == [None] and db.exists() and db.stat().st_ino == inode


@pytest.mark.parametrize("error", [ValueError("bad value"), KeyError("k"), apsw.SQLError("no such column: x")])
def test_ordinary_exceptions_are_not_damage(store_path, error):
    db = _indexed(store_path)
    inode = db.stat().st_ino

    def buggy(_f):
        raise error

    with pytest.raises(type(error)):
        fresh_mod.with_index(store_path, buggy)
    assert db.stat().st_ino == inode


def test_a_row_that_will_not_decode_still_heals(store_path):
    db = _indexed(store_path)
    conn = apsw.Connection(str(db))
    conn.execute("UPDATE versions SET doc = x'ff00ff'")
    conn.close()
    hits = query(store_path, "bamboo")["hits"]
    assert [h["key"] for h in hits] == ["panda"] and hits[0]["body"] == "the panda eats bamboo"


def test_a_corrupt_file_met_mid_read_still_heals(store_path):
    db = _indexed(store_path)
    calls = []

    def read(f):
        calls.append(1)
        if len(calls) == 1:
            raise apsw.CorruptError("database disk image is malformed")
        return f.conn.execute("SELECT count(*) FROM versions").fetchone()[0]

    assert fresh_mod.with_index(store_path, read) >= 1 and len(calls) == 2 and db.exists()


def test_internal_error_message_names_the_type_and_asks_for_a_report():
    assert api.EXIT_INTERNAL == 70
    assert api.internal_error_message(KeyError("x")) == "internal error: KeyError: 'x' (a bug: please report it)"
    assert api.internal_error_message(RuntimeError()) == "internal error: RuntimeError (a bug: please report it)"
