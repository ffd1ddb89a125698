"""One call context: a call's wait policy and `history_complete` live in a ContextVar
(core/index/call.py), so concurrent calls in one process (kyb serve's thread pool) each report only
what their own reads saw; one call's reset never clears another's `history_complete: false`."""

from __future__ import annotations

import threading

from kyb_cli import api
from kyb_cli.core.canon.repo import init_store
from tests.support.index_helpers import T0, put


def _two_stores(tmp_path, monkeypatch):
    staged, whole = tmp_path / "staged", tmp_path / "whole"
    for path in (staged, whole):
        init_store(path)
        put(path, "checkout-path", "Checkout path", "checkout writes go through node 3", T0)
        put(path, "checkout-path", "Checkout path", "checkout writes go through node 4", T0 + 86_400)
    api.rebuild_index(str(whole))  # a full index: its history is complete
    monkeypatch.setenv("KYB_STAGE_AT", "0")  # every new index is a snapshot first (no filler: KYB_BACKGROUND=off)
    return staged, whole


def test_concurrent_calls_each_report_their_own_history_complete(tmp_path, monkeypatch):
    staged, whole = _two_stores(tmp_path, monkeypatch)
    barrier = threading.Barrier(2, timeout=60)
    seen: dict[str, bool] = {}
    errors: list[BaseException] = []

    def call(name, store, before_query: bool):
        try:
            if before_query:
                barrier.wait()  # the other call has already answered from an incomplete index
            api.reset_history_state()
            api.history_wait_policy(False)
            _path, response = api.query(str(store), "checkout", history=True, semantic=False)
            assert response["count"] >= 1
            if not before_query:
                barrier.wait()
            barrier.wait()  # both answered (and reset) before either looks at its flag
            seen[name] = api.history_incomplete()
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=call, args=("staged", staged, False)),
               threading.Thread(target=call, args=("whole", whole, True))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert seen == {"staged": True, "whole": False}


def test_a_new_call_starts_with_waiting_on_and_nothing_seen(tmp_path, monkeypatch):
    staged, _whole = _two_stores(tmp_path, monkeypatch)
    api.reset_history_state()
    api.history_wait_policy(False)
    api.query(str(staged), "checkout", history=True, semantic=False)
    assert api.history_incomplete() is True
    api.reset_history_state()
    assert api.history_incomplete() is False


def test_a_thread_that_began_no_call_does_not_see_another_threads_state(tmp_path, monkeypatch):
    staged, _whole = _two_stores(tmp_path, monkeypatch)
    api.reset_history_state()
    api.history_wait_policy(False)
    api.query(str(staged), "checkout", history=True, semantic=False)
    other: list[bool] = []
    t = threading.Thread(target=lambda: other.append(api.history_incomplete()))
    t.start()
    t.join()
    assert other == [False] and api.history_incomplete() is True
