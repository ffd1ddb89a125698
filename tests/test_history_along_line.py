"""Issue 25 item 2: after a sync conflict, history, numbered versions and diff agree with `get`.

Alice and Bob write the same key; Bob's later write is kept by the merge. History lists the kept
(current) version first along the first-parent line, Alice's below it marked with the merge it lost;
`--version -1` is not the current version; `kyb diff KEY` goes from the line's previous version to
the kept one. Two stores syncing through a bare remote (tests/support/sync_world.py).
"""

from __future__ import annotations

import pytest

from kyb_cli import api
from kyb_cli.core.canon.repo import Store
from support.sync_world import Clock, World


@pytest.fixture
def conflict(tmp_path, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(Store, "signature", lambda _store: clock.signature())
    world = World(tmp_path)
    alice, bob = world.clone("a"), world.clone("b")
    first = world.add(alice, "svc-port", "port 8080")
    world.sync(alice)
    world.sync(bob)
    lost = world.add(alice, "svc-port", "port 9090 says alice")
    kept = world.add(bob, "svc-port", "port 9191 says bob")  # two seconds later: Bob's is kept
    world.sync(alice)
    reply = world.sync(bob)
    world.sync(alice)
    assert reply["conflicts"] and reply["conflicts"][0]["kept"] == kept
    return {"stores": (alice, bob), "first": first, "lost": lost, "kept": kept, "merge": reply["head"]}


def test_history_after_a_sync_conflict_lists_the_kept_version_first_and_marks_the_loser(conflict):
    for store in conflict["stores"]:
        assert api.read(store, "svc-port").sha == conflict["kept"]
        rows = [r.to_json() for r in api.history(store, "svc-port")]
        assert [r["sha"] for r in rows] == [conflict["kept"], conflict["lost"], conflict["first"]]
        assert [r["current"] for r in rows] == [True, False, False]
        assert rows[1]["lost_merge"] == conflict["merge"] and rows[0]["lost_merge"] is None
        assert rows[0]["version"] == 3 and rows[2]["version"] == 1


def test_get_version_minus_one_after_a_sync_conflict_is_not_the_current_version(conflict):
    for store in conflict["stores"]:
        assert api.read(store, "svc-port", version=-1).sha != conflict["kept"]
        assert api.read(store, "svc-port", version=3).sha == conflict["kept"]


def test_diff_after_a_sync_conflict_goes_from_the_previous_line_version_to_the_kept_one(conflict):
    from kyb_cli.core.kinds.diff import diff

    for store in conflict["stores"]:
        d = diff(store, "svc-port")
        assert "+port 9191 says bob" in d["diff"] and "-port 8080" in d["diff"]
        assert "9090" not in d["diff"]


def test_history_on_a_terminal_marks_the_current_version_and_the_one_that_lost_the_merge(conflict):
    import io

    from rich.console import Console

    from kyb_cli.cli.render import history_view

    rows = [r.to_json() for r in api.history(conflict["stores"][0], "svc-port")]
    buf = io.StringIO()
    history_view(Console(file=buf, width=160, no_color=True, highlight=False, force_terminal=False),
                 {"key": "svc-port", "versions": rows})
    lines = {line.split()[1]: line for line in buf.getvalue().splitlines() if line.startswith("│")}
    assert "current" in lines["3"] and "lost merge" not in lines["3"]
    assert f"lost merge {conflict['merge'][:12]}" in lines["2"] and "current" not in lines["2"]
    assert "current" not in lines["1"] and "lost merge" not in lines["1"]
