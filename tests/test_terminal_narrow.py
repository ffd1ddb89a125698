"""Issue 42: on an 80-column terminal a query hit takes at most three lines and a task shows its
blockers; a wide terminal keeps its table (with a `blocked by` column)."""

from __future__ import annotations

import io

from rich.console import Console

HIT = {"key": "decisions-00017-replica-drain-17", "title": "Replica drain 17 " * 3, "kind": "knowledge",
       "sha": "a453e80684" * 4, "committed_at": "2026-12-06T02:26:10+00:00", "state": "active", "is_head": True,
       "score": 1.5, "strength": "strong", "found_by": "lexical", "snippet": "replica gateway session " * 12}
TASKS = {"count": 2, "tasks": [
    {"key": "task-order-cert", "status": "open", "archived": False, "priority": "high", "assignee": "",
     "due": "", "expected": "", "hard": False, "title": "Order the certificate", "blocked_by": []},
    {"key": "task-renew-cert", "status": "blocked", "archived": False, "priority": "", "assignee": "ops-bot",
     "due": "2026-12-01", "expected": "", "hard": True, "title": "Renew the TLS certificate " * 3,
     "blocked_by": ["task-order-cert"]}]}


def _render(view, data, width: int) -> list[str]:
    out = io.StringIO()
    view(Console(file=out, width=width, color_system=None, force_terminal=False), data)
    return out.getvalue().splitlines()


def test_a_query_hit_takes_three_lines_at_80_columns():
    from kyb_cli.cli.commands.query import query_view

    lines = _render(query_view, {"count": 2, "hits": [HIT, {**HIT, "key": "other"}], "confident": True,
                                 "semantic": False, "mode": "current", "head": "c" * 40}, 80)
    assert all(len(line) <= 80 for line in lines), lines
    assert lines[0].startswith("decisions-00017-replica-drain-17") and "a453e80684" in lines[1]
    assert lines[2].strip().startswith("replica gateway") and lines[2].endswith("…")
    assert lines[3].startswith("other")  # the next hit: three lines each, then the footer
    assert len(lines) <= 6 + 2


def test_a_wide_terminal_keeps_the_table_and_cuts_the_snippet_to_two_lines():
    from kyb_cli.cli.commands.query import query_view

    lines = _render(query_view, {"count": 1, "hits": [HIT], "confident": True, "semantic": False,
                                 "mode": "current", "head": "c" * 40}, 160)
    assert lines[0].split()[:2] == ["key", "title"] and len(lines) <= 6, lines


def test_tasks_show_their_blockers_narrow_and_wide():
    from kyb_cli.cli.commands.tasks import tasks_view

    narrow = _render(tasks_view, TASKS, 80)
    assert any("blocked by task-order-cert" in line for line in narrow) and all(len(x) <= 80 for x in narrow)
    wide = _render(tasks_view, TASKS, 160)
    assert any("blocked by" in line for line in wide[:4]) and any("task-order-cert" in line for line in wide[4:])
