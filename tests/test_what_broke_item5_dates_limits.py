"""Issue 37, item 5: the same mistake gets the same class everywhere.

- A date that is not a date is a usage error (exit 2 / HTTP 400 / MCP exit 2) for every calendar-date
  field (`review_by`, `due`, `expected`, `due_before`, `today`), as it was for `effective_at`; before,
  `--review-by` and `--due` said exit 3 (the write rule). One rule: api.handlers._check_dates, for every
  field the table marks DATE.
- A limit is 1 to its maximum in every door: `--limit 0` was accepted (and answered nothing) while
  `--limit 101` was refused; now 0 is a usage error naming the range (the table's LIMIT_MIN)."""

from __future__ import annotations

import pytest

from kyb_cli.api.operations import LIMIT_MIN, OPERATIONS
from tests.support.three_doors import HOST, head, http, mcp_call

BAD_DATES = [  # (CLI args, MCP tool, MCP/HTTP body, HTTP route, the field)
    (["add", "--key", "k", "--title", "T", "--review-by", "tomorrow"], "add",
     {"key": "k", "title": "T", "body": "b", "review_by": "tomorrow"}, "/knowledge", "review_by"),
    (["task", "--key", "task-k", "--title", "T", "--due", "2026-13-45"], "task",
     {"key": "task-k", "title": "T", "due": "2026-13-45"}, "/tasks", "due"),
    (["task", "--key", "task-k", "--title", "T", "--expected", "soon", "--waits-on", "x"], "task",
     {"key": "task-k", "title": "T", "expected": "soon", "waits_on": "x"}, "/tasks", "expected"),
    (["add", "--key", "k", "--title", "T", "--effective-at", "tomorrow"], "add",
     {"key": "k", "title": "T", "body": "b", "effective_at": "tomorrow"}, "/knowledge", "effective_at"),
]
IDS = [c[-1] for c in BAD_DATES]


def test_every_calendar_date_field_is_marked_date_in_the_table():
    dated = {(op.name, f.name) for op in OPERATIONS.values() for f in op.fields if f.metavar == "DATE"}
    assert {("add", "review_by"), ("task", "due"), ("task", "expected"), ("tasks", "due_before")} <= dated


@pytest.mark.parametrize("args,tool,body,route,field", BAD_DATES, ids=IDS)
def test_a_date_that_is_not_a_date_is_a_usage_error_on_the_cli(cli, store_path, args, tool, body, route, field):
    before = head(store_path)
    res = cli(*args, input="b")
    assert (res.code, res.stdout) == (2, ""), res.stderr
    assert res.stderr.startswith("kyb: ") and len(res.stderr.strip().splitlines()) == 1
    assert "--" + field.replace("_", "-") in res.stderr, res.stderr
    assert head(store_path) == before


@pytest.mark.parametrize("args,tool,body,route,field", BAD_DATES, ids=IDS)
def test_a_date_that_is_not_a_date_is_a_usage_error_over_mcp_and_http(store_path, args, tool, body, route, field):
    pytest.importorskip("mcp")
    before = head(store_path)
    is_error, text, code = mcp_call(store_path, tool, body)
    assert is_error and code == 2 and field in text, text
    with http(store_path) as client:
        got = client.post(route, json=body, headers=HOST)
    assert got.status_code == 400 and got.json()["exit_code"] == 2 and field in got.text, got.text
    assert head(store_path) == before


def test_a_good_date_and_an_empty_one_still_write(cli):
    assert cli("task", "--key", "task-k", "--title", "T", "--due", "2026-12-31", input="b").code == 0
    assert cli("task", "--key", "task-k", "--title", "T", "--due", "", input="b").code == 0
    assert cli("add", "--key", "k", "--title", "T", "--review-by", "2027-01-31", input="b").code == 0


LIMITED = [(op.name, f) for op in OPERATIONS.values() for f in op.fields if f.name == "limit"]


def test_every_limit_has_the_one_lower_bound():
    assert LIMITED and all(f.minimum == LIMIT_MIN == 1 for _op, f in LIMITED)


@pytest.mark.parametrize("command", ["query", "tasks", "incidents", "log"])
def test_a_limit_of_zero_is_a_usage_error_naming_the_range_on_the_cli(cli, command, store_path):
    before = head(store_path)
    args = [command, "x"] if command == "query" else [command]
    res = cli(*args, "--limit", "0")
    assert (res.code, res.stdout) == (2, ""), res.stderr
    assert "--limit" in res.stderr and "must be at least 1 (1 to " in res.stderr, res.stderr  # one wording in every door
    assert cli(*args, "--limit", "1").code == 0
    assert head(store_path) == before


@pytest.mark.parametrize("tool", ["query", "tasks", "incidents", "log"])
def test_a_limit_of_zero_is_a_usage_error_over_mcp(store_path, tool):
    pytest.importorskip("mcp")
    arguments = {"text": "x", "limit": 0} if tool == "query" else {"limit": 0}
    is_error, text, code = mcp_call(store_path, tool, arguments)
    assert is_error and code == 2 and "limit" in text, text


@pytest.mark.parametrize("route", ["/search?q=x&limit=0", "/tasks?limit=0", "/incidents?limit=0"])
def test_a_limit_of_zero_is_a_400_over_http_naming_the_range(store_path, route):
    with http(store_path) as client:
        got = client.get(route, headers=HOST)
    assert got.status_code == 400 and "limit: must be at least 1 (1 to " in got.json()["error"], got.text
