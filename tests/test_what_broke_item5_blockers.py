"""Issue 37, item 5: an unknown `--blocked-by` task was accepted with nothing on stderr, and the task
counted as ready. A blocker named in a write is a task that exists: otherwise NotFound (exit 1, the
class of every reference to a missing record; HTTP 404; MCP exit 1) naming it, nothing written. One
core rule (core/kinds/tasks.check_blockers_exist), so every door says it."""

from __future__ import annotations

import pytest

from tests.support.three_doors import HOST, head, http, mcp_call


def test_an_unknown_blocked_by_task_is_refused_on_the_cli_nothing_written(cli, store_path):
    before = head(store_path)
    res = cli("task", "--key", "task-b", "--title", "B", "--blocked-by", "task-nowhere", input="")
    assert (res.code, res.stdout) == (1, ""), res.stderr
    assert res.stderr.startswith("kyb: ") and "--blocked-by" in res.stderr and "'task-nowhere'" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert head(store_path) == before
    assert cli("tasks", "--ready").json["tasks"] == []


def test_an_unknown_blocked_by_task_is_refused_over_mcp_and_http(store_path):
    pytest.importorskip("mcp")
    before = head(store_path)
    body = {"key": "task-b", "title": "B", "blocked_by": ["task-nowhere"]}
    is_error, text, code = mcp_call(store_path, "task", body)
    assert is_error and code == 1 and "task-nowhere" in text, text
    with http(store_path) as client:
        got = client.post("/tasks", json=body, headers=HOST)
    assert got.status_code == 404 and got.json()["exit_code"] == 1 and "task-nowhere" in got.text, got.text
    assert head(store_path) == before


def test_a_known_or_archived_blocker_is_taken_and_blocks_until_done(cli):
    assert cli("task", "--key", "task-a", "--title", "A", input="").code == 0
    assert cli("task", "--key", "task-b", "--title", "B", "--blocked-by", "task-a", input="").code == 0
    assert [t["key"] for t in cli("tasks", "--ready").json["tasks"]] == ["task-a"]
    assert cli("done", "task-a", "--resolution", "shipped").code == 0
    assert cli("task", "--key", "task-c", "--title", "C", "--blocked-by", "task-a", input="").code == 0
    assert sorted(t["key"] for t in cli("tasks", "--ready").json["tasks"]) == ["task-b", "task-c"]
