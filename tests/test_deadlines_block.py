"""Deadlines (rules of the deadlines section): selection and order of the block, stderr output, switches, the CI gate."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date

import pytest

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.kinds.deadlines import DEFAULT_REMIND_DAYS, block, deadlines
from kyb_cli.core.records.model import Record
from kyb_cli.core.kinds.tasks import close_task, write_task

ATT = Attribution("tester", "s1", "ws", "test")
TODAY = date(2026, 12, 10)


def t(key, due="", **kw):
    kw.setdefault("status", "open")
    return Record(key=key, title=key, due=due, **kw)


def keys(items):
    return [i["key"] for i in items]


def test_overdue_first_hard_first_within_each_group_then_by_date():
    records = [
        t("task-soon-soft", "2026-12-11"),
        t("task-soon-hard", "2026-12-12", hard=True),
        t("task-late-soft", "2026-12-01"),
        t("task-late-hard", "2026-12-09", hard=True),
        t("task-later-soft", "2026-12-05"),
    ]
    assert keys(deadlines(records, TODAY)) == [
        "task-late-hard", "task-late-soft", "task-later-soft", "task-soon-hard", "task-soon-soft"]


def test_default_reminder_window_is_three_days():
    assert DEFAULT_REMIND_DAYS == 3
    records = [t("task-in", "2026-12-13"), t("task-out", "2026-12-14"), t("task-today", "2026-12-10")]
    items = deadlines(records, TODAY)
    assert keys(items) == ["task-today", "task-in"]
    assert items[0]["days_left"] == 0 and not items[0]["overdue"]


def test_remind_days_sets_the_window():
    records = [t("task-wide", "2026-12-24", remind_days=14), t("task-zero", "2026-12-11", remind_days=0)]
    assert keys(deadlines(records, TODAY)) == ["task-wide"]


def test_only_open_tasks_count():
    records = [t("task-open", "2026-12-01"), t("task-blocked", "2026-12-01", status="blocked"),
               t("task-wip", "2026-12-01", status="in_progress"),
               t("task-done", "2026-12-01", status="done", resolution="x"),
               t("task-dropped", "2026-12-01", status="dropped", resolution="x"),
               t("task-nodate")]
    assert sorted(keys(deadlines(records, TODAY))) == ["task-blocked", "task-open", "task-wip"]


def test_provisional_expected_date_counts_and_says_what_it_waits_on():
    item = deadlines([t("task-p", expected="2026-12-11", waits_on="vendor quote")], TODAY)[0]
    assert (item["date"], item["provisional"], item["waits_on"]) == ("2026-12-11", True, "vendor quote")


def test_block_holds_five_and_counts_the_rest():
    records = [t(f"task-{i}", f"2026-12-0{i}") for i in range(1, 9)]
    data = block(records, TODAY)
    assert len(data["tasks"]) == 5 and data["more"] == 3 and data["today"] == "2026-12-10"
    assert keys(data["tasks"]) == [f"task-{i}" for i in range(1, 6)]


# -- the CLI block -----------------------------------------------------------------------------------

@pytest.fixture
def due_store(store, monkeypatch):
    monkeypatch.setenv("KYB_DEADLINES", "on")
    write_task(store, ATT, key="task-cert", title="Renew TLS cert", due="2026-12-15", hard=True)
    write_task(store, ATT, key="task-late", title="Rotate keys", due="2026-12-01")
    write_task(store, ATT, key="task-shipped", title="Old", due="2026-11-01")
    close_task(store, ATT, "task-shipped", resolution="done")
    from kyb_cli.core.kinds.knowledge import add_knowledge

    add_knowledge(store, key="unrelated", title="Unrelated note", body="nothing about dates", tags=[], refs=[],
                  attribution=ATT)
    return store


def _block_line(stderr):
    lines = [line for line in stderr.splitlines() if line.startswith('{"deadlines"')]
    assert len(lines) == 1, stderr
    return json.loads(lines[0])["deadlines"]


@pytest.mark.parametrize("args", [("get", "unrelated"), ("tasks",), ("incidents",)])
def test_block_goes_to_stderr_and_stdout_stays_the_answer(cli, due_store, args):
    res = cli(*args, "--today", "2026-12-13")
    assert res.code == 0
    json.loads(res.stdout)  # stdout is exactly the answer
    data = _block_line(res.stderr)
    assert keys(data["tasks"]) == ["task-late", "task-cert"]  # not limited to what matched; closed never nags
    assert data["more"] == 0 and data["today"] == "2026-12-13"


def test_today_sets_the_readers_calendar(cli, due_store):
    res = cli("tasks", "--today", "2026-11-20")
    assert "deadlines" not in res.stderr  # nothing due yet: no block at all


def test_bad_today_is_a_usage_error(cli, due_store):
    res = cli("tasks", "--today", "tomorrow")
    assert (res.code, res.stdout) == (2, "")


def test_no_deadlines_flag_switches_it_off(cli, due_store):
    res = cli("tasks", "--today", "2026-12-13", "--no-deadlines")
    assert res.code == 0 and "deadlines" not in res.stderr


def test_kyb_deadlines_off_switches_it_off(cli, due_store, monkeypatch):
    monkeypatch.setenv("KYB_DEADLINES", "off")
    res = cli("tasks", "--today", "2026-12-13")
    assert res.code == 0 and "deadlines" not in res.stderr


def test_a_failing_block_never_fails_the_answer(cli, due_store, monkeypatch):
    import kyb_cli.core.kinds.deadlines as core

    def boom(*_a, **_k):
        raise RuntimeError("broken")

    monkeypatch.setattr(core, "block", boom)
    res = cli("tasks", "--today", "2026-12-13")
    assert res.code == 0 and res.json["count"] == 2 and res.stderr == ""


def test_no_block_after_a_failed_command(cli, due_store):
    res = cli("get", "nope", "--today", "2026-12-13")
    assert res.code == 1 and res.stdout == "" and "deadlines" not in res.stderr


def test_block_is_readable_on_a_terminal():
    from kyb_cli.cli.deadlines_block import format_block

    data = block([t("task-late", "2026-12-07", hard=True), t("task-soon", "2026-12-12")], TODAY)
    text = format_block(data, human=True)
    assert "HARD overdue 3d (due 2026-12-07)  task-late" in text
    assert "due in 2d (2026-12-12)  task-soon" in text


def test_print_deadlines_block_needs_only_the_store_and_reads_options_from_meta(due_store, capsys):
    import click

    from kyb_cli.cli.deadlines_block import OFF_META, TODAY_META, print_deadlines_block

    with click.Context(click.Command("query")) as ctx:
        ctx.meta[TODAY_META] = "2026-12-13"
        print_deadlines_block(due_store.path)
        assert keys(_block_line(capsys.readouterr().err)["tasks"]) == ["task-late", "task-cert"]
        ctx.meta[OFF_META] = True
        print_deadlines_block(due_store)
        assert capsys.readouterr().err == ""


def test_block_does_not_import_pygit2(due_store):
    code = (
        "import sys, click\n"
        "from kyb_cli.cli.deadlines_block import print_deadlines_block, TODAY_META\n"
        "with click.Context(click.Command('q')) as ctx:\n"
        "    ctx.meta[TODAY_META] = '2026-12-13'\n"
        f"    print_deadlines_block({str(due_store.path)!r})\n"
        "print('pygit2' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"KYB_DEADLINES": "on", "PATH": ""})
    assert proc.stdout.strip() == "False" and '"task-late"' in proc.stderr


# -- kyb deadlines (the CI gate) ------------------------------------------------------------------------

def test_deadlines_lists_them_all(cli, due_store):
    for i in range(6):
        write_task(due_store, ATT, key=f"task-n{i}", title="n", due="2026-12-02")
    res = cli("deadlines", "--today", "2026-12-13")
    assert res.code == 0 and res.json["count"] == 8 and res.json["deadlines"][0]["key"] == "task-late"


@pytest.mark.parametrize("fail_on,today,code", [
    ("none", "2026-12-20", 0),
    ("overdue", "2026-12-13", 3),
    ("overdue", "2026-11-20", 0),
    ("hard", "2026-12-13", 0),  # overdue, but not a hard deadline
    ("hard", "2026-12-16", 3),
])
def test_deadlines_fail_on_exits_3_with_empty_stdout_when_the_condition_holds(cli, due_store, fail_on, today, code):
    res = cli("deadlines", "--fail-on", fail_on, "--today", today)
    assert res.code == code
    if code:
        assert res.stdout == ""  # a failed gate is a failure: stdout empty, the list on stderr
        listing = json.loads(res.stderr.splitlines()[0])
        assert listing["count"] >= 1 and listing["deadlines"]
        assert f"(--fail-on {fail_on})" in res.stderr
    else:
        json.loads(res.stdout)


def test_deadlines_gate_runs_as_a_process(kyb, store_path):
    write_task_store = __import__("kyb_cli.core.canon.repo", fromlist=["Store"]).Store(store_path)
    write_task(write_task_store, ATT, key="task-x", title="x", due="2026-01-01", hard=True)
    res = kyb("deadlines", "--fail-on", "hard", "--today", "2026-02-01")
    assert res.code == 3 and "task-x" in res.stderr


def test_deadlines_gate_on_a_path_that_is_not_a_store_exits_4(cli, tmp_path):
    """A CI gate pointed at a wrong path must fail, not report 'nothing overdue'."""
    for path in (tmp_path / "missing", tmp_path):
        res = cli("--store", str(path), "deadlines", "--fail-on", "overdue")
        assert (res.code, res.stdout) == (4, ""), res.stderr
        assert "store" in res.stderr


def test_block_reads_only_tasks_that_carry_a_date(store_path):
    """Undated tasks are skipped unparsed (the block runs after every query); dated ones, however the
    date line is written by hand, still count."""
    from datetime import date

    from kyb_cli.core.kinds.deadlines import block, dated_tasks

    tasks = store_path / "tasks"
    tasks.mkdir()
    (tasks / "task-undated.md").write_text('+++\nkey = "task-undated"\ntitle = "u"\nstatus = "open"\n+++\n')
    (tasks / "task-quoted.md").write_text('+++\nkey = "task-quoted"\ntitle = "q"\nstatus = "open"\n  "due" = "2026-01-01"\n+++\n')
    (tasks / "task-broken.md").write_text('+++\ndue = \n+++\n')
    assert [t.key for t in dated_tasks(store_path)] == ["task-quoted"]
    assert [i["key"] for i in block(dated_tasks(store_path), date(2026, 2, 1))["tasks"]] == ["task-quoted"]


@pytest.mark.parametrize("path", ["/knowledge/unrelated", "/tasks", "/incidents", "/search?q=nothing"])
def test_http_answers_carry_the_deadlines_block_as_mcp_does(due_store, path):
    """Issue 36 drift 4: the block is a parameter of get, query, tasks and incidents in every door
    (the CLI prints it on stderr; MCP and now HTTP add `deadlines`), with the same `today`."""
    pytest.importorskip("starlette")
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door
    from tests.support.asgi_call import asgi_call

    app = build_app(Door(due_store.path), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    path, _, query = path.partition("?")
    status, body = asgi_call(app, "GET", path, query="&".join(filter(None, [query, "today=2026-12-13"])))
    assert status == 200, body
    assert keys(body["deadlines"]["tasks"]) == ["task-late", "task-cert"] and body["deadlines"]["today"] == "2026-12-13"
    status, bad = asgi_call(app, "GET", path, query="&".join(filter(None, [query, "today=tomorrow"])))
    assert status == 400 and "today" in bad["error"]
