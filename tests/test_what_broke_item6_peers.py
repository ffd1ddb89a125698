"""Issue 37, item 6: what a peer sends is held to the rules a local write is held to.

Rules named here:
- typed-fields-held-out: a peer's record whose `review_by`, `effective_at`, `due`, `expected`,
  `priority`, `status` or `severity` holds junk or a secret is held out (listed with why, never
  served) by the same rule a local write runs (validate.typed_field_problem), and a local write
  repairs it.
"""

from __future__ import annotations

import json

import pytest

from support.hostile import BLOB, Entry, record_text
from test_sync_hostile import team, team_template  # noqa: F401 (fixtures)
from kyb_cli.core.records.keys import path_of_key

SECRET = "ghp_" + "k3Jq9ZpX2mVt7RwL5nYc8Hs4Fd6Gb1Ae0UoQ"

KNOWLEDGE = dict(path=path_of_key("peer-fact"), key="peer-fact", base={},
                 repair=("add", "--key", "peer-fact", "--title", "Fact", "--body", "repaired"))
TASK = dict(path=path_of_key("task-peer"), key="task-peer", base={"status": "open"},
            repair=("task", "--key", "task-peer", "--title", "Task", "--body", "repaired"))
INCIDENT = dict(path=path_of_key("inc-peer"), key="inc-peer",
                base={"service": "db", "severity": "high", "status": "open"},
                repair=("incident", "--key", "inc-peer", "--title", "Inc", "--body", "repaired",
                        "--service", "db", "--severity", "high"))

CASES = [
    (KNOWLEDGE, "review_by", {}),
    (KNOWLEDGE, "effective_at", {}),
    (TASK, "due", {}),
    (TASK, "expected", {"waits_on": "vendor"}),
    (TASK, "priority", {}),
    (TASK, "status", {}),
    (INCIDENT, "severity", {}),
    (INCIDENT, "status", {}),
]


@pytest.mark.parametrize("value", ["next tuesday-ish", SECRET], ids=["junk", "secret"])
@pytest.mark.parametrize("kind,field,more", CASES, ids=[f"{c[0]['key']}-{c[1]}" for c in CASES])
def test_typed_fields_held_out(team, kind, field, more, value):
    fields = {**kind["base"], **more, field: value}
    commit = team.peer.write({kind["path"]: (BLOB, record_text(kind["key"], body="peer body", **fields))})
    res = team.sync()
    assert res.returncode == 0, res.stderr
    reply = json.loads(res.stdout)
    held = reply["held_out"]
    assert [(h["commit"], h["path"]) for h in held] == [(commit, kind["path"])], held
    assert field in held[0]["reason"], held[0]["reason"]
    assert SECRET not in res.stdout + res.stderr
    got = team.kyb("get", kind["key"])
    assert got.returncode == 4 and got.stdout == "" and kind["path"] in got.stderr
    assert SECRET not in got.stderr
    for args in (("query", "peer body"), ("export",), ("context",)):
        out = team.kyb(*args)
        assert out.returncode == 0, (args, out.stderr)
        assert SECRET not in out.stdout and "next tuesday" not in out.stdout
    fix = team.kyb(*kind["repair"])  # the repair is an ordinary local write
    assert fix.returncode == 0, fix.stderr
    assert json.loads(team.sync().stdout)["held_out"] == []
    assert json.loads(team.kyb("get", kind["key"]).stdout)["body"] == "repaired"


# -- commit-text-redacted: a peer's commit message and Kyb-* trailers --------------------------------

def _peer_commit_with_secrets(team) -> str:
    message = (f"peer: note {SECRET}\n\nmore words\n\nKyb-Action: add\nKyb-Agent: {SECRET}\n"
               f"Kyb-Session: s-{SECRET}\nKyb-Transport: cli\nKyb-Reason: token {SECRET}\n")
    commit = team.peer.write({path_of_key("peer-note"): (BLOB, record_text("peer-note", body="peer note"))},
                             message=message)
    res = team.sync()
    assert res.returncode == 0, res.stderr
    return commit


def test_commit_text_redacted_in_log_history_and_mcp(team):
    from support.three_doors import mcp_call

    commit = _peer_commit_with_secrets(team)
    log = team.kyb("log", "--limit", "20")
    assert log.returncode == 0, log.stderr
    assert SECRET not in log.stdout + log.stderr
    rows = [r for r in json.loads(log.stdout)["log"] if r["sha"] == commit]
    assert rows and "redacted" in rows[0]["message"] and "redacted" in rows[0]["agent"]
    hist = team.kyb("history", "peer-note")
    assert hist.returncode == 0, hist.stderr
    assert SECRET not in hist.stdout + hist.stderr and "redacted" in hist.stdout
    is_error, text, _code = mcp_call(team.store, "log", {"limit": 20})
    assert not is_error and SECRET not in text and "redacted" in text
    is_error, text, _code = mcp_call(team.store, "history", {"key": "peer-note"})
    assert not is_error and SECRET not in text


# -- refuse-unsafe: a remote branch that is not a commit ---------------------------------------------

@pytest.mark.parametrize("what", ["tree", "blob"])
def test_refuse_unsafe_remote_branch_pointing_at_a_tree_or_blob(team, what):
    from support.hostile import snapshot
    from test_sync_hostile import _assert_refused

    blob = team.peer.blob(record_text("peer-x", body="x"))
    target = blob if what == "blob" else team.peer.tree({path_of_key("peer-x"): Entry(BLOB, blob)})
    (team.remote / "refs" / "heads" / "main").write_text(target + "\n")  # git update-ref refuses this
    before = snapshot(team.store)
    for _ in range(2):  # every sync says the same, nothing is half-applied
        res = team.sync()
        refused = _assert_refused(team, res, target, "")
        assert f"points at a {what}" in refused[0]["reason"]
        assert "internal error" not in res.stderr and "diff-tree" not in res.stderr
        assert snapshot(team.store) == before
    clone = team.clone()
    _assert_refused(team, clone, target, "")
    assert not (team.root / "fresh").exists()
    assert team.kyb("add", "--key", "after", "--title", "A", "--body", "still works").returncode == 0


def test_commit_text_redacted_in_a_retraction_reason(team):
    commit = team.peer.write({path_of_key("seed"): None},
                             message=f"kyb: retract seed\n\nKyb-Action: retract\nKyb-Reason: token {SECRET}\n")
    assert team.sync().returncode == 0
    got = team.kyb("get", "seed")
    assert got.returncode == 1 and got.stdout == "", (got.returncode, got.stderr)
    assert SECRET not in got.stderr and "redacted" in got.stderr and commit[:7] in got.stderr, got.stderr
    hist = team.kyb("history", "seed")
    assert hist.returncode == 0 and SECRET not in hist.stdout and "redacted" in hist.stdout
