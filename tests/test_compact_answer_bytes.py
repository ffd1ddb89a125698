"""A compact answer (a query without `full`) is an answer to choose from: 10 hits in 4 kB (issue 38).

The store looks like the generated 10k store (bench/gen_store.py) whose answer was 4,635 bytes, with
keys and titles longer than the longest of that answer (26 and 44 characters there): bodies of long sentences whose
question words come late, and a task and an incident beside the knowledge, whose unset fields (an empty
`resolution`, `due`, `hosts`, `hard: false`…) were what the answer grew by.
"""

from __future__ import annotations

import json

from kyb_cli import api

QUESTION = "postgres replica failover"
# What the issue lists: what an agent chooses by, in every hit (the freshness fields `review_by` and
# `verified` only when the record sets them).
LISTED = ("key", "title", "kind", "state", "sha", "strength", "found_by", "snippet", "is_head", "committed_at", "stale")
FILLER = ("Schema ingress oncall cron token timeout import token webhook alert metrics migration latency rollout "
          "session helm gateway backup nats worker index queue orders checkout payments billing")


def _body(i: int) -> str:
    """Two long sentences, the question's words late in the second: a snippet must reach for them."""
    return (f"{FILLER} number {i} of the fleet. {FILLER} then postgres replica {i} fails over to the standby "
            f"and the pager rings the oncall engineer of shard {i}.")


def _store(store) -> None:
    who = api.attribution("test", environ={})
    for i in range(8):
        api.add_knowledge(store, key=f"k{i:06d}-replica-failover-db",  # 27 characters
                          title=f"Postgres replica failover of checkout shard {i}",  # 46
                          body=_body(i), tags=["postgres", "replica"], refs=[], attribution=who)
    api.write_task(store, who, key="task-000001-replica-failover", title="Postgres replica failover drill of shard",
                   body=_body(8), priority="medium", assignee="eve")
    api.write_incident(store, who, key="inc-000001-replica-failover", title="Postgres replica failover outage shard",
                       body=_body(9), service="svc-checkout", severity="high", detection="Replica lag alert.")


def test_ten_compact_hits_fit_in_4_kib_and_carry_every_listed_field(cli, store):
    _store(store)
    out = cli("query", QUESTION, "--no-semantic", "--limit", "10")
    assert out.code == 0
    answer = out.json
    assert answer["count"] == 10 and {h["kind"] for h in answer["hits"]} == {"knowledge", "task", "incident"}
    assert len(out.stdout.encode()) <= 4096, len(out.stdout.encode())
    full = {h["key"]: h for h in cli("query", QUESTION, "--no-semantic", "--limit", "10", "--full").json["hits"]}
    for hit in answer["hits"]:
        assert all(name in hit for name in LISTED), hit
        assert len(hit["sha"]) == 40 and hit["is_head"] is True and hit["state"] == "active"
        assert {"postgres", "replica"} & set(hit["snippet"].lower().split()), hit["snippet"]  # what matched
        whole = full[hit["key"]]
        # nothing changed, only left out: the body and the rank score, and fields the record leaves unset
        assert {n: whole[n] for n in hit} == hit
        for name in set(whole) - set(hit):
            assert name in api.COMPACT_DROPS or whole[name] in ("", None, False, [], {}), (name, whole[name])
    task = next(h for h in answer["hits"] if h["kind"] == "task")
    assert task["priority"] == "medium" and task["assignee"] == "eve" and "resolution" not in task
    incident = next(h for h in answer["hits"] if h["kind"] == "incident")
    assert incident["detection"] == "Replica lag alert." and "hosts" not in incident


def test_a_field_a_compact_hit_may_leave_out_asked_by_name_brings_the_full_hits(cli, store):
    """`--fields key,resolution` when no hit sets it: the full hits answer (every row has the field),
    not a usage error saying the rows have no such field."""
    _store(store)
    out = cli("query", QUESTION, "--no-semantic", "--fields", "key,resolution,hard")
    assert out.code == 0, out.stderr
    rows = json.loads(out.stdout)["hits"]
    assert {h["resolution"] for h in rows if h["key"].startswith("task-")} == {""}
    assert {h["hard"] for h in rows if h["key"].startswith("task-")} == {False}


def test_compact_drops_what_the_rule_says_for_every_kind_of_value():
    """compact's quick test (`not v` first) drops exactly the fields the rule names: unset ("", [], {},
    null, false) outside COMPACT_KEEPS, never 0, 0.0 or an empty tuple; COMPACT_DROPS always."""
    from kyb_cli.api._query_op import COMPACT_DROPS, COMPACT_KEEPS, compact

    values = [None, False, True, 0, 0.0, 1, "", "x", [], ["a"], {}, {"a": 1}, (), 2.5]
    for as_of_event in (False, True):
        keep = COMPACT_KEEPS + (("effective_at",) if as_of_event else ())
        drop = [f for f in COMPACT_DROPS if not (as_of_event and f == "effective_at")]
        for value in values:
            hit = {name: value for name in (*COMPACT_KEEPS, *COMPACT_DROPS, "status", "due", "extra")}
            expected = {n: v for n, v in hit.items() if n not in drop and (
                n in keep or not (v is None or v is False or v == "" or v == [] or v == {}))}
            compact([hit], as_of_event=as_of_event)
            assert hit == expected and list(hit) == list(expected), (value, as_of_event)
