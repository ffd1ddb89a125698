"""Issue 24, "Hostile input, round two": one test (or a few) named after each numbered failure, with
plain git as the peer (tests/support/hostile.py) where a peer is the attacker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kyb_cli.core.errors import Rejected, UsageError
from kyb_cli.core.records import secrets
from kyb_cli.core.records.model import Record
from kyb_cli.core.records.validate import validate
from support.hostile import BLOB, record_text
from test_sync_hostile import team  # noqa: F401  (the fixture: a victim store, a bare remote, a peer)

CORPUS = Path(__file__).resolve().parent / "data" / "secrets_corpus_round2.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
SECRETS = [r for r in ROWS if r["expect"] == "secret"]
CLEAN = [r for r in ROWS if r["expect"] == "clean"]
GHP = "ghp_" + "k3Jq9ZpX2mVt7RwL5nYc8Hs4Fd6Gb1Ae0UoQ"


# -- failure 2: a peer's secrets are served -------------------------------------------------------

def test_failure_2_round_two_corpus_is_the_generated_one():
    from support.secret_corpus_round2 import rows

    assert ROWS == rows() and len(SECRETS) >= 75 and len(CLEAN) >= 50


def test_failure_2_round_two_corpus_at_least_95_percent_caught_no_lookalike_refused():
    caught = [r["what"] for r in SECRETS if secrets.first_secret(r["text"], r["field"])]
    refused = [r["what"] for r in CLEAN if secrets.first_secret(r["text"], r["field"])]
    assert len(caught) >= 0.95 * len(SECRETS), sorted({r["what"] for r in SECRETS} - set(caught))
    assert refused == []


PEER_FIELDS = {  # path -> record text with the secret in one field a write scans
    "knowledge/f-tags.md": record_text("f-tags", tags=[GHP]),
    "knowledge/f-hand.md": record_text("f-hand", runbook=GHP),
    "knowledge/f-verified.md": record_text("f-verified") .replace(
        "+++\n", "+++\n", 1).replace('title = "f-verified"', f'title = "f-verified"\n[verified]\nsource = "{GHP}"'),
    "incidents/inc-service.md": record_text("inc-service", service=GHP, severity="low", status="open"),
    "incidents/inc-hosts.md": record_text("inc-hosts", service="s", severity="low", status="open", hosts=[GHP]),
    "incidents/inc-know.md": record_text("inc-know", service="s", severity="low", status="open", knowledge=[GHP]),
    "incidents/inc-aff.md": record_text("inc-aff", service="s", severity="low", status="open").replace(
        '+++\n', f'[[affected]]\nscope = "{GHP}"\nfrom = "2026-01-01"\nto = "2026-01-02"\n+++\n', 2).replace(
        f'[[affected]]\nscope = "{GHP}"\nfrom = "2026-01-01"\nto = "2026-01-02"\n+++\nkey', '+++\nkey', 1),
    "tasks/task-blocked.md": record_text("task-blocked", status="blocked", blocked_reason="r",
                                         blocked_by=[f"task-{GHP}"]),
    "tasks/task-parent.md": record_text("task-parent", status="open", parent_task=f"task-{GHP}"),
}


@pytest.mark.parametrize("path", sorted(PEER_FIELDS))
def test_failure_2_held_out_check_scans_every_field_a_write_scans(path):
    from kyb_cli.core.records import keys

    reason = keys.record_problem(path, PEER_FIELDS[path])
    assert reason is not None and "secret" in reason, reason
    assert "k3Jq9Z" not in reason


def test_failure_2_a_peers_secret_in_any_field_is_held_out_and_never_served(team):  # noqa: F811
    team.peer.write({p: (BLOB, t) for p, t in PEER_FIELDS.items()})
    res = team.sync()
    assert res.returncode == 0, res.stderr
    held = sorted(h["path"] for h in json.loads(res.stdout)["held_out"])
    assert held == sorted(PEER_FIELDS)
    for args in (("export",), ("query", "f"), ("tasks", "--all")):
        out = team.kyb(*args)
        assert "k3Jq9Z" not in out.stdout + out.stderr


@pytest.mark.parametrize("key", ["sk-proj-" + "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6", "glpat-" + "x9y8z7w6v5u4t3s2r1q0"])
def test_failure_2_a_key_that_looks_like_a_secret_is_refused_without_echoing_it(key):
    with pytest.raises(Rejected) as err:
        validate(Record(key=key, title="t"))
    assert key[6:] not in err.value.message and "key looks like a secret" in err.value.message


def test_failure_2_attribution_labels_are_scanned(store):
    from kyb_cli.api.records import add_knowledge
    from kyb_cli.core.canon.attribution import detect

    def add(**env):
        return add_knowledge(store, key="k", title="t", body="b", tags=[], refs=[],
                             attribution=detect(environ={"KYB_AGENT": "a", "KYB_WORKSPACE": "w", **env}))

    with pytest.raises(Rejected) as err:
        add(KYB_SESSION=GHP)
    assert "session label" in err.value.message and "k3Jq9Z" not in err.value.message
    with pytest.raises(Rejected):
        add(KYB_AGENT="bot " + GHP)
    assert add(KYB_SESSION="plain-session-1").changed


@pytest.mark.parametrize("field", ["due", "expected", "review_by", "parent_task"])
def test_failure_2_field_errors_do_not_echo_a_secret(field):
    kind_key = "task-x" if field in ("due", "expected", "parent_task") else "k"
    record = Record(key=kind_key, title="t", status="open" if kind_key.startswith("task") else "")
    setattr(record, field, GHP)
    if field == "expected":
        record.waits_on = "w"
    with pytest.raises(Rejected) as err:
        validate(record)
    assert "k3Jq9Z" not in err.value.message


@pytest.mark.parametrize("text", [GHP, "2026-13-45" + GHP, "x" * 500])
def test_failure_2_at_and_as_of_errors_do_not_echo_a_secret(text):
    from kyb_cli.core.times.parse import parse_time

    with pytest.raises(UsageError) as err:
        parse_time(text, bound="at")
    assert "k3Jq9Z" not in err.value.message and "x" * 100 not in err.value.message
