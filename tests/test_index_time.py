"""The four questions about time (seed 000 "One Port, Different Questions", TMP-1..5)."""

from __future__ import annotations

import pytest

from kyb_cli.core.errors import UsageError
from kyb_cli.core.index.slice import Filters
from kyb_cli.core.timeargs import END, START, parse_time
from tests.support.index_helpers import T0, keys, put, query, remove

DAY = 86_400


def test_slice_then_match_pr17_regression(store_path):
    r1 = put(store_path, "service-api", "Service API port", "service-api listens on port 8080", T0)
    r2 = put(store_path, "service-api", "Service API port", "service-api listens on port 9090", T0 + 100)
    between = query(store_path, "8080", mode="as_of", as_of=T0 + 50)
    assert [(h["sha"], h["is_head"]) for h in between["hits"]] == [(r1, False)]
    # After R2 the slice holds R2, which no longer says 8080: nothing, not the old text.
    assert query(store_path, "8080", mode="as_of", as_of=T0 + 200)["count"] == 0
    after = query(store_path, "9090", mode="as_of", as_of=T0 + 200)
    assert [(h["sha"], h["is_head"]) for h in after["hits"]] == [(r2, True)]


def test_as_of_before_first_version_finds_nothing(store_path):
    put(store_path, "service-api", "Service API", "port 8080", T0)
    assert query(store_path, "8080", mode="as_of", as_of=T0 - 1)["count"] == 0


def test_as_of_retraction_recorded_before_t_hides_key(store_path):
    put(store_path, "wrong-fact", "Wrong fact", "the cache is memcached", T0)
    remove(store_path, "wrong-fact", T0 + 10)
    assert query(store_path, "memcached", mode="as_of", as_of=T0 + 20)["count"] == 0


def test_as_of_retraction_recorded_after_t_keeps_key(store_path):
    sha = put(store_path, "wrong-fact", "Wrong fact", "the cache is memcached", T0)
    remove(store_path, "wrong-fact", T0 + 10)
    hits = query(store_path, "memcached", mode="as_of", as_of=T0 + 5)["hits"]
    assert [(h["key"], h["sha"], h["state"], h["is_head"]) for h in hits] == [("wrong-fact", sha, "active", False)]


def test_readd_after_retraction_is_visible_again(store_path):
    put(store_path, "fact", "Fact", "uses memcached", T0)
    remove(store_path, "fact", T0 + 10)
    sha = put(store_path, "fact", "Fact", "uses memcached again", T0 + 20)
    assert query(store_path, "memcached", mode="as_of", as_of=T0 + 15)["count"] == 0
    hits = query(store_path, "memcached", mode="as_of", as_of=T0 + 25)["hits"]
    assert [(h["sha"], h["is_head"]) for h in hits] == [(sha, True)]
    assert keys(query(store_path, "memcached")) == ["fact"]


def test_as_of_keeps_archived_incident_as_archived(store_path):
    put(store_path, "inc-db-down", "DB down", "postgres failover", T0, service="db", severity="high", status="resolved")
    remove(store_path, "inc-db-down", T0 + 10)
    hits = query(store_path, "postgres", mode="as_of", as_of=T0 + 20)["hits"]
    assert [(h["key"], h["state"]) for h in hits] == [("inc-db-down", "archived")]


def test_as_of_uses_revision_order_not_largest_timestamp(store_path):
    # The second commit carries an earlier time (a skewed clock): it is still the later version.
    put(store_path, "skewed", "Skewed", "first text alpha", T0 + 100)
    second = put(store_path, "skewed", "Skewed", "second text beta", T0 + 50)
    hits = query(store_path, "", mode="as_of", as_of=T0 + 200)["hits"]
    assert [h["sha"] for h in hits] == [second]


def test_same_second_versions_cannot_be_split_by_time(store_path):
    first = put(store_path, "burst", "Burst", "port 8080", T0)
    second = put(store_path, "burst", "Burst", "port 9090", T0)
    sha_time = parse_time(first, bound=END, store_path=store_path)
    assert sha_time == T0
    hits = query(store_path, "", mode="as_of", as_of=sha_time)["hits"]
    assert [h["sha"] for h in hits] == [second]


def test_sha_as_time_means_its_commit_time(store_path):
    r1 = put(store_path, "svc", "Svc", "port 8080", T0)
    put(store_path, "svc", "Svc", "port 9090", T0 + 100)
    assert parse_time(r1, bound=END, store_path=store_path) == T0
    assert parse_time(r1[:10], bound=START, store_path=store_path) == T0
    assert parse_time("HEAD~1", bound=END, store_path=store_path) == T0


def test_bare_date_bounds_end_of_day_for_as_of_start_for_lower_bound():
    assert parse_time("2026-01-01", bound=END) == T0 + DAY - 1
    assert parse_time("2026-01-01", bound=START) == T0


def test_bare_date_as_of_includes_last_second_of_the_day(store_path):
    put(store_path, "late", "Late", "written at 23:59:59", T0 + DAY - 1)
    put(store_path, "next", "Next", "written at midnight", T0 + DAY)
    t = parse_time("2026-01-01", bound=END)
    assert keys(query(store_path, "", mode="as_of", as_of=t)) == ["late"]
    window = (parse_time("2026-01-02", bound=START), parse_time("2026-01-02", bound=END))
    assert keys(query(store_path, "", mode="changed_between", window=window)) == ["next"]


@pytest.mark.parametrize("text,expected", [
    ("2026-01-01T10:00:00Z", T0 + 36_000),
    ("2026-01-01T12:00:00+02:00", T0 + 36_000),
    ("2026-01-01T10:00:00", T0 + 36_000),
    ("2026-01-01 10:00", T0 + 36_000),
    ("2026-01-01T10:00:00.999Z", T0 + 36_000),
])
def test_rfc3339_datetimes_are_utc_seconds(text, expected):
    assert parse_time(text, bound=END) == expected


@pytest.mark.parametrize("text", ["2026-13-01", "2026-01-01T25:00", "", "no-such-rev"])
def test_bad_time_is_a_usage_error(text, store_path):
    with pytest.raises(UsageError):
        parse_time(text, bound=END, store_path=store_path)


def test_changed_between_returns_latest_matching_version_in_window(store_path):
    put(store_path, "svc", "Svc", "port 8080 before", T0)
    v2 = put(store_path, "svc", "Svc", "port 8080 inside", T0 + 100)
    put(store_path, "svc", "Svc", "port 9090 inside", T0 + 200)
    put(store_path, "svc", "Svc", "port 8080 after", T0 + 400)
    hits = query(store_path, "8080", mode="changed_between", window=(T0 + 50, T0 + 300))["hits"]
    assert [(h["sha"], h["is_head"]) for h in hits] == [(v2, False)]


def test_changed_between_ignores_retractions(store_path):
    put(store_path, "fact", "Fact", "uses memcached", T0)
    remove(store_path, "fact", T0 + 100)
    assert query(store_path, "", mode="changed_between", window=(T0 + 50, T0 + 200))["count"] == 0
    hits = query(store_path, "memcached", mode="changed_between", window=(T0, T0 + 200))["hits"]
    assert [(h["key"], h["state"]) for h in hits] == [("fact", "retracted")]


def test_history_includes_current_version_marked_is_head(store_path):
    r1 = put(store_path, "svc", "Svc", "port 8080 service", T0)
    r2 = put(store_path, "svc", "Svc", "port 9090 service", T0 + 1)
    hits = query(store_path, "service", mode="history")["hits"]
    assert sorted((h["sha"], h["is_head"]) for h in hits) == sorted([(r1, False), (r2, True)])


def test_current_state_shows_archived_never_retracted(store_path):
    put(store_path, "wrong", "Wrong", "redis cluster", T0)
    remove(store_path, "wrong", T0 + 1)
    put(store_path, "task-redis", "Redis upgrade", "redis cluster upgrade", T0 + 2, status="done", resolution="done, verified")
    remove(store_path, "task-redis", T0 + 3)
    hits = query(store_path, "redis")["hits"]
    assert [(h["key"], h["state"], h["is_head"]) for h in hits] == [("task-redis", "archived", True)]
    history = query(store_path, "redis", mode="history")["hits"]
    assert {(h["key"], h["state"], h["is_head"]) for h in history} == {
        ("task-redis", "archived", True), ("wrong", "retracted", False)}


def test_filters_apply_to_the_selected_version_in_time_modes(store_path):
    put(store_path, "task-a", "Task A", "work", T0, status="open")
    put(store_path, "task-a", "Task A", "work", T0 + 10, status="done", resolution="ok")
    f = Filters(status="open")
    assert keys(query(store_path, "work", mode="as_of", as_of=T0 + 5, filters=f)) == ["task-a"]
    assert query(store_path, "work", mode="as_of", as_of=T0 + 20, filters=f)["count"] == 0
