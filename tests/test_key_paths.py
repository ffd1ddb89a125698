"""key_of_path answers without building a key's two paths (issue 39: a snapshot asks it for every
live key); these say it still names exactly the paths paths_of_key gives: the kind's directory,
then the key's bucket or no bucket (the old flat shape)."""

from __future__ import annotations

import pytest

from kyb_cli.core.records.keys import _candidate_key, bucket, is_valid_key, key_of_path, path_problem, paths_of_key

KEYS = ["a", "k-1", "inc-1", "task-x", "inc-", "Bad", "-x", "x-", "a" * 100, "a" * 101, "x.md", ""]
DIRS = ["knowledge", "incidents", "tasks", "other", ""]


def _paths():
    for d in DIRS:
        for key in KEYS:
            b = bucket(key)
            yield from (f"{d}/{key}.md", f"{d}/{b}/{key}.md", f"{d}/zz/{key}.md", f"{d}/{b}/y/{key}.md",
                        f"{d}/{key}", f"{d}/{b}/{key}.txt", f"{d}/{b}/.md", f"{d}/{b}/{key}.md/")


@pytest.mark.parametrize("path", sorted(set(_paths())))
def test_a_path_is_a_key_exactly_when_it_is_one_of_the_keys_paths(path):
    name = path.rsplit("/", 1)[-1]
    key = name[:-3] if name.endswith(".md") else None
    expected = key if key and is_valid_key(key) and path in paths_of_key(key) else None
    assert key_of_path(path) == expected


def test_each_kind_reads_both_shapes():
    for key, d in (("k-1", "knowledge"), ("inc-7", "incidents"), ("task-2", "tasks")):
        assert key_of_path(f"{d}/{bucket(key)}/{key}.md") == key == key_of_path(f"{d}/{key}.md")
        assert key_of_path(f"knowledge/{bucket(key)}/{key}.md" if d != "knowledge" else f"tasks/{key}.md") is None


@pytest.mark.parametrize("path", sorted(set(_paths())))
def test_path_problem_names_a_wrong_place_exactly_when_the_path_is_not_the_keys(path):
    key = _candidate_key(path) or path
    if not is_valid_key(key):
        assert "is not a valid key" in path_problem(path)
    elif path in paths_of_key(key):
        assert path_problem(path) is None
    else:
        assert path_problem(path) == f"the key '{key}' belongs at {paths_of_key(key)[0]}, not {path}"
