"""Lexical search: tokenizer cases, garbage text, ranking, filters, limit, response shape, export."""

from __future__ import annotations

import csv
import io
import json

import pytest

from kyb_cli.core.index.slice import Filters
from kyb_cli.core.search.syntax import query_plan
from tests.support.index_helpers import T0, keys, put, query, remove


def match_expression(text: str) -> str | None:
    """The MATCH string the pipeline ranks by for `text` (search/syntax.query_plan)."""
    return query_plan(text)[1].match


def _add(cli, key, title, body, tags="x"):
    res = cli("add", "--key", key, "--title", title, "--tags", tags, "--body", body)
    assert res.code == 0, res.stderr
    return res.json["sha"]


def test_seed_002_port_moved_lexical_checks(cli):
    old = _add(cli, "checkout-write-path", "Checkout write path",
               "Checkout writes go through svc-checkout on node-3, port 8080.", "infra,checkout")
    _add(cli, "checkout-write-path", "Checkout write path",
         "Checkout writes go through svc-checkout on node-3, port 9090.", "infra,checkout")
    now = cli("query", "8080", "--no-semantic", "--limit", "5")
    assert now.code == 0 and now.json["count"] == 0 and now.json["semantic"] is False
    past = cli("query", "8080", "--history", "--limit", "5").json
    assert [(h["key"], h["sha"], h["is_head"]) for h in past["hits"]] == [("checkout-write-path", old, False)]


def test_response_shape(cli):
    _add(cli, "svc", "Service", "port 9090")
    d = cli("query", "9090").json
    assert set(d) >= {"count", "hits", "semantic", "mode", "head"} and d["mode"] == "current"
    hit = d["hits"][0]
    assert list(hit)[:3] == ["key", "title", "kind"]  # compact: a snippet, not the body, nor lists to choose by
    assert not {"body", "tags", "refs", "effective_at", "score"} & set(hit) and len(hit["snippet"]) <= 72
    assert not {"review_by", "verified"} & set(hit)  # unset fields: nothing to say (COMPACT_KEEPS are always there)
    assert list(cli("query", "9090", "--full").json["hits"][0])[:5] == ["key", "title", "kind", "body", "tags"]
    assert "effective_at" in cli("query", "9090", "--as-of-event", "2030-01-01").json["hits"][0]  # its mode's field
    assert "tags" in cli("query", "9090", "--fields", "key,tags").json["hits"][0]
    for name in ("sha", "committed_at", "state", "is_head", "stale", "strength", "found_by", "snippet"):
        assert name in hit
    assert "score" in cli("query", "9090", "--fields", "key,score").json["hits"][0]
    assert cli("add", "--key", "reviewed", "--title", "Reviewed 9090", "--body", "port 9090 again",
               "--review-by", "2031-01-01").code == 0
    assert cli("query", "9090", "--fields", "key,review_by").json["hits"][0]["review_by"] == "2031-01-01"
    assert {h["key"]: h.get("review_by") for h in cli("query", "9090").json["hits"]} == {
        "reviewed": "2031-01-01", "svc": None}  # set: shown in the compact hit too
    assert len(d["head"]) == 40 and hit["committed_at"].endswith("+00:00")


# -- tokenizer evaluation cases (docs/SEARCH.md "Tokenizer choice" explains it) -------------

CORPUS = {
    "checkout-path": ("Checkout write path", "Writes go through svc-checkout on node-3, port 9090."),
    "orders-service": ("Orders service", "The orders_api service answers on 18080 and deploys via helm."),
    "ru-streams": ("Стримы в NATS", "Все стримах настроены в терраформе, реестр образов в докере, деплоя нет."),
    "yo": ("Ёлка", "Настройки ёмкости очереди."),
}


@pytest.fixture
def corpus(store_path):
    for i, (key, (title, body)) in enumerate(CORPUS.items()):
        put(store_path, key, title, body, T0 + i)
    return store_path


@pytest.mark.parametrize("text,expected", [
    ("svc-checkout", "checkout-path"),      # the identifier as written
    ("svc checkout", "checkout-path"),      # and spelled out
    ("9090", "checkout-path"),              # a port is a token
    ("orders_api", "orders-service"),       # underscore identifier
    ("orders api", "orders-service"),
    ("deploy", "orders-service"),           # English stemming: deploys ~ deploy
    ("стримы", "ru-streams"),               # Russian inflection: стримах ~ стримы
    ("терраформ", "ru-streams"),            # терраформе ~ терраформ
    ("реестра", "ru-streams"),              # реестр ~ реестра
    ("докер", "ru-streams"),
    ("деплой", "ru-streams"),               # деплоя ~ деплой
    ("елка", "yo"),                         # ё folds to е
    ("ёмкость", "yo"),
    ("NATS", "ru-streams"),                 # case folding
])
def test_tokenizer_cases_find_expected_record(corpus, text, expected):
    assert keys(query(corpus, text))[:1] == [expected]


@pytest.mark.parametrize("text", ["8080", "9999", "checkouts-svc-path-nothing"])
def test_tokenizer_numbers_match_whole_tokens_only(corpus, text):
    # 18080 must not match 8080 (no substring matching); a phrase must match in order.
    assert "checkout-path" not in keys(query(corpus, text)) or text == "checkouts-svc-path-nothing"
    assert "orders-service" not in keys(query(corpus, text))


GARBAGE = ['"unclosed', "title:(((", "AND OR NOT", "*", "-dash", "^boost^^", "~~~", "NEAR(a b)",
           "a AND", "OR", "\"\"", "🎉🔥", "col:val", "'; DROP TABLE versions; --", "(((", ")", "+-*/",
           "NOT 9090", "svc-checkout*", "x" * 500, "a " * 200, "\x00\x01", "%_%", "\\"]


@pytest.mark.parametrize("text", GARBAGE)
def test_garbage_queries_never_error(corpus, cli, text):
    for mode_args in ([], ["--history"], ["--as-of", "2030-01-01"], ["--changed-between", "2020-01-01", "2030-01-01"]):
        res = cli("query", text, *mode_args)
        assert res.code == 0, (text, mode_args, res.stderr)
        assert isinstance(res.json["hits"], list)


def test_match_expression_quotes_every_token():
    assert match_expression('title:((( AND "x') == '"title" AND "x"'
    assert match_expression("🎉 *") is None


def test_title_ranks_above_body(store_path):
    put(store_path, "in-body", "Something else", "kafka kafka is mentioned here", T0)
    put(store_path, "in-title", "Kafka retention", "retention settings", T0 + 1)
    assert keys(query(store_path, "kafka"))[0] == "in-title"


def test_empty_query_lists_newest_first(store_path):
    for i in range(3):
        put(store_path, f"k{i}", f"K{i}", "text", T0 + i)
    put(store_path, "k0", "K0", "text updated", T0 + 10)
    assert keys(query(store_path, "")) == ["k0", "k2", "k1"]


def test_recent_orders_by_revision_not_relevance(store_path):
    put(store_path, "dense", "Redis", "redis redis redis", T0)
    put(store_path, "sparse", "Notes", "mentions redis once", T0 + 1)
    assert keys(query(store_path, "redis"))[0] == "dense"
    assert keys(query(store_path, "redis", recent=True)) == ["sparse", "dense"]


def test_limit_default_ten_max_hundred(cli, store_path):
    for i in range(12):
        put(store_path, f"k{i}", f"K{i}", "common words", T0 + i)
    assert cli("query", "common").json["count"] == 10
    assert cli("query", "common", "--limit", "0").code == 2  # limits are 1..max (issue 37, item 5)
    assert cli("query", "common", "--limit", "100").json["count"] == 12
    assert cli("query", "common", "--limit", "101").code == 2


def test_modes_are_exclusive(cli):
    res = cli("query", "x", "--history", "--as-of", "2026-01-01")
    assert res.code == 2 and res.stdout == ""


def test_changed_between_start_after_end_is_usage_error(cli):
    assert cli("query", "x", "--changed-between", "2026-02-01", "2026-01-01").code == 2


@pytest.fixture
def mixed(store_path):
    put(store_path, "k-infra", "Infra note", "network", T0, tags=["Infra", "Network"])
    put(store_path, "k-net", "Net note", "network", T0 + 1, tags=["network"])
    put(store_path, "inc-db", "DB outage", "network", T0 + 2, service="Orders_API", severity="high", status="open")
    put(store_path, "task-a", "Task A", "network", T0 + 3, status="open", priority="high", assignee="Agent-A")
    put(store_path, "task-b", "Task B", "network", T0 + 4, status="blocked", priority="low", assignee="bob",
        parent_task="task-a")
    return store_path


@pytest.mark.parametrize("filters,expected", [
    (Filters(tags=["network"]), {"k-infra", "k-net"}),
    (Filters(tags=["INFRA", "network"]), {"k-infra"}),     # AND, case-insensitive
    (Filters(kind="incident"), {"inc-db"}),
    (Filters(service="orders_api"), {"inc-db"}),          # case-insensitive
    (Filters(status="open"), {"inc-db", "task-a"}),
    (Filters(priority="high"), {"task-a"}),
    (Filters(assignee="Agent-A"), {"task-a"}),
    (Filters(assignee="agent-a"), set()),                  # assignee is exact
    (Filters(parent="task-a"), {"task-b"}),
])
def test_filters(mixed, filters, expected):
    assert set(keys(query(mixed, "network", filters=filters, limit=100))) == expected


def test_tag_option_accepts_repeat_and_comma_list(mixed, cli):
    assert keys(cli("query", "--tag", "infra,NETWORK").json) == ["k-infra"]
    assert keys(cli("query", "--tag", "infra", "--tag", "network").json) == ["k-infra"]


def test_kind_fields_are_searchable_and_returned(mixed):
    hits = query(mixed, "orders api")["hits"]
    assert hits[0]["key"] == "inc-db" and hits[0]["service"] == "Orders_API" and hits[0]["severity"] == "high"


def test_semantic_flag_exists_and_reports_false(cli):
    _add(cli, "svc", "Service", "port 9090")
    assert cli("query", "9090", "--semantic").json["semantic"] is False


# -- export -------------------------------------------------------------------------------------

@pytest.fixture
def lifecycle(store_path):
    first = put(store_path, "live", "Live", "v1", T0)
    put(store_path, "live", "Live", "v2", T0 + 1)
    put(store_path, "wrong", "Wrong", "bad fact", T0 + 2)
    put(store_path, "inc-x", "Inc X", "outage", T0 + 3, service="s", severity="low", status="resolved")
    at = put(store_path, "task-y", "Task Y", "work", T0 + 4, status="open")
    remove(store_path, "wrong", T0 + 5)
    remove(store_path, "inc-x", T0 + 6)
    return {"first": first, "at": at}


def test_export_states_at_head(lifecycle, cli):
    res = cli("export")
    rows = {r["key"]: r for r in map(json.loads, res.stdout.splitlines())}
    assert {k: (r["state"], r["body"]) for k, r in rows.items()} == {
        "live": ("active", "v2"), "wrong": ("retracted", "bad fact"), "inc-x": ("archived", "outage"),
        "task-y": ("active", "work")}
    assert rows["wrong"]["retracted_sha"] and rows["inc-x"]["archived_sha"]


def test_export_at_revision(lifecycle, cli):
    rows = json.loads(cli("export", "--at", lifecycle["at"], "--format", "json").stdout)
    assert {r["key"]: r["state"] for r in rows} == {"live": "active", "wrong": "active", "inc-x": "active",
                                                    "task-y": "active"}
    assert [r["body"] for r in rows if r["key"] == "live"] == ["v2"]
    first = json.loads(cli("export", "--at", lifecycle["first"], "--format", "json").stdout)
    assert [(r["key"], r["body"]) for r in first] == [("live", "v1")]


def test_export_csv(lifecycle, cli):
    rows = list(csv.DictReader(io.StringIO(cli("export", "--format", "csv").stdout)))
    assert {r["key"]: r["state"] for r in rows}["inc-x"] == "archived"


def test_export_unknown_revision_is_not_found(lifecycle, cli):
    res = cli("export", "--at", "deadbeef")
    assert res.code == 1 and res.stdout == ""


# -- function words (tokens.is_function_word; measured with bench/eval_search.py) ----------------------

def test_function_words_are_left_out_when_a_content_word_remains():
    assert match_expression("how do we rotate the certificates?") == '"rotate" OR "certificates"'
    assert match_expression("где живёт монга") == '"живет" * OR "монг" *'
    assert match_expression("Wie lange werden Logs aufbewahrt?") == '"lange" OR "logs" OR "aufbewahrt"'
    assert match_expression("¿cada cuánto se generan las facturas?") == '"generan" OR "facturas"'


def test_question_made_only_of_function_words_keeps_them():
    assert match_expression("how do") == '"how" OR "do"'
    assert match_expression("где") == '"где" *'


def test_identifiers_and_numbers_are_never_function_words():
    assert match_expression("the 9090") == '"9090"'
    assert match_expression("how is it-ops deployed") == '"it ops" OR "deployed"'
    assert match_expression("us os es") == '"us" OR "os" OR "es"'  # region, OS, Elasticsearch


def test_function_word_does_not_outrank_the_meaning(store_path):
    put(store_path, "log-retention", "How long logs are kept", "Logs are kept 14 days.", T0)
    put(store_path, "tls-cert-rotation", "Certificate renewal", "Certificates rotate 30 days before expiry.", T0 + 1)
    assert keys(query(store_path, "how do we rotate certificates")) == ["tls-cert-rotation"]
    assert keys(query(store_path, "how")) == ["log-retention"]
