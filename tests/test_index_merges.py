"""Merges (from `kyb sync` or a plain `git pull`) write no new text: a version keeps the commit that wrote it."""

from __future__ import annotations

import pygit2

from kyb_cli.core.records.model import Record
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.index import reads
from tests.support.index_helpers import T0, put, query, set_file
from kyb_cli.core.records.keys import path_of_key


def _both_sides_edit_then_merge_takes_side(store_path):
    repo = pygit2.Repository(str(store_path))
    base = put(store_path, "k", "K", "zero base", T0)
    main_tip = put(store_path, "k", "K", "main wrote this", T0 + 10)
    base_commit = repo[pygit2.Oid(hex=base)]
    blob = repo.create_blob(Record(key="k", title="K", body="side wrote this").to_markdown().encode())
    sig = pygit2.Signature("s", "s@example.org", T0 + 5, 0)
    side = repo.create_commit(None, sig, sig, "side edit\n",
                              set_file(repo, base_commit.tree, path_of_key("k"), blob), [base_commit.id])
    main_commit = repo[pygit2.Oid(hex=main_tip)]
    merged = set_file(repo, main_commit.tree, path_of_key("k"), blob)
    msig = pygit2.Signature("m", "m@example.org", T0 + 20, 0)
    merge = repo.create_commit("HEAD", msig, msig, "merge\n", merged, [main_commit.id, side])
    return str(side), str(merge)


def test_merge_taken_version_keeps_the_sha_of_the_commit_that_wrote_it(store_path):
    side, merge = _both_sides_edit_then_merge_takes_side(store_path)
    hit = query(store_path, "side")["hits"][0]
    assert hit["body"] == "side wrote this" and hit["is_head"]
    assert hit["sha"] == side != merge
    assert reads.read(store_path, "k").sha == hit["sha"]  # query and get agree on the version id


def test_merge_does_not_duplicate_versions_in_history(store_path):
    _both_sides_edit_then_merge_takes_side(store_path)
    bodies = [h["body"] for h in query(store_path, "", mode="history", limit=100)["hits"]]
    assert sorted(bodies) == ["main wrote this", "side wrote this", "zero base"]


def test_as_of_after_a_merge_answers_with_the_merged_version(store_path):
    side, _merge = _both_sides_edit_then_merge_takes_side(store_path)
    hits = query(store_path, "", mode="as_of", as_of=T0 + 30)["hits"]
    assert [(h["body"], h["sha"]) for h in hits] == [("side wrote this", side)]
