"""Issue 36: one answer shape per operation in every door. The same calls, in the same order, through
the CLI (in-process), the MCP server (its client, in memory) and the HTTP API (ASGI, in-process), each
on its own copy of one store: every answer has the same keys, and the rows of a listing the same
columns. Where a door must differ, the difference is declared here with why (DIFFERS)."""

from __future__ import annotations

import json
import os
import shutil

import anyio
import pytest

from kyb_cli import api
from kyb_cli.api.operations import OPERATIONS

pytest.importorskip("mcp")
pytest.importorskip("starlette")

from tests.support.asgi_call import asgi_call  # noqa: E402
from tests.support.inprocess import run_inprocess  # noqa: E402

KEY, TASK, INC = "checkout-port", "task-renew-cert", "inc-2026-12-01-checkout-502"

# Each step: operation, CLI argv, MCP arguments, HTTP (method, path, query, body); None: the door lacks it.
STEPS = [
    ("add", ["add", "--key", KEY, "--title", "Checkout port", "--body", "port 9090", "--tags", "infra"],
     {"key": KEY, "title": "Checkout port", "body": "port 9090", "tags": ["infra"]},
     ("POST", "/knowledge", "", {"key": KEY, "title": "Checkout port", "body": "port 9090", "tags": ["infra"]})),
    ("add", ["add", "--key", KEY, "--title", "Checkout port", "--body", "port 9443"],
     {"key": KEY, "title": "Checkout port", "body": "port 9443"},
     ("POST", "/knowledge", "", {"key": KEY, "title": "Checkout port", "body": "port 9443"})),
    ("get", ["get", KEY], {"key": KEY}, ("GET", f"/knowledge/{KEY}", "", None)),
    ("history", ["history", KEY], {"key": KEY}, ("GET", f"/knowledge/{KEY}/history", "", None)),
    ("diff", ["diff", KEY], {"key": KEY}, ("GET", f"/knowledge/{KEY}/diff", "", None)),
    ("query", ["query", "port"], {"text": "port"}, ("GET", "/search", "q=port", None)),
    ("query", ["query", "port", "--history"], {"text": "port", "history": True},
     ("GET", "/search", "q=port&history=true", None)),
    ("task", ["task", "--key", TASK, "--title", "Renew cert", "--due", "2020-01-31"],
     {"key": TASK, "title": "Renew cert", "due": "2020-01-31"},
     ("POST", "/tasks", "", {"key": TASK, "title": "Renew cert", "due": "2020-01-31"})),
    ("task-status", ["task-status", TASK, "--status", "in_progress", "--assignee", "ops"],
     {"key": TASK, "status": "in_progress", "assignee": "ops"},
     ("POST", f"/tasks/{TASK}/transition", "", {"status": "in_progress", "assignee": "ops"})),
    ("tasks", ["tasks"], {}, ("GET", "/tasks", "", None)),
    ("done", ["done", TASK, "--resolution", "renewed"], {"key": TASK, "resolution": "renewed"},
     ("POST", f"/tasks/{TASK}/resolve", "", {"resolution": "renewed"})),
    ("incident", ["incident", "--key", INC, "--title", "502 on checkout", "--service", "checkout", "--severity",
                  "high", "--body", "It broke."],
     {"key": INC, "title": "502 on checkout", "service": "checkout", "severity": "high", "body": "It broke."},
     ("POST", "/incidents", "", {"key": INC, "title": "502 on checkout", "service": "checkout",
                                 "severity": "high", "body": "It broke."})),
    ("incidents", ["incidents"], {}, ("GET", "/incidents", "", None)),
    ("resolve", ["resolve", INC, "--resolution", "rolled back"], {"key": INC, "resolution": "rolled back"},
     ("POST", f"/incidents/{INC}/resolve", "", {"resolution": "rolled back"})),
    ("incidents", ["incidents", "--all"], {"all": True}, ("GET", "/incidents", "all=true", None)),
    ("deadlines", ["deadlines"], {}, ("GET", "/deadlines", "", None)),
    ("context", ["context"], {}, ("GET", "/context", "", None)),
    ("verify", ["verify", KEY, "--source", "deploy/nginx.conf"], {"key": KEY, "source": "deploy/nginx.conf"}, None),
    ("stale", ["stale"], {}, None),
    ("rules", ["rules"], {}, None),
    ("log", ["log"], {}, None),
    ("tags", ["tags"], None, ("GET", "/tags", "", None)),
    ("rm", ["rm", KEY, "--reason", "port moved"], {"key": KEY, "reason": "port moved"},
     ("DELETE", f"/knowledge/{KEY}", "reason=port+moved", None)),
]

# Where a door's answer must differ, and why: door -> {answer key it lacks: why}.
LACKS = {"cli": {"deadlines": "the CLI prints the deadlines block on stderr (cli/deadlines_block.py): its stdout "
                              "is the answer alone, for pipes; MCP and HTTP carry it in the answer"}}


def shape(answer):
    """An answer's keys, and for each list of objects the union of its rows' keys."""
    if isinstance(answer, list):
        return ("rows", frozenset(k for row in answer if isinstance(row, dict) for k in row))
    return {k: shape(v) if isinstance(v, list) and v and isinstance(v[0], dict) else "·" for k, v in answer.items()}


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    """Every step's answer through every door that has its operation: {door: [answer or None]}."""
    from kyb_cli.mcp.server import build_server
    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door

    root = tmp_path_factory.mktemp("shapes")
    home = root / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "c"), "XDG_DATA_HOME": str(home / "d"),
           "XDG_CACHE_HOME": str(home / "x"), "XDG_STATE_HOME": str(home / "s"), "KYB_DEADLINES": "on",
           "KYB_BACKGROUND": "off"}
    api.init_store(root / "seed")
    stores = {door: root / door for door in ("cli", "mcp", "http")}
    for path in stores.values():
        shutil.copytree(root / "seed", path)
    found: dict[str, list] = {"cli": [], "mcp": [], "http": []}
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        for _op, argv, _m, _h in STEPS:
            code, out, err = run_inprocess(argv, {**env, "KYB_STORE": str(stores["cli"])})
            assert code == 0, (argv, err)
            found["cli"].append(json.loads(out))

        async def by_mcp():
            from mcp import Client

            async with Client(build_server(str(stores["mcp"]))) as client:
                tools = {t.name for t in (await client.list_tools()).tools}
                for op, _a, arguments, _h in STEPS:
                    name = OPERATIONS[op].tool
                    if arguments is None or name not in tools:
                        found["mcp"].append(None)
                        continue
                    result = await client.call_tool(name, arguments)
                    assert not result.is_error, (op, result.content[0].text)
                    found["mcp"].append(result.structured_content)

        anyio.run(by_mcp)
        app = build_app(Door(stores["http"]), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
        for _op, _a, _m, call in STEPS:
            if call is None:
                found["http"].append(None)
                continue
            method, path, query, body = call
            status, answer = asgi_call(app, method, path, query=query, body=body)
            assert status == 200, (path, answer)
            found["http"].append(answer)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return found


def _unwrapped(door: str, answer):
    """MCP's structured content wraps a list answer as {"result": [...]}, the one envelope JSON-RPC
    needs for a non-object; the rows are the answer."""
    if door == "mcp" and isinstance(answer, dict) and set(answer) == {"result"}:
        return answer["result"]
    return answer


@pytest.mark.parametrize("step", range(len(STEPS)), ids=[f"{i}-{s[0]}" for i, s in enumerate(STEPS)])
def test_every_door_answers_an_operation_in_one_shape(answers, step):
    op = STEPS[step][0]
    shapes = {door: shape(_unwrapped(door, answers[door][step])) for door in answers
              if answers[door][step] is not None}
    assert len(shapes) >= 2, f"{op}: fewer than two doors offer it"
    for door in shapes:  # the declared differences, stripped from every door so the rest must be equal
        if op != "deadlines":  # (whose answer *is* the block, in every door)
            shapes[door] = {k: v for k, v in shapes[door].items() if not any(k in lack for lack in LACKS.values())}
    first, *rest = shapes.items()
    for door, got in rest:
        assert got == first[1], f"{op}: {door} answers {got}, {first[0]} answers {first[1]}"


def test_the_deadlines_block_rides_along_where_the_table_says(answers):
    """While a task is overdue, MCP and HTTP answer `tasks` with the block; the CLI's stdout never has it
    (it goes to stderr). Once the task is done there is no block."""
    ops = [s[0] for s in STEPS]
    listing, closed = ops.index("tasks"), ops.index("done")
    assert "deadlines" in answers["mcp"][listing] and "deadlines" in answers["http"][listing]
    for step, op in enumerate(ops):
        if op == "deadlines":
            continue
        assert "deadlines" not in (answers["cli"][step] or {}), op
        if step > closed:
            assert "deadlines" not in (answers["mcp"][step] or {}), op
