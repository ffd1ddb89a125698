"""An index problem is rebuilt, never fatal: damage met in the middle of a read rebuilds and retries."""

from __future__ import annotations

import apsw

from kyb_cli.core.canon.headfile import git_dir
from kyb_cli.core.index.schema import index_path
from tests.support.index_helpers import T0, put, query


def test_damaged_rows_met_mid_read_are_rebuilt_not_fatal(store_path):
    put(store_path, "panda", "Panda facts", "the panda eats bamboo", T0)
    assert query(store_path, "bamboo")["count"] == 1
    conn = apsw.Connection(str(index_path(git_dir(store_path))))
    conn.execute("UPDATE versions SET doc = x'ff00ff'")  # rows that no longer decode
    conn.close()
    hits = query(store_path, "bamboo")["hits"]
    assert [h["key"] for h in hits] == ["panda"] and hits[0]["body"] == "the panda eats bamboo"
