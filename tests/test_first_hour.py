"""A first hour without surprises: each defect a new user hit, as a test named after what they saw.

Items are those of the first-hour issue (set-up, agent wiring and defects); the agents wiring has
its own file (tests/test_doors_agents.py), set-up and release have tests/test_release.py.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
from datetime import date, timedelta
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
GUIDE = ROOT / "docs" / "guide"  # where README's long sections moved (issue 42)


def git(path: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True).stdout


def terminal_render(view, data, width: int = 100) -> str:
    """What a human view prints on a terminal (colours off), as plain text."""
    from rich.console import Console

    buf = io.StringIO()
    view(Console(file=buf, width=width, no_color=True, highlight=False, force_terminal=False), data)
    return buf.getvalue()


# 1. The README's test command failed with `fatal: unable to auto-detect email address`.

def test_a_hand_commit_in_a_test_works_without_any_user_git_identity(store_path):
    """Tests run `git commit` with the suite's own identity, never the machine's ~/.gitconfig."""
    assert Path(os.environ["HOME"]) != Path("/root") and not (Path(os.environ["HOME"]) / ".gitconfig").exists()
    assert os.environ["GIT_CONFIG_NOSYSTEM"] == "1"
    (store_path / "note.txt").write_text("by hand\n")
    git(store_path, "add", "note.txt")
    git(store_path, "commit", "-qm", "by hand")
    assert git(store_path, "log", "-1", "--format=%ae").strip() == "test@kyb.invalid"


def test_kyb_commits_in_tests_do_not_carry_the_machine_identity(cli, store_path):
    cli("add", "--key", "k", "--title", "T", input="b")
    assert git(store_path, "log", "-1", "--format=%an <%ae>").strip() == "kyb <kyb@localhost>"


# 3. `kyb deadlines --fail-on overdue` put the list on stderr while README said stdout.

def test_readme_says_a_failed_deadline_gate_prints_its_list_on_stderr(cli, store_path):
    section = (GUIDE / "work.md").read_text().split("kyb deadlines --fail-on overdue", 1)[1][:800]
    assert "still printed on stdout" not in section
    assert re.search(r"list (goes|is printed) (to|on) stderr", section), section
    cli("task", "--key", "task-late", "--title", "Late", "--due", "2020-01-02", input="")
    res = cli("deadlines", "--fail-on", "overdue")
    assert (res.code, res.stdout) == (3, "")
    assert "task-late" in res.stderr


# 4. `kyb query -h` ran a search for "-h" instead of printing help.

def test_query_dash_h_prints_help_like_every_other_command(kyb):
    res = kyb("query", "-h")
    assert res.code == 0 and res.stdout.startswith("Usage: kyb query")


def test_query_dash_h_after_double_dash_is_still_searched(kyb):
    kyb("add", "--key", "flags", "--title", "Flags", input="pass -h for help")
    res = kyb("query", "--no-semantic", "--", "-h")
    assert res.code == 0 and "hits" in res.json


# 6. `kyb add --key foo --title x </dev/null` created an empty record; a NUL byte was stored.

def test_add_with_empty_stdin_writes_nothing_and_says_why(kyb, store_path):
    head = git(store_path, "rev-parse", "--verify", "-q", "HEAD") if (store_path / ".git" / "refs" / "heads" /
                                                                      "main").exists() else ""
    res = kyb("add", "--key", "foo", "--title", "x", input="")
    assert (res.code, res.stdout) == (2, "")
    assert "empty" in res.stderr and "--body" in res.stderr and res.stderr.count("\n") == 1
    assert not (store_path / "knowledge" / "foo.md").exists()
    assert (git(store_path, "rev-parse", "--verify", "-q", "HEAD") if head else "") == head


def test_add_with_an_explicit_empty_body_is_refused_like_an_empty_stdin(cli, store_path):
    res = cli("add", "--key", "title-only", "--title", "Just a title", "--body", "")
    assert res.code == 2 and res.stdout == "" and "--body is empty" in res.stderr
    assert not (store_path / "knowledge" / "title-only.md").exists()


@pytest.mark.parametrize("field", ["body", "title", "tags"])
def test_a_nul_byte_is_refused_in_any_field(cli, store_path, field):
    args = {"body": ["--body", "a\x00b"], "title": ["--body", "x"], "tags": ["--body", "x", "--tags", "a\x00b"]}
    title = "t\x00" if field == "title" else "T"
    res = cli("add", "--key", "nul", "--title", title, *args[field])
    assert (res.code, res.stdout) == (3, "")
    assert "NUL byte" in res.stderr
    assert not (store_path / "knowledge" / "nul.md").exists()


def test_a_nul_byte_from_stdin_is_refused(kyb, store_path):
    res = kyb("add", "--key", "nul", "--title", "T", input="a\x00b")
    assert (res.code, res.stdout) == (3, "") and "NUL byte" in res.stderr


# 7. `kyb get` on a terminal reflowed the body as Markdown, so single line breaks vanished.

def test_get_on_a_terminal_keeps_every_line_break_of_the_body():
    from kyb_cli.cli.render import record_view

    body = "line one\nline two\n- [x] done\n**not bold**"
    out = terminal_render(record_view, {"key": "k", "title": "T [x]", "kind": "knowledge", "state": "active",
                                        "sha": "a" * 40, "committed_at": "2026-01-01T00:00:00+00:00",
                                        "is_head": True, "body": body, "tags": [], "refs": []})
    lines = out.splitlines()
    for line in body.splitlines():
        assert line in lines
    assert "T [x]" in out


# 8. reindex printed raw JSON on a terminal; the query table showed no snippet and `score 0.000` on
#    listings; nothing highlighted overdue or critical rows; the task panel printed `hard  False`;
#    "1 open incidents".

def test_reindex_on_a_terminal_prints_a_sentence_not_json():
    from kyb_cli.cli.commands.reindex import reindex_view

    out = terminal_render(reindex_view, {"head": "b" * 40, "commits": 1, "keys": 3, "versions": 4, "events": 4,
                                         "seconds": 0.25, "skipped": 0})
    assert not out.lstrip().startswith("{")
    assert "1 commit," in out and "3 keys" in out and "4 versions" in out


def _hit(key: str, body: str, score: float) -> dict:
    return {"key": key, "title": key.title(), "kind": "knowledge", "body": body, "tags": [], "refs": [],
            "sha": "c" * 40, "committed_at": "2026-01-01T00:00:00+00:00", "state": "active", "is_head": True,
            "score": score}


def test_query_table_shows_a_snippet_and_no_score_column_on_a_listing():
    from kyb_cli.cli.commands.query import query_view

    listing = {"count": 1, "hits": [_hit("pool", "# Pool\n\nThe pool size is 20.", 0.0)], "mode": "current",
               "semantic": False, "head": "c" * 40}
    out = terminal_render(query_view, listing, width=140)
    assert "Pool" in out and "score" not in out and "0.000" not in out
    searched = dict(listing, hits=[_hit("pool", "The pool size is 20.", 0.5)])
    out = terminal_render(query_view, searched, width=140)
    assert "The pool size is 20." in out and "score" in out and "0.500" in out
    assert "1 hit," in out


def test_task_panel_does_not_print_hard_false():
    from kyb_cli.cli.render import record_view

    out = terminal_render(record_view, {"key": "task-a", "title": "A", "kind": "task", "state": "active",
                                        "sha": "d" * 40, "committed_at": "2026-01-01T00:00:00+00:00",
                                        "is_head": True, "body": "", "status": "open", "due": "2030-01-01",
                                        "hard": False, "priority": "critical"})
    assert "False" not in out and "hard" not in out
    out = terminal_render(record_view, {"key": "task-a", "title": "A", "kind": "task", "state": "active",
                                        "sha": "d" * 40, "committed_at": "2026-01-01T00:00:00+00:00",
                                        "is_head": True, "body": "", "hard": True})
    assert re.search(r"hard\s+yes", out)


def test_overdue_and_critical_task_rows_stand_out():
    from rich.console import Console

    from kyb_cli.cli.commands.tasks import tasks_view

    row = {"key": "task-late", "title": "Late", "status": "open", "priority": "critical", "assignee": "",
           "due": (date.today() - timedelta(days=3)).isoformat(), "expected": "", "hard": False, "archived": False}
    buf = io.StringIO()
    tasks_view(Console(file=buf, width=120, force_terminal=True, color_system="standard"), {"count": 1, "tasks": [row]})
    out = buf.getvalue()
    assert "overdue" in out and "\x1b[1;31m" in out  # bold red
    assert "1 task" in out and "task(s)" not in out


def test_brief_context_says_1_open_incident_not_1_open_incidents():
    from kyb_cli.core.tools.context import render_brief

    text = render_brief({"counts": {"knowledge": {"active": 1}, "task": {"active": 1}}, "open_incident_total": 1,
                         "overdue_total": 0, "top_tags": []})
    assert "1 knowledge record," in text and "1 open incident," in text and "1 live task " in text


# 9. `KYB_MODEL=/broken kyb doctor` blamed the index's vectors ("of another model") and the hint said
#    `kyb model pull` (network) and not `kyb model import DIR`.

def test_doctor_with_a_broken_model_blames_the_model_not_the_vectors(cli, store_path, tiny, tmp_path, monkeypatch):
    assert cli("add", "--key", "k", "--title", "T", input="checkout writes go to node 3").code == 0
    assert cli("index", "--embed").code == 0
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in os.listdir(tiny):
        (broken / name).write_bytes((Path(tiny) / name).read_bytes())
    (broken / "model.onnx").write_bytes(b"not a model")
    monkeypatch.setenv("KYB_MODEL", str(broken))
    from kyb_cli.core import embed

    embed._EMBEDDERS.clear()
    res = cli("doctor")
    assert res.code == 4
    problems = res.json["problems"]
    assert any(p.startswith("model: the model is broken") for p in problems), problems
    assert not any("another model" in p for p in problems), problems
    assert all("kyb model import DIR" in p for p in problems if p.startswith("model:"))


def test_semantic_off_hint_names_model_import_first(kyb):
    res = kyb("query", "anything", env={"KYB_MODEL": "/nonexistent/model"})
    assert res.code == 0
    assert "fix: kyb model import DIR" in res.stderr


# 11. `tasks --limit 500` silently returned 200 while `query --limit 1000` was a usage error; a task
#     created with a past due date got no warning; a usage error on a subcommand pointed at `kyb --help`.

@pytest.mark.parametrize("args", [("tasks", "--limit", "500"), ("incidents", "--limit", "201"),
                                  ("query", "x", "--limit", "1000")])
def test_a_limit_over_the_maximum_is_a_usage_error_everywhere(kyb, args):
    res = kyb(*args)
    assert (res.code, res.stdout) == (2, "")
    assert "--limit" in res.stderr and f"`kyb {args[0]} --help`" in res.stderr


def test_the_maximum_limit_itself_is_fine(kyb):
    assert kyb("tasks", "--limit", "200").code == 0 and kyb("query", "x", "--limit", "100").code == 0


def test_a_task_created_with_a_past_due_date_gets_a_warning(kyb):
    res = kyb("task", "--key", "task-late", "--title", "Late", "--due", "2020-01-01", input="")
    assert res.code == 0
    assert "already past" in res.json["warning"]
    assert "warning: task-late: due date 2020-01-01 is already past" in res.stderr
    again = kyb("task", "--key", "task-late", "--title", "Late, renamed", input="")
    assert "warning" not in again.json  # the date did not change: said once
    future = (date.today() + timedelta(days=30)).isoformat()
    assert "warning" not in kyb("task", "--key", "task-soon", "--title", "S", "--due", future, input="").json


@pytest.mark.parametrize("args,where", [
    (("add", "--key"), "kyb add --help"),
    (("query", "--changed-between", "2020-01-01"), "kyb query --help"),
    (("agents", "install", "--agent"), "kyb agents install --help"),
    (("tasks", "--bogus"), "kyb tasks --help"),
    (("nosuchcommand",), "kyb --help"),
])
def test_a_usage_error_points_at_the_help_of_the_command_it_came_from(kyb, args, where):
    res = kyb(*args)
    assert (res.code, res.stdout) == (2, "")
    assert res.stderr.rstrip().endswith(f"(see `{where}`)"), res.stderr


# 12. The zipapp extracted ~200 MB on first run and README did not say so.

def test_readme_says_what_the_zipapp_extracts_where_and_how_to_clean_it():
    section = (GUIDE / "agents.md").read_text().split("### One-file kyb: the zipapp", 1)[1].split("\n## ", 1)[0]
    assert "MB" in section and "~/.cache/kyb/pyz/" in section and "KYB_PYZ_CACHE" in section
    assert re.search(r"rm -rf ~/\.cache/kyb/pyz", section)


def test_mcp_limits_match_the_cli(cli):
    """The MCP schema refuses what the CLI refuses (one rule for every door)."""
    from kyb_cli import api
    from kyb_cli.core.kinds.lifecycle import LISTING_MAX_LIMIT

    assert LISTING_MAX_LIMIT == api.LISTING_MAX_LIMIT == 200
    pytest.importorskip("mcp")
    import asyncio

    from kyb_cli.mcp.server import build_server

    tools = {t.name: t.input_schema for t in asyncio.run(build_server().list_tools())}

    def maximum(tool: str) -> int:
        return tools[tool]["properties"]["limit"]["maximum"]

    assert maximum("tasks") == maximum("incidents") == 200 and maximum("query") == 100
