"""Tasks: rules "task rules", "task-only fields", "task resolved_at", rule "close with a resolution" (done), rule "task transitions" (task-status), parent cycles, keep-if-omitted fields,
get --at / history reconstruction, listings (rule "listings")."""

from __future__ import annotations

import pytest

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.errors import NotFound, Rejected
from kyb_cli.core.records.model import Record
from kyb_cli.core.kinds.tasks import close_task, list_tasks, transition_task, write_task
from kyb_cli.core.records.validate import validate
from kyb_cli.core.index import reads

ATT = Attribution("tester", "s1", "ws", "test")


def task(store, key="task-x", **kw):
    kw.setdefault("title", "Raise log retention")
    return write_task(store, ATT, key=key, **kw)


def rejected(store, fn, *args, match, **kw):
    before = store.head_sha()
    with pytest.raises(Rejected) as err:
        fn(store, *args, **kw)
    assert match in err.value.message
    assert store.head_sha() == before  # a rejected write changes nothing


# -- rule "task rules" matrices ---------------------------------------------------------------------------------

@pytest.mark.parametrize("status", ["open", "in_progress", "blocked", "done", "dropped"])
def test_task_status_lifecycle(store, status):
    reply = task(store, status=status, resolution="shipped" if status in ("done", "dropped") else "")
    assert reply["changed"]
    assert reads.read(store, "task-x").record.status == status


@pytest.mark.parametrize("status", ["wip", "", "in-progress", "mitigated"])
def test_bad_task_status_rejected(store, status):
    rejected(store, task, status=status, match="task status must be one of: open|in_progress|blocked|done|dropped")


@pytest.mark.parametrize("priority,ok", [
    ("", True), ("low", True), ("medium", True), ("high", True), ("critical", True),
    ("HIGH", False), ("urgent", False), ("  ", False), ("1", False),
])
def test_task_priority_validation(store, priority, ok):
    if ok:
        task(store, priority=priority)
        assert reads.read(store, "task-x").record.priority == priority
    else:
        rejected(store, task, priority=priority, match="task priority must be empty or one of: low|medium|high|critical")


def test_blocked_reason_belongs_to_blocked(store):
    rejected(store, task, status="in_progress", blocked_reason="waiting",
             match="blocked_reason belongs to status=blocked, not 'in_progress' — clear it or block the task")
    task(store, status="blocked")  # blocked without a reason is legal
    task(store, status="blocked", blocked_reason="vendor")
    assert reads.read(store, "task-x").record.blocked_reason == "vendor"


@pytest.mark.parametrize("status", ["done", "dropped"])
def test_terminal_status_needs_a_resolution(store, status):
    rejected(store, task, status=status, resolution=" ",
             match="closing a task needs a resolution: what came of it, or why it was dropped")


def test_live_statuses_need_no_resolution(store):
    for status in ("open", "in_progress", "blocked"):
        task(store, status=status)


@pytest.mark.parametrize("assignee,message", [
    ("   ", "assignee is blank — leave it out to mark the task unclaimed"),
    ("a" * 81, "assignee must be at most 80 chars — it is a short owner label, not a note"),
    ("agent\nb", "assignee must be a single line"),
    ("agent\rb", "assignee must be a single line"),
    ("ghp_abcdefghijklmnopqrstuvwxyz123456", "assignee looks like a secret"),
])
def test_task_assignee_validation(assignee, message):
    with pytest.raises(Rejected, match=message.split("(")[0][:30]):
        validate(Record(key="task-x", title="t", status="open", assignee=assignee))


def test_assignee_length_boundary(store):
    task(store, assignee="a" * 80)
    assert reads.read(store, "task-x").record.assignee == "a" * 80
    rejected(store, task, assignee="b" * 81, match="at most 80 chars")


def test_assignee_inner_spaces_fine_and_blank_write_is_unclaimed(store):
    task(store, assignee="release duty")
    assert reads.read(store, "task-x").record.assignee == "release duty"
    task(store, assignee="   ")
    assert reads.read(store, "task-x").record.assignee == ""


@pytest.mark.parametrize("parent,message", [
    ("task-", "parent_task must be empty or a valid task key starting with 'task-' (got 'task-')"),
    ("orders-notes", "parent_task must be empty or a valid task key starting with 'task-' (got 'orders-notes')"),
    ("inc-2026-x", "parent_task must be empty or a valid task key starting with 'task-'"),
    ("Task-A", "parent_task must be empty or a valid task key"),
    ("task-x", "a task cannot be its own parent ('task-x')"),
])
def test_task_parent_validation(store, parent, message):
    rejected(store, task, parent_task=parent, match=message)


def test_dangling_parent_is_allowed_and_reported(store):
    reply = task(store, parent_task="task-not-written-yet")
    assert reply["unknown_parent"] == "task-not-written-yet"
    assert reads.read(store, "task-x").record.parent_task == "task-not-written-yet"


def test_archived_parent_counts_as_known(store):
    task(store, key="task-parent")
    close_task(store, ATT, "task-parent", resolution="done")
    assert "unknown_parent" not in task(store, parent_task="task-parent")


def test_three_node_cycle_rejected_through_task(store):
    task(store, key="task-a", parent_task="task-c")
    task(store, key="task-b", parent_task="task-a")
    rejected(store, task, key="task-c", parent_task="task-b",
             match="parent_task would create a cycle containing 'task-c'")
    with pytest.raises(NotFound):
        reads.read(store, "task-c")


def test_three_node_cycle_rejected_through_task_status(store):
    task(store, key="task-a")
    task(store, key="task-b", parent_task="task-a")
    task(store, key="task-c", parent_task="task-b")
    rejected(store, transition_task, ATT, "task-a", status="in_progress", parent_task="task-c",
             match="parent_task would create a cycle containing 'task-a'")
    assert reads.read(store, "task-a").record.status == "open"


def test_cycle_check_walks_archived_versions(store):
    task(store, key="task-a")
    task(store, key="task-b", parent_task="task-a")
    close_task(store, ATT, "task-b", resolution="merged")
    rejected(store, transition_task, ATT, "task-a", status="open", parent_task="task-b",
             match="cycle containing 'task-a'")


def test_parent_pointing_into_an_existing_cycle_rejected(store):
    # a cycle made by hand (plain puts skip the chain check, as a hand edit would)
    with store.writing(ATT) as tx:
        tx.put(Record(key="task-p", title="p", status="open", parent_task="task-q"))
        tx.put(Record(key="task-q", title="q", status="open", parent_task="task-p"))
    rejected(store, task, key="task-z", parent_task="task-p",
             match="parent_task points into an existing task cycle at 'task-p'")


@pytest.mark.parametrize("kind_key", ["orders-notes", "inc-2026-x"])
@pytest.mark.parametrize("changes,message", [
    ({"priority": "high"}, "priority is a task-only field (got 'high' on kind"),
    ({"blocked_reason": "x"}, "blocked_reason is a task-only field (kind"),
    ({"assignee": "me"}, "assignee is a task-only field (kind"),
    ({"parent_task": "task-a"}, "parent_task is a task-only field (kind"),
    ({"due": "2026-12-15"}, "due is a task-only field (kind"),
])
def test_task_only_fields_rejected_elsewhere(kind_key, changes, message):
    extra = {"service": "s", "severity": "low", "status": "open"} if kind_key.startswith("inc-") else {}
    with pytest.raises(Rejected, match=message.replace("(", r"\(")):
        validate(Record(key=kind_key, title="t", **extra, **changes))


def test_task_key_needs_task_prefix(store):
    rejected(store, task, key="raise-retention", match="task keys must start with 'task-'")


# -- task-status (rule "task transitions") -------------------------------------------------------------------------------

def test_task_status_changes_only_what_it_names(store):
    task(store, body="the body", priority="high", assignee="agent-a", parent_task="task-p", tags=["ops"],
         knowledge=["retention"], refs=["doc"], due="2026-12-15", hard=True)
    reply = transition_task(store, ATT, "task-x", status="in_progress")
    assert (reply["status"], reply["assignee"]) == ("in_progress", "agent-a")
    r = reads.read(store, "task-x").record
    assert (r.title, r.body, r.priority, r.assignee, r.parent_task, r.tags, r.knowledge, r.refs, r.due, r.hard) == (
        "Raise log retention", "the body", "high", "agent-a", "task-p", ["ops"], ["retention"], ["doc"],
        "2026-12-15", True)


def test_task_status_empty_assignee_unclaims_and_blocked_reason_follows_status(store):
    task(store, assignee="agent-a")
    transition_task(store, ATT, "task-x", status="blocked", blocked_reason="vendor", assignee="")
    r = reads.read(store, "task-x").record
    assert (r.status, r.blocked_reason, r.assignee) == ("blocked", "vendor", "")
    transition_task(store, ATT, "task-x", status="open", blocked_reason="ignored")
    assert reads.read(store, "task-x").record.blocked_reason == ""


@pytest.mark.parametrize("status", ["done", "dropped"])
def test_task_status_refuses_terminal_with_a_pointer_to_done(store, status):
    task(store)
    rejected(store, transition_task, ATT, "task-x", status=status,
             match=f"'{status}' closes a task and needs an outcome — use `kyb done task-x`")


def test_task_status_rejections(store):
    task(store)
    rejected(store, transition_task, ATT, "task-x", status="wip", match="status must be one of: open|in_progress|blocked")
    with pytest.raises(NotFound):
        transition_task(store, ATT, "task-nope", status="open")


def test_task_status_never_archives_and_reopens_an_archived_task(store):
    task(store)
    close_task(store, ATT, "task-x", resolution="shipped")
    reply = transition_task(store, ATT, "task-x", status="in_progress", assignee="agent-b")
    assert reply["action"] == "created" and "archived" not in reply
    v = reads.read(store, "task-x")
    assert v.state == "active" and v.record.resolution == "shipped"  # transitions keep the outcome (rule "task resolved_at")


# -- done (rule "close with a resolution") ------------------------------------------------------------------------------------

def test_done_archives_in_a_second_commit(store):
    task(store)
    reply = close_task(store, ATT, "task-x", resolution="shipped in v2")
    head = store.head_commit()
    assert str(head.id) == reply["archive_sha"] and head.message.startswith("kyb: archive task-x")
    assert store.repo[reply["sha"]].message.startswith("kyb: close task-x")
    v = reads.read(store, "task-x")
    assert (v.state, v.record.status, v.record.resolution) == ("archived", "done", "shipped in v2")
    assert v.record.resolved_at.endswith("Z")


def test_dropped_needs_why(store):
    task(store)
    rejected(store, close_task, ATT, "task-x", status="dropped", match="closing a task needs a resolution")
    assert close_task(store, ATT, "task-x", status="dropped", resolution="superseded by task-y")["archived"]


def test_closing_a_task_twice_never_wipes_a_resolution(store):
    task(store)
    close_task(store, ATT, "task-x", resolution="shipped")
    assert close_task(store, ATT, "task-x") == {"changed": False, "key": "task-x"}
    assert reads.read(store, "task-x").record.resolution == "shipped"
    close_task(store, ATT, "task-x", status="dropped")
    v = reads.read(store, "task-x")
    assert (v.state, v.record.status, v.record.resolution) == ("archived", "dropped", "shipped")


def test_reopen_of_an_archived_task_recreates_it(store):
    task(store)
    close_task(store, ATT, "task-x", resolution="shipped")
    reply = task(store, status="open")
    assert reply["action"] == "created"
    v = reads.read(store, "task-x")
    assert v.state == "active" and v.record.resolved_at == ""  # a live wholesale write has no resolved_at


def test_done_on_an_incident_is_not_a_task(store):
    from kyb_cli.core.kinds.incidents import write_incident

    write_incident(store, ATT, key="inc-x", title="t", service="s", severity="low")
    rejected(store, close_task, ATT, "inc-x", resolution="x", match="'inc-x' is not a task")


def test_done_clears_blocked_reason(store):
    task(store, status="blocked", blocked_reason="vendor")
    close_task(store, ATT, "task-x", resolution="vendor shipped")
    assert reads.read(store, "task-x").record.blocked_reason == ""


def test_done_with_open_followups_warns_with_the_count(store):
    task(store, body="- [ ] docs\n- [ ] tests\n- [x] code")
    reply = close_task(store, ATT, "task-x", resolution="shipped")
    assert reply["open_followups"] == 2 and reply["warning"].startswith("2 unfinished follow-up(s)")


def test_done_cli_refuses_live_status_and_reads_stdin(cli, store):
    task(store)
    res = cli("done", "task-x", "--status", "open")
    assert (res.code, res.stdout) == (3, "")
    res = cli("done", "task-x", input="shipped it")
    assert res.code == 0 and res.json["archived"] is True
    assert reads.read(store, "task-x").record.resolution == "shipped it"


# -- keep-if-omitted (rules "tags kept if omitted", "deadline fields kept if omitted") --------------------------------------------------------------------

def test_rewrite_keeps_tags_and_deadline_fields_it_omits(cli, store):
    base = ["task", "--key", "task-x", "--title", "Renew cert"]
    assert cli(*base, "--tags", "tls", "--due", "2026-12-15", "--hard", "--remind-days", "10",
               "--expected", "2026-12-01", "--waits-on", "vendor quote", input="v1").code == 0
    assert cli(*base, input="v2").code == 0
    r = reads.read(store, "task-x").record
    assert (r.tags, r.due, r.hard, r.remind_days, r.expected, r.waits_on, r.body) == (
        ["tls"], "2026-12-15", True, 10, "2026-12-01", "vendor quote", "v2")


def test_rewrite_with_explicit_empty_values_clears_them(cli, store):
    base = ["task", "--key", "task-x", "--title", "Renew cert"]
    cli(*base, "--tags", "tls", "--due", "2026-12-15", "--hard", "--remind-days", "10", input="v1")
    res = cli(*base, "--tags", "", "--due", "", "--no-hard", "--remind-days", "", input="v1")
    assert res.code == 0, res.stderr
    r = reads.read(store, "task-x").record
    assert (r.tags, r.due, r.hard, r.remind_days) == ([], "", False, None)


def test_clearing_the_date_takes_kept_hard_and_remind_days_with_it(store):
    """`--due ''` removes the deadline; hard/remind_days kept from the stored version go with it."""
    task(store, due="2026-12-15", hard=True, remind_days=10)
    reply = task(store, due="")
    assert reply["changed"]
    r = reads.read(store, "task-x").record
    assert (r.due, r.hard, r.remind_days) == ("", False, None)
    task(store, expected="2026-12-01", waits_on="vendor", remind_days=5)
    task(store, expected="", waits_on="")
    r = reads.read(store, "task-x").record
    assert (r.expected, r.waits_on, r.remind_days) == ("", "", None)
    rejected(store, task, hard=True, match="hard qualifies a date")  # given explicitly: still refused


def test_moving_a_date_is_a_new_version(store):
    task(store, due="2026-12-15")
    reply = task(store, due="2026-12-20")
    assert reply["action"] == "updated"
    assert [row.change for row in reads.history(store, "task-x")] == ["modified", "added"]


def test_task_knowledge_links_stay_a_full_replace(store):
    task(store, knowledge=["a"])
    task(store)
    assert reads.read(store, "task-x").record.knowledge == []


@pytest.mark.parametrize("changes,message", [
    ({"due": "15.12.2026"}, "due must be a date YYYY-MM-DD (got '15.12.2026')"),
    ({"due": "2026-02-30"}, "due must be a date YYYY-MM-DD"),
    ({"expected": "2026-12-01"}, "expected is a provisional date — say what it waits on (waits_on)"),
    ({"waits_on": "vendor"}, "waits_on belongs to a provisional date"),
    ({"due": "2026-12-15", "remind_days": -1}, "remind_days must be between 0 and"),
    ({"hard": True}, "hard qualifies a date — set due (or expected) too"),
    ({"remind_days": 3}, "remind_days qualifies a date"),
])
def test_deadline_fields_validation(store, changes, message):
    rejected(store, task, match=message, **changes)


def test_remind_days_must_be_a_number_on_the_cli(cli):
    res = cli("task", "--key", "task-x", "--title", "t", "--due", "2026-12-15", "--remind-days", "soon")
    assert (res.code, res.stdout) == (2, "")


# -- get --at / history (TMP-8) ------------------------------------------------------------------------

def test_get_at_and_history_reconstruct_who_held_a_task_in_which_status(cli, store):
    shas = [task(store)["sha"]]
    shas.append(transition_task(store, ATT, "task-x", status="in_progress", assignee="agent-a")["sha"])
    shas.append(transition_task(store, ATT, "task-x", status="blocked", blocked_reason="vendor")["sha"])
    shas.append(transition_task(store, ATT, "task-x", status="in_progress", assignee="agent-b")["sha"])
    shas.append(close_task(store, ATT, "task-x", resolution="shipped")["sha"])
    expected = [("open", ""), ("in_progress", "agent-a"), ("blocked", "agent-a"), ("in_progress", "agent-b"),
                ("done", "agent-b")]
    for sha, (status, assignee) in zip(shas, expected):
        res = cli("get", "task-x", "--at", sha[:12])
        assert res.code == 0
        assert (res.json["status"], res.json["assignee"]) == (status, assignee)
    res = cli("history", "task-x")
    rows = res.json["versions"]
    assert [r["change"] for r in rows] == ["deleted", "modified", "modified", "modified", "modified", "added"]
    assert [r["sha"] for r in rows[1:]] == list(reversed(shas))
    assert rows[0]["message"] == "kyb: archive task-x" and rows[1]["message"] == "kyb: close task-x"
    assert all(r["agent"] == "tester" for r in rows)


# -- listings (rule "listings") ---------------------------------------------------------------------------------

def _tasks(store):
    task(store, key="task-a", priority="high", assignee="Agent-A", due="2026-12-01")
    task(store, key="task-b", status="blocked", parent_task="task-a")
    task(store, key="task-c", status="in_progress", assignee="agent-a", parent_task="task-a", due="2026-12-20")
    task(store, key="task-d", body="- [ ] leftover")
    close_task(store, ATT, "task-d", resolution="done")
    task(store, key="task-e")


def test_tasks_order_status_rank_then_newest_and_default_drops_archived(store):
    _tasks(store)
    assert [r["key"] for r in list_tasks(store)] == ["task-e", "task-a", "task-c", "task-b"]
    assert [r["key"] for r in list_tasks(store, include_archived=True)][-1] == "task-d"


def test_tasks_filters_are_exact(store):
    _tasks(store)
    assert [r["key"] for r in list_tasks(store, priority="high")] == ["task-a"]
    assert [r["key"] for r in list_tasks(store, assignee="agent-a")] == ["task-c"]
    assert [r["key"] for r in list_tasks(store, assignee=" Agent-A ")] == ["task-a"]
    assert [r["key"] for r in list_tasks(store, parent="task-a")] == ["task-c", "task-b"]
    assert [r["key"] for r in list_tasks(store, status="done")] == ["task-d"]


def test_tasks_open_followups_include_archived(store):
    _tasks(store)
    rows = list_tasks(store, open_only_followups=True)
    assert [(r["key"], r["archived"], r["open_followups"]) for r in rows] == [("task-d", True, 1)]


def test_tasks_due_before_is_inclusive(store):
    from datetime import date

    _tasks(store)
    assert [r["key"] for r in list_tasks(store, due_before=date(2026, 12, 1))] == ["task-a"]
    assert [r["key"] for r in list_tasks(store, due_before=date(2026, 12, 31))] == ["task-a", "task-c"]


def test_tasks_limit_default_and_cap(store):
    """A limit over the listing maximum is a usage error in the core too (every door), never a silent cut."""
    from kyb_cli.core.errors import UsageError

    _tasks(store)
    assert len(list_tasks(store, limit=2)) == 2
    assert len(list_tasks(store, limit=200, include_archived=True)) == 5
    with pytest.raises(UsageError, match="between 0 and 200"):
        list_tasks(store, limit=10_000, include_archived=True)


def test_tasks_cli_lists_and_rejects_bad_due_before(cli, store):
    _tasks(store)
    res = cli("tasks", "--parent", "task-a")
    assert res.code == 0 and [r["key"] for r in res.json["tasks"]] == ["task-c", "task-b"]
    res = cli("tasks", "--due-before", "friday")
    assert (res.code, res.stdout) == (2, "")


def test_tasks_filter_outside_its_values_is_a_usage_error(cli, store):
    """A typo in --status/--priority is exit 2 naming the values, never an empty list that looks like an answer."""
    task(store)
    for args in (("--status", "wip"), ("--status", "in-progress"), ("--priority", "urgent"), ("--priority", "HIGH")):
        res = cli("tasks", *args)
        assert (res.code, res.stdout) == (2, ""), args
        assert "must be one of" in res.stderr
    assert cli("tasks", "--status", "open", "--priority", "").code == 0


def test_task_status_cli_reply(cli, store):
    task(store)
    res = cli("task-status", "task-x", "--status", "in_progress", "--assignee", "agent-a")
    assert res.code == 0 and (res.json["status"], res.json["assignee"]) == ("in_progress", "agent-a")
    res = cli("task-status", "task-x", "--status", "done")
    assert (res.code, res.stdout) == (3, "") and "kyb done task-x" in res.stderr
