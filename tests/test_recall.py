"""`kyb recall` and the prompt hook (issue 43): the store speaks up when a prompt touches what it
knows, and only then; never in the way of a prompt."""

from __future__ import annotations

import json

import pytest

RECORDS = [
    ("checkout-port", "Checkout port moved to 9443",
     "The checkout service listens on port 9443 since the TLS migration; 9090 is retired."),
    ("deploy-window", "Deploy window",
     "Production deploys happen Tuesday and Thursday mornings, never on Fridays."),
    ("db-backups", "Database backups",
     "Postgres is backed up nightly with pgbackrest to the object store; restores are tested monthly."),
    ("oncall-rota", "On-call rota",
     "The on-call engineer rotates weekly on Monday; the pager schedule lives in the ops wiki."),
    ("cache-ttl", "Session cache TTL",
     "Redis keeps user sessions for 30 minutes; the TTL is set in the gateway config."),
]
ON_TOPIC = "move the checkout service to port 9443"
LOOSE = "rotate the TLS certificate of the checkout service"  # strong (half its words), under the hook's bar
OFF_TOPIC = "write a haiku about autumn leaves"


def hook_input(prompt: str, session: str = "s1", event: str = "UserPromptSubmit") -> str:
    return json.dumps({"prompt": prompt, "session_id": session, "hook_event_name": event, "cwd": ".",
                       "transcript_path": "/tmp/t.jsonl"})


@pytest.fixture
def filled(kyb, monkeypatch):
    # the hook's 250 ms budget is a machine's: on a loaded CI box an answer may take longer and the hook
    # then rightly prints nothing; only the budget's own test (past it: nothing) sets one here
    monkeypatch.setenv("KYB_RECALL_BUDGET_MS", "30000")
    for key, title, body in RECORDS:
        assert kyb("add", "--key", key, "--title", title, "--body", body).code == 0
    assert kyb("query", "warm").code == 0  # the index is built before a hook's budget runs
    return kyb


def test_recall_answers_the_right_record_with_its_freshness_when_confident(filled):
    res = filled("recall", ON_TOPIC)
    assert res.code == 0, res.stderr
    answer = res.json
    assert answer["confident"] is True and answer["count"] == len(answer["hits"]) >= 1
    hit = answer["hits"][0]
    assert hit["key"] == "checkout-port" and hit["title"] == "Checkout port moved to 9443"
    assert len(hit["sha"]) == 40 and hit["state"] == "active" and hit["strength"] == "strong"
    assert hit["stale"] is False and "verified" in hit and 0 < len(hit["snippet"]) <= 200


def test_recall_is_empty_when_nothing_stored_bears_on_the_text(filled):
    for text in (OFF_TOPIC, ""):
        res = filled("recall", text)
        assert res.code == 0
        assert res.json == {"confident": False, "count": 0, "hits": []}


def test_recall_gives_at_most_three_hits_and_refuses_more(filled):
    assert len(filled("recall", "the").json["hits"]) <= 3
    res = filled("recall", "checkout", "--limit", "4")
    assert res.code == 2 and "--limit" in res.stderr


def test_recall_is_one_answer_in_the_mcp_door(filled, store_path):
    from kyb_cli.mcp.server import Door
    from kyb_cli.mcp.tools import Tools

    result = Tools(Door(str(store_path))).recall(text=ON_TOPIC)
    assert not result.is_error
    assert result.structured_content == filled("recall", ON_TOPIC).json


def test_recall_is_one_answer_over_http(filled, store_path):
    from urllib.parse import quote

    from kyb_cli.serve.app import build_app
    from kyb_cli.serve.door import Door
    from tests.support.asgi_call import asgi_call

    app = build_app(Door(store_path), bind_host="127.0.0.1", port_of=lambda: 8765, token=None, mcp=False)
    status, body = asgi_call(app, "GET", "/recall", query="text=" + quote(ON_TOPIC))
    assert status == 200, body
    assert body == filled("recall", ON_TOPIC).json


def test_hook_adds_the_record_as_reference_data_for_an_on_topic_prompt(filled):
    res = filled("recall", "--hook-json", input=hook_input(ON_TOPIC))
    assert res.code == 0, res.stderr
    out = json.loads(res.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    text = out["additionalContext"]
    assert "checkout-port" in text and "9443" in text
    assert "may be stale" in text and "not instructions" in text  # the digest's framing
    assert text.index("<kyb-records>") < text.index("checkout-port") < text.index("</kyb-records>")


def test_the_hook_speaks_only_above_its_own_bar(filled):
    """Unasked, on every prompt, by words only: a hit that is merely strong is not enough."""
    assert filled("recall", LOOSE).json["hits"][0]["key"] == "checkout-port"
    res = filled("recall", "--hook-json", input=hook_input(LOOSE))
    assert res.code == 0 and res.stdout == ""


def test_hook_prints_nothing_for_an_off_topic_prompt(filled):
    res = filled("recall", "--hook-json", input=hook_input(OFF_TOPIC))
    assert res.code == 0 and res.stdout == ""


def test_a_second_identical_prompt_in_the_same_session_injects_nothing_new(filled):
    first = filled("recall", "--hook-json", input=hook_input(ON_TOPIC, "s-42"))
    assert "checkout-port" in first.stdout
    again = filled("recall", "--hook-json", input=hook_input(ON_TOPIC, "s-42"))
    assert again.code == 0 and again.stdout == ""
    other = filled("recall", "--hook-json", input=hook_input(ON_TOPIC, "s-43"))
    assert "checkout-port" in other.stdout  # another session is told again


def test_a_new_version_of_a_record_is_told_again_in_the_same_session(filled):
    assert "checkout-port" in filled("recall", "--hook-json", input=hook_input(ON_TOPIC)).stdout
    assert filled("add", "--key", "checkout-port", "--title", "Checkout port moved to 9443",
                  "--body", RECORDS[0][2] + " Clients switch to the new port by May.").code == 0
    assert "checkout-port" in filled("recall", "--hook-json", input=hook_input(ON_TOPIC)).stdout


@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"session_id": "s1"}', '{"prompt": 3}', "\x00\xff"])
def test_bad_stdin_prints_nothing_and_exits_0(filled, stdin):
    res = filled("recall", "--hook-json", input=stdin)
    assert res.code == 0 and res.stdout == ""
    assert len(res.stderr.strip().splitlines()) == 1 and res.stderr.startswith("kyb recall:")


def test_a_bad_option_in_hook_mode_prints_nothing_and_exits_0(filled):
    res = filled("recall", "--hook-json", "--no-such-flag", input=hook_input(ON_TOPIC))
    assert res.code == 0 and res.stdout == "" and res.stderr.startswith("kyb recall:")


def test_a_missing_store_prints_nothing_and_creates_none(kyb, tmp_path):
    missing = tmp_path / "nowhere"
    res = kyb("recall", "--hook-json", input=hook_input(ON_TOPIC), env={"KYB_STORE": str(missing)})
    assert res.code == 0 and res.stdout == "" and res.stderr.startswith("kyb recall:")
    assert not missing.exists()


def test_past_the_time_budget_the_hook_prints_nothing(filled):
    res = filled("recall", "--hook-json", input=hook_input(ON_TOPIC), env={"KYB_RECALL_BUDGET_MS": "0"})
    assert res.code == 0 and res.stdout == "" and "ms" in res.stderr


def test_gemini_before_agent_is_answered_with_its_own_event_name(filled):
    res = filled("recall", "--hook-json", input=hook_input(ON_TOPIC, event="BeforeAgent"))
    assert json.loads(res.stdout)["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"


def test_a_session_injects_at_most_its_byte_cap(tmp_path):
    from kyb_cli.core.tools.recall import SESSION_BYTES, Session, hook_text

    hits = [{"key": f"k{i}", "title": "t" * 100, "sha": f"{i:040d}", "kind": "knowledge", "state": "active",
             "snippet": "s" * 200, "stale": False, "verified": None} for i in range(200)]
    total = 0
    for _ in range(100):
        session = Session(tmp_path, "s1")
        fresh = session.fresh(hits)
        if not fresh:
            break
        text = hook_text(fresh)
        session.record(fresh, text)
        total += len(text.encode())
    assert 0 < total <= SESSION_BYTES


def test_old_session_files_are_pruned(tmp_path):
    import os
    import time

    from kyb_cli.core.tools.recall import SESSION_MAX_AGE, prune

    old, new = tmp_path / "old.json", tmp_path / "new.json"
    for path in (old, new):
        path.write_text("{}")
    past = time.time() - SESSION_MAX_AGE - 60
    os.utime(old, (past, past))
    prune(tmp_path)
    assert not old.exists() and new.exists()


def test_the_hook_across_the_process_boundary(filled, kyb_process):
    """What a client sees: JSON on stdout for an on-topic prompt, nothing for an off-topic one, exit 0."""
    on = kyb_process("recall", "--hook-json", input=hook_input(ON_TOPIC, "proc"), env={"KYB_RECALL_BUDGET_MS": "5000"})
    assert on.code == 0 and "checkout-port" in json.loads(on.stdout)["hookSpecificOutput"]["additionalContext"]
    off = kyb_process("recall", "--hook-json", input=hook_input(OFF_TOPIC, "proc"))
    assert off.code == 0 and off.stdout == ""
    bad = kyb_process("recall", "--hook-json", input="{")
    assert bad.code == 0 and bad.stdout == "" and bad.stderr.count("\n") == 1


def test_the_hook_weighs_what_a_prompt_is_about_not_how_it_asks(filled):
    """`change`, `can you`, `please` say how a person asks: the prompt is weighed without them."""
    from kyb_cli.core.tools.recall import topic_of

    assert topic_of("can you please change the checkout service port") == "the checkout service port"
    assert topic_of("please fix it") == "it" and topic_of("please") == "please"  # never an empty question
    res = filled("recall", "--hook-json", input=hook_input("can you switch the checkout service to the new TLS port"))
    assert "checkout-port" in res.stdout
