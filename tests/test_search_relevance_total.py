"""relevance.term_weights takes N (all indexed versions) as the newest version id: the build numbers
versions 1, 2, 3... and deletes none. Checked over writes, rewrites, retractions and a merge."""

from __future__ import annotations

import math

import pygit2

from kyb_cli.core.index.fresh import with_index
from kyb_cli.core.search import bm25, relevance
from tests.support.index_helpers import T0, put, query, remove


def _ids(f):
    count, newest = f.conn.execute("SELECT count(*), coalesce(max(id), 0) FROM versions").fetchone()
    return count, newest


def test_the_newest_version_id_is_the_count_of_versions(store_path):
    assert with_index(store_path, _ids) == (0, 0)
    for i in range(6):
        put(store_path, f"k{i}", f"note {i}", f"body {i} replica", when=T0 + i)
    query(store_path, "replica")
    put(store_path, "k1", "note 1", "rewritten replica", when=T0 + 50)
    remove(store_path, "k2", when=T0 + 60)
    put(store_path, "k2", "note 2 again", "back", when=T0 + 70)
    repo = pygit2.Repository(str(store_path))
    side = repo.head.peel(pygit2.Commit)
    put(store_path, "k4", "note 4", "main side", when=T0 + 80)
    main = repo.head.peel(pygit2.Commit)
    repo.head.set_target(side.id)
    put(store_path, "k5", "note 5", "other side", when=T0 + 81)
    other = repo.head.peel(pygit2.Commit)
    index = repo.merge_commits(main, other)
    tree = index.write_tree(repo)
    sig = pygit2.Signature("t", "t@example.org", T0 + 90, 0)
    repo.create_commit("HEAD", sig, sig, "merge", tree, [other.id, main.id])
    query(store_path, "replica")
    count, newest = with_index(store_path, _ids)
    assert count == newest >= 10

    relevance._DF[0] = (None, {})  # nothing kept from another test's index
    got, df = with_index(store_path, lambda f: (relevance.term_weights(f.conn, ['"replica"']),
                                                relevance._df(f.conn, '"replica"', bm25.tokenizer(f.conn))))
    assert df >= 3 and got == [math.log((count + 1) / (df + 0.5))]
