"""Task dependencies: `--blocked-by`, cycles refused like parent cycles, `kyb tasks --ready`, `blocks`."""

from __future__ import annotations


def task(kyb, key, *extra):
    res = kyb("task", "--key", key, "--title", key.replace("-", " "), "--body", "", *extra)
    assert res.code == 0, res.stderr
    return res.json


def ready(kyb):
    res = kyb("tasks", "--ready")
    assert res.code == 0, res.stderr
    return [row["key"] for row in res.json["tasks"]]


def test_ready_follows_a_chain_of_blockers(kyb):
    task(kyb, "task-a")
    task(kyb, "task-b", "--blocked-by", "task-a")
    task(kyb, "task-c", "--blocked-by", "task-b")
    assert ready(kyb) == ["task-a"]
    assert kyb("done", "task-a", "--resolution", "did a").code == 0
    assert ready(kyb) == ["task-b"]
    assert kyb("done", "task-b", "--resolution", "did b").code == 0
    assert ready(kyb) == ["task-c"]


def test_ready_waits_for_every_blocker_of_a_diamond(kyb):
    task(kyb, "task-top")
    task(kyb, "task-left", "--blocked-by", "task-top")
    task(kyb, "task-right", "--blocked-by", "task-top")
    task(kyb, "task-bottom", "--blocked-by", "task-left,task-right")
    assert ready(kyb) == ["task-top"]
    kyb("done", "task-top", "--resolution", "ok")
    assert sorted(ready(kyb)) == ["task-left", "task-right"]
    kyb("done", "task-left", "--resolution", "ok")
    assert "task-bottom" not in ready(kyb)
    kyb("task-status", "task-right", "--status", "in_progress")
    assert "task-bottom" not in ready(kyb)  # in progress still blocks
    kyb("done", "task-right", "--status", "dropped", "--resolution", "not needed after all")
    assert ready(kyb) == ["task-bottom"]


def test_ready_is_sorted_by_priority_then_due_date(kyb):
    task(kyb, "task-low", "--priority", "low")
    task(kyb, "task-crit-late", "--priority", "critical", "--due", "2030-06-01")
    task(kyb, "task-crit-soon", "--priority", "critical", "--due", "2030-01-01")
    task(kyb, "task-unranked")
    task(kyb, "task-busy", "--status", "in_progress")  # not open: not "ready to start"
    assert ready(kyb) == ["task-crit-soon", "task-crit-late", "task-low", "task-unranked"]


def test_a_blocker_cycle_is_refused_and_nothing_is_written(kyb, store_path):
    task(kyb, "task-a")
    task(kyb, "task-b", "--blocked-by", "task-a")
    task(kyb, "task-c", "--blocked-by", "task-b")
    before = kyb("log", "--limit", "1").json["log"][0]["sha"]
    res = kyb("task", "--key", "task-a", "--title", "a", "--body", "", "--blocked-by", "task-c")
    assert res.code == 3 and res.stdout == ""
    assert "cycle" in res.stderr and "task-a -> task-c -> task-b -> task-a" in res.stderr
    assert kyb("log", "--limit", "1").json["log"][0]["sha"] == before
    res = kyb("task", "--key", "task-d", "--title", "d", "--body", "", "--blocked-by", "task-d")
    assert res.code == 3 and "itself" in res.stderr


def test_blocked_by_is_kept_when_omitted_and_cleared_when_empty(kyb):
    task(kyb, "task-a")
    task(kyb, "task-b", "--blocked-by", "task-a")
    task(kyb, "task-b")  # a rewrite without --blocked-by keeps it
    assert kyb("get", "task-b").json["blocked_by"] == ["task-a"]
    task(kyb, "task-b", "--blocked-by", "")
    assert kyb("get", "task-b").json["blocked_by"] == []


def test_get_of_a_task_shows_what_it_blocks(kyb):
    task(kyb, "task-a")
    task(kyb, "task-b", "--blocked-by", "task-a")
    task(kyb, "task-c", "--blocked-by", "task-a")
    assert kyb("get", "task-a").json["blocks"] == ["task-b", "task-c"]
    assert kyb("get", "task-b").json["blocks"] == []


def test_an_unknown_blocker_is_refused_as_not_found_nothing_written(kyb):
    res = kyb("task", "--key", "task-b", "--title", "b", "--body", "", "--blocked-by", "task-nowhere")
    assert (res.code, res.stdout) == (1, "") and "task-nowhere" in res.stderr
    assert ready(kyb) == []


def test_blocked_by_is_a_task_only_field_of_task_keys(kyb):
    res = kyb("task", "--key", "task-b", "--title", "b", "--body", "", "--blocked-by", "alpha")
    assert res.code == 3 and "task-" in res.stderr and res.stdout == ""


def test_ready_does_not_combine_with_status(kyb):
    res = kyb("tasks", "--ready", "--status", "open")
    assert res.code == 2 and res.stdout == ""
