"""Incidents: validation (rule "incident rules"), hints (rule "incident hints"), timeline (rule "incident timeline"), resolve/archive (rules "archive on close", "close with a resolution"),
follow-ups (rules "follow-ups", "loose-ends warning"), keep-if-omitted tags (rule "tags kept if omitted"), listings (rule "listings")."""

from __future__ import annotations

import pygit2
import pytest

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.errors import NotFound, Rejected
from kyb_cli.core.kinds.incidents import HINTS, list_incidents, resolve_incident, write_incident
from kyb_cli.core.kinds.lifecycle import open_followups
from kyb_cli.core.index import reads
from kyb_cli.core.records.keys import path_of_key

ATT = Attribution("tester", "s1", "ws", "test")
KEY = "inc-2026-07-22-orders-oom"
FULL_BODY = "## Root cause (verified)\nheap\n\n## Follow-ups\n- [x] bump heap\n"
FOLLOWUP_BODY = "Follow-ups:\n- [ ] guard dev NATS\n  - [ ] nested also counts\n- [x] webui filter\n- [] not a checkbox\n"


def inc(store, key=KEY, **kw):
    args = dict(key=key, title="Orders OOM", body=FULL_BODY, service="orders_api", severity="high",
                detection="curl /healthz → 200", affected=[{"scope": "orders", "from": "a", "to": "b"}])
    args.update(kw)
    return write_incident(store, ATT, **args)


@pytest.mark.parametrize("changes,message", [
    ({"service": "  "}, "incident needs a service (what broke)"),
    ({"severity": ""}, "severity must be one of: low|medium|high|critical"),
    ({"severity": "HIGH"}, "severity must be one of: low|medium|high|critical"),
    ({"status": "closed"}, "status must be one of: open|mitigated|resolved"),
    ({"status": "done"}, "status must be one of: open|mitigated|resolved"),
    ({"status": "resolved"}, "closing an incident needs a resolution: what fixed it, or the accepted outcome"),
    ({"status": "resolved", "resolution": "  "}, "closing an incident needs a resolution"),
    ({"affected": [{"scope": "a", "from": "b", "to": " "}]},
     "affected window needs scope, from and to (got scope='a' from='b' to=' ')"),
    ({"knowledge": ["Not A Slug"]}, "knowledge link 'Not A Slug' is not a valid key slug"),
    ({"resolution": "password: hunter2secret"}, "resolution looks like a secret"),
])
def test_incident_validation_rejects(store, changes, message):
    before = store.head_sha()
    with pytest.raises(Rejected) as err:
        inc(store, **changes)
    assert message in err.value.message
    assert store.head_sha() == before


def test_incident_key_needs_inc_prefix(store):
    with pytest.raises(Rejected, match="incident keys must start with 'inc-'"):
        inc(store, key="orders-oom")


def test_mitigated_needs_no_resolution_and_affected_format_is_free(store):
    reply = inc(store, status="mitigated", affected=[{"scope": "a", "from": "b", "to": "c"}])
    assert reply["action"] == "created"


def test_structure_hints_bare_report_gets_all_four_in_order(store):
    reply = inc(store, body="", detection="", affected=[])
    assert reply["hints"] == list(HINTS)


def test_structure_hints_complete_report_gets_none(store):
    assert "hints" not in inc(store)


def test_hints_only_when_a_commit_happened(store):
    inc(store, body="", detection="")
    assert inc(store, body="", detection="") == {"changed": False, "key": KEY}


def test_unknown_knowledge_is_reported_not_blocking(store):
    from kyb_cli.core.kinds.knowledge import add_knowledge

    add_knowledge(store, key="orders-arch", title="t", body="b", tags=[], refs=[], attribution=ATT)
    reply = inc(store, knowledge=["orders-arch", "not-written-yet"])
    assert reply["changed"] and reply["unknown_knowledge"] == ["not-written-yet"]


def test_detected_at_defaults_to_now_and_is_inherited_on_rewrite(store):
    inc(store, started_at="2026-07-22T07:00:00Z")
    first = reads.read(store, KEY).record
    assert first.detected_at.endswith("Z") and first.started_at == "2026-07-22T07:00:00Z"
    inc(store, title="Orders OOM again")
    again = reads.read(store, KEY).record
    assert (again.detected_at, again.started_at) == (first.detected_at, first.started_at)


def test_client_detected_at_is_taken(store):
    inc(store, detected_at="2026-07-22T07:05:00Z")
    assert reads.read(store, KEY).record.detected_at == "2026-07-22T07:05:00Z"


def test_mitigated_at_is_stamped_by_kyb(store):
    inc(store)
    assert reads.read(store, KEY).record.mitigated_at == ""
    resolve_incident(store, ATT, KEY, status="mitigated")
    stamped = reads.read(store, KEY).record
    assert stamped.status == "mitigated" and stamped.mitigated_at.endswith("Z")
    inc(store, status="open")  # a rewrite inherits the stamp
    assert reads.read(store, KEY).record.mitigated_at == stamped.mitigated_at


def test_mitigated_and_resolved_at_cannot_come_from_the_client(cli):
    res = cli("incident", "--key", KEY, "--title", "t", "--service", "s", "--severity", "low",
              "--resolved", "2020-01-01T00:00:00Z", input="x")
    assert res.code == 2 and res.stdout == ""


def test_closing_archives_in_a_second_commit(store):
    inc(store)
    reply = resolve_incident(store, ATT, KEY, resolution="raised the heap")
    assert reply["archived"] is True and reply["sha"] != reply["archive_sha"]
    head = store.head_commit()
    assert str(head.id) == reply["archive_sha"]
    assert head.message.startswith(f"kyb: archive {KEY}")
    assert str(head.parents[0].id) == reply["sha"]
    assert store.repo[reply["sha"]].message.startswith(f"kyb: resolve {KEY}")
    assert not (store.path / path_of_key(KEY)).exists()
    version = reads.read(store, KEY)
    assert version.state == "archived" and version.record.resolution == "raised the heap"
    assert version.record.resolved_at.endswith("Z")


def test_a_fresh_write_already_resolved_is_archived(store):
    reply = inc(store, status="resolved", resolution="auto-healed")
    assert reply["action"] == "created" and reply["archived"] is True
    assert reads.read(store, KEY).state == "archived"


def test_resolve_needs_a_resolution(store):
    inc(store)
    before = store.head_sha()
    with pytest.raises(Rejected, match="closing an incident needs a resolution"):
        resolve_incident(store, ATT, KEY)
    assert store.head_sha() == before


def test_closing_twice_never_wipes_a_resolution(store):
    inc(store)
    resolve_incident(store, ATT, KEY, resolution="raised the heap")
    stamped = reads.read(store, KEY).record.resolved_at
    assert resolve_incident(store, ATT, KEY) == {"changed": False, "key": KEY}
    assert resolve_incident(store, ATT, KEY, resolution="   ") == {"changed": False, "key": KEY}
    version = reads.read(store, KEY)
    assert version.record.resolution == "raised the heap" and version.record.resolved_at == stamped
    reply = resolve_incident(store, ATT, KEY, resolution="raised the heap; root cause was a leak")
    assert reply["archived"] and reads.read(store, KEY).record.resolution.endswith("leak")


def test_reopening_an_archived_incident_recreates_it(store):
    inc(store)
    resolve_incident(store, ATT, KEY, resolution="fixed")
    reply = resolve_incident(store, ATT, KEY, status="open")
    assert reply["action"] == "created" and "archived" not in reply
    assert reads.read(store, KEY).state == "active"


def test_resolve_errors(store):
    with pytest.raises(NotFound):
        resolve_incident(store, ATT, "inc-nope", resolution="x")
    with pytest.raises(Rejected, match="invalid|slug"):
        resolve_incident(store, ATT, "Bad Key", resolution="x")
    from kyb_cli.core.kinds.tasks import write_task

    write_task(store, ATT, key="task-x", title="t")
    with pytest.raises(Rejected, match="'task-x' is not an incident report"):
        resolve_incident(store, ATT, "task-x", resolution="x")


def test_open_followups_counted():
    assert open_followups(FOLLOWUP_BODY) == 2


def test_open_followups_on_close_give_a_warning_with_the_count(store):
    inc(store, body=FOLLOWUP_BODY + "\nroot cause: leak")
    reply = resolve_incident(store, ATT, KEY, resolution="fixed")
    assert reply["open_followups"] == 2
    assert reply["warning"] == "2 unfinished follow-up(s) (`- [ ]`) remain in the body — reassign or finish them"
    assert reads.read(store, KEY).state == "archived"


def test_close_without_open_followups_has_no_warning(store):
    inc(store)
    reply = resolve_incident(store, ATT, KEY, resolution="fixed")
    assert "warning" not in reply and "open_followups" not in reply


def test_rewrite_keeps_tags_it_omits_and_empty_clears_them(cli, store):
    args = ["incident", "--key", KEY, "--title", "t", "--service", "s", "--severity", "low"]
    assert cli(*args, "--tags", "db,oom", input="v1").code == 0
    assert cli(*args, input="v2").code == 0
    assert reads.read(store, KEY).record.tags == ["db", "oom"]
    assert cli(*args, "--tags", "", input="v3").code == 0
    assert reads.read(store, KEY).record.tags == []


def test_knowledge_links_stay_a_full_replace(store):
    inc(store, knowledge=["a", "b"])
    inc(store)
    assert reads.read(store, KEY).record.knowledge == []


def test_incident_template_prints_the_report_skeleton(cli):
    res = cli("incident", "--template")
    assert res.code == 0
    for part in ("## Symptom", "## Impact", "## Root cause (verified | suspected | unknown)", "SAFE",
                 "APPROVAL", "## Actions log", "- [ ]"):
        assert part in res.stdout


def test_incident_cli_requires_key_title_service_severity(cli):
    res = cli("incident", "--key", KEY, "--title", "t", input="x")
    assert (res.code, res.stdout) == (2, "")
    assert "--service" in res.stderr and "--severity" in res.stderr


def test_incident_bad_affected_json_is_a_usage_error(cli):
    res = cli("incident", "--key", KEY, "--title", "t", "--service", "s", "--severity", "low",
              "--affected", "[{oops", input="x")
    assert (res.code, res.stdout) == (2, "")
    assert "--affected is not valid JSON" in res.stderr and '"scope"' in res.stderr


def test_incident_cli_reads_body_from_stdin_and_replies_json(cli, store):
    res = cli("incident", "--key", KEY, "--title", "t", "--service", "s", "--severity", "low",
              "--hosts", "h1, h2", "--affected", '[{"scope":"orders","from":"a","to":"b"}]', input="body text")
    assert res.code == 0 and res.json["action"] == "created"
    record = reads.read(store, KEY).record
    assert (record.body, record.hosts, record.affected) == ("body text", ["h1", "h2"],
                                                            [{"scope": "orders", "from": "a", "to": "b"}])


def test_resolve_cli_takes_resolution_from_stdin(cli, store):
    inc(store)
    res = cli("resolve", KEY, input="restarted the pods")
    assert res.code == 0 and res.json["archived"] is True
    assert reads.read(store, KEY).record.resolution == "restarted the pods"


def test_resolve_at_a_terminal_asks_for_a_resolution_only_when_closing(kyb, store_path, store):
    """`--status mitigated` needs no resolution, so at a terminal it must not sit waiting for Ctrl-D."""
    from test_canon_contract import run_on_tty

    inc(store)
    env = {**kyb.env, "KYB_STORE": str(store_path)}
    code, _out, err = run_on_tty(["resolve", KEY, "--status", "mitigated"], env, timeout=15)
    assert code == 0 and "Ctrl-D" not in err, err
    assert reads.read(store, KEY).record.status == "mitigated"
    code, _out, err = run_on_tty(["resolve", KEY], env, typed=b"rolled back the deploy\n\x04", timeout=15)
    assert code == 0, err
    assert "type the resolution" in err and "--resolution TEXT" in err
    assert reads.read(store, KEY).record.resolution == "rolled back the deploy"


def test_resolve_cli_failure_leaves_stdout_empty(cli, store):
    inc(store)
    res = cli("resolve", KEY, "--resolution", "")
    assert (res.code, res.stdout) == (3, "")


# -- listings (rule "listings") ------------------------------------------------------------------------------

def _three(store):
    inc(store, key="inc-a", service="Orders_API")
    inc(store, key="inc-b", service="payments")
    resolve_incident(store, ATT, "inc-b", status="mitigated")
    inc(store, key="inc-c", service="orders_api", body=FOLLOWUP_BODY)
    resolve_incident(store, ATT, "inc-c", resolution="fixed")


def test_incidents_default_view_drops_archived(store):
    _three(store)
    rows = list_incidents(store)
    assert [r["key"] for r in rows] == ["inc-a", "inc-b"]
    assert all(r["archived"] is False for r in rows)


def test_incidents_all_includes_archived_final_version(store):
    _three(store)
    rows = list_incidents(store, include_archived=True)
    assert [r["key"] for r in rows] == ["inc-a", "inc-b", "inc-c"]
    closed = rows[-1]
    assert closed["archived"] is True and closed["state"] == "archived" and closed["resolution"] == "fixed"


def test_incidents_explicit_status_includes_archived(store):
    _three(store)
    assert [r["key"] for r in list_incidents(store, status="resolved")] == ["inc-c"]
    assert [r["key"] for r in list_incidents(store, status="mitigated")] == ["inc-b"]


def test_incidents_service_filter_ignores_case(store):
    _three(store)
    assert [r["key"] for r in list_incidents(store, service="ORDERS_api", include_archived=True)] == ["inc-a", "inc-c"]


def test_incidents_open_followups_filter_includes_archived(store):
    _three(store)
    rows = list_incidents(store, open_only_followups=True)
    assert [(r["key"], r["open_followups"]) for r in rows] == [("inc-c", 2)]


def test_incidents_order_status_rank_then_newest(store):
    inc(store, key="inc-old")
    inc(store, key="inc-mit")
    resolve_incident(store, ATT, "inc-mit", status="mitigated")
    inc(store, key="inc-new")
    assert [r["key"] for r in list_incidents(store)] == ["inc-new", "inc-old", "inc-mit"]
    assert [r["key"] for r in list_incidents(store, limit=1)] == ["inc-new"]


def test_incidents_cli_lists_json(cli, store):
    _three(store)
    res = cli("incidents", "--all", "--limit", "2")
    assert res.code == 0 and res.json["count"] == 2 and [r["key"] for r in res.json["incidents"]] == ["inc-a", "inc-b"]


def test_incidents_status_filter_outside_its_values_is_a_usage_error(cli, store):
    _three(store)
    res = cli("incidents", "--status", "closed")
    assert (res.code, res.stdout) == (2, "") and "open|mitigated|resolved" in res.stderr
    assert cli("incidents", "--status", "resolved").code == 0


def test_catalog_sees_a_plain_git_rm_as_archived(store):
    """Rule "archive vs retraction": a deletion by hand means the same as kyb's archive commit."""
    inc(store, key="inc-gone")
    repo = store.repo
    head = store.head_commit()
    from kyb_cli.core.canon.tree import apply_changes

    tree = apply_changes(repo, head.tree, {path_of_key("inc-gone"): None})  # what `git rm` leaves
    sig = pygit2.Signature("t", "t@t")
    repo.create_commit("HEAD", sig, sig, "git rm", tree, [head.id])
    rows = list_incidents(store, include_archived=True)
    assert [(r["key"], r["archived"]) for r in rows] == [("inc-gone", True)]
