"""Event time beside write time (seed 000, "Write Time Is Not Event Time").

The service switched ports at 15:50; the record was updated at 16:20 with `--effective-at 15:50`.
`--as-of` answers about write time, `--as-of-event` about the world, and both together are
bi-temporal: what the store knew at W about the world at T.
"""

from __future__ import annotations

import subprocess

from tests.support.index_helpers import put, remove
from kyb_cli.core.records.keys import path_of_key

DAY = 1_791_676_800  # 2026-10-11T00:00:00Z
H = 3600


def at(hh: int, mm: int = 0) -> int:
    return DAY + hh * H + mm * 60


def iso(hh: int, mm: int = 0) -> str:
    return f"2026-10-11T{hh:02d}:{mm:02d}:00Z"


def seed_store(store_path):
    put(store_path, "svc-port", "Service port", "svc listens on port 8080", when=at(10))
    put(store_path, "svc-port", "Service port", "svc listens on port 9090", when=at(16, 20),
        effective_at=iso(15, 50))


def bodies(kyb, *args):
    res = kyb("query", "svc port", "--no-semantic", "--full", *args)
    assert res.code == 0, res.stderr
    return [h["body"] for h in res.json["hits"]]


def test_as_of_answers_about_write_time(kyb, store_path):
    seed_store(store_path)
    assert bodies(kyb, "--as-of", iso(16)) == ["svc listens on port 8080"]


def test_as_of_event_answers_about_the_world_by_todays_knowledge(kyb, store_path):
    seed_store(store_path)
    assert bodies(kyb, "--as-of-event", iso(16)) == ["svc listens on port 9090"]
    assert bodies(kyb, "--as-of-event", iso(15)) == ["svc listens on port 8080"]


def test_bi_temporal_what_the_store_knew_at_w_about_the_world_at_t(kyb, store_path):
    seed_store(store_path)
    # at 16:00 the store did not know of the cutover yet
    assert bodies(kyb, "--as-of-event", iso(16), "--as-of", iso(16)) == ["svc listens on port 8080"]
    # by 16:30 it did, and says the world had 9090 at 16:00
    assert bodies(kyb, "--as-of-event", iso(16), "--as-of", iso(16, 30)) == ["svc listens on port 9090"]


def test_as_of_event_response_says_both_axes_and_hits_carry_effective_at(kyb, store_path):
    seed_store(store_path)
    res = kyb("query", "svc port", "--no-semantic", "--as-of-event", iso(16), "--as-of", iso(16, 30)).json
    assert res["mode"] == "as_of_event"
    assert res["as_of_event"] == "2026-10-11T16:00:00+00:00" and res["as_of"] == "2026-10-11T16:30:00+00:00"
    assert res["hits"][0]["effective_at"] == iso(15, 50)
    current = kyb("query", "svc port", "--no-semantic", "--full").json["hits"][0]
    assert current["effective_at"] == iso(15, 50) and current["body"].endswith("9090")


def test_incident_started_at_counts_as_event_time(kyb, store_path):
    put(store_path, "inc-2026-10-11-oom", "Orders API out of memory", "first report",
        when=at(12), service="orders-api", severity="high", status="open", started_at=iso(11))
    put(store_path, "inc-2026-10-11-oom", "Orders API out of memory", "root cause: the cache grew",
        when=at(18), service="orders-api", severity="high", status="open", started_at=iso(9))
    res = kyb("query", "orders", "--no-semantic", "--full", "--as-of-event", iso(10)).json
    assert [h["body"] for h in res["hits"]] == ["root cause: the cache grew"]


def test_effective_at_on_the_cli_is_stored_normalised_and_validated(kyb, store_path):
    assert kyb("add", "--key", "svc-port", "--title", "Service port", "--body", "port 8080").code == 0
    res = kyb("add", "--key", "svc-port", "--title", "Service port", "--body", "port 9090",
              "--effective-at", "2000-01-01 12:00")
    assert res.code == 0, res.stderr
    text = (store_path / path_of_key("svc-port")).read_text()
    assert 'effective_at = "2000-01-01T12:00:00Z"' in text
    # the 9090 version was effective long before the 8080 version was written
    assert bodies(kyb, "--as-of-event", "2010-01-01") == ["port 9090"]
    # a rewrite without --effective-at is effective when written
    kyb("add", "--key", "svc-port", "--title", "Service port", "--body", "port 7070")
    assert "effective_at" not in (store_path / path_of_key("svc-port")).read_text()
    head = subprocess.run(["git", "-C", str(store_path), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    for bad in ("yesterday", "HEAD~1", "2026-13-45"):
        res = kyb("add", "--key", "svc-port", "--title", "Service port", "--body", "port 1", "--effective-at", bad)
        assert res.code == 2 and res.stdout == "" and "effective" in res.stderr
    after = subprocess.run(["git", "-C", str(store_path), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    assert head == after


def test_as_of_event_does_not_combine_with_history_or_a_window(kyb, store_path):
    seed_store(store_path)
    for extra in (["--history"], ["--changed-between", iso(1), iso(2)]):
        res = kyb("query", "svc", "--as-of-event", iso(16), *extra)
        assert res.code == 2 and res.stdout == ""


def test_retracted_knowledge_is_not_true_at_any_event_time(kyb, store_path):
    seed_store(store_path)
    remove(store_path, "svc-port", when=at(17))
    assert bodies(kyb, "--as-of-event", iso(16)) == []


def test_as_of_event_slice_builds_its_inner_sets_once(store_path):
    """The as_of_event slice materializes what the store knew and which versions were told: inline,
    SQLite ran the grouped as_of slice again for every version it joined (52 s at 10k keys;
    bench/bench_slices.py). Read from the query plan, not a clock."""
    import apsw

    from kyb_cli.core.index import schema
    from kyb_cli.core.index.slice import candidates, time_params

    put(store_path, "svc-port", "Service port", "port 8080", when=at(12))
    from kyb_cli import api

    api.query(str(store_path), "port", semantic=False)
    conn = apsw.Connection(str(schema.index_path(store_path / ".git")), flags=apsw.SQLITE_OPEN_READONLY)
    params: dict = {}
    time_params("as_of_event", params, as_of=None, window=None, as_of_event=at(13))
    plan = " | ".join(row[3] for row in conn.execute("EXPLAIN QUERY PLAN " + candidates("as_of_event", params), params))
    assert "MATERIALIZE known" in plan and "MATERIALIZE told" in plan, plan
