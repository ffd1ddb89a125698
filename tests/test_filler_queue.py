"""The filler's work list (vectors.next_batch): one scan of missing_in_order serves many batches, so
the filler does not hold the index's read lock for a full scan before every batch (a write's
catch-up waits for it to commit: issue 39); served in the scan's order, versions written since the
scan first, hashes filled meanwhile skipped, and the list made again when it ran out."""

from __future__ import annotations

from tests.support.index_helpers import T0, add_vectors, index_conn, put

FP = "fp-queue"




def counted_scans(monkeypatch):
    from kyb_cli.core.index import vectors

    calls = []
    real = vectors.missing_in_order

    def scan(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(vectors, "missing_in_order", scan)
    return calls


def test_one_scan_serves_many_batches_in_its_order(store_path, monkeypatch):
    from kyb_cli.core.index import vectors

    for i in range(6):
        put(store_path, f"k{i}", f"Key {i}", f"text {i}", T0 + i)
    calls = counted_scans(monkeypatch)
    c = index_conn(store_path)
    want = vectors.missing_in_order(c, FP, 100)
    calls.clear()
    got = []
    while batch := vectors.next_batch(c, FP, 2):
        got += batch
        add_vectors(c, batch, FP)  # as fill stores them
    assert got == want and len(want) >= 6
    assert len(calls) == 1  # every batch from one scan (not one scan a batch)
    c.close()


def test_new_versions_go_first_and_filled_ones_are_skipped(store_path, monkeypatch):
    from kyb_cli.core.index import vectors

    for i in range(4):
        put(store_path, f"k{i}", f"Key {i}", f"text {i}", T0 + i)
    c = index_conn(store_path)
    order = vectors.missing_in_order(c, FP, 100)
    assert vectors.next_batch(c, FP, 1) == order[:1]
    add_vectors(c, order[1:2], FP)  # filled by someone else meanwhile
    c.close()
    put(store_path, "fresh", "Fresh", "written after the scan", T0 + 50)
    c = index_conn(store_path)
    calls = counted_scans(monkeypatch)
    newest = vectors.missing_in_order(c, FP, 1)
    calls.clear()
    assert vectors.next_batch(c, FP, 1) == newest  # the new version, before the rest of the list
    assert vectors.next_batch(c, FP, 1) == order[2:3]  # order[1] had its vector: skipped
    assert calls == []
    c.close()


def test_the_list_is_made_again_when_it_ran_out(store_path, monkeypatch):
    from kyb_cli.core.index import vectors

    monkeypatch.setattr(vectors, "QUEUE_BATCHES", 1)  # a scan holds one batch
    for i in range(5):
        put(store_path, f"k{i}", f"Key {i}", f"text {i}", T0 + i)
    c = index_conn(store_path)
    want = vectors.missing_in_order(c, FP, 100)
    calls = counted_scans(monkeypatch)
    got = []
    while batch := vectors.next_batch(c, FP, 2):
        got += batch
        add_vectors(c, batch, FP)
    assert got == want
    assert len(calls) >= 3  # ran out, scanned again, until a scan came back short
    c.close()


def test_the_status_counts_pending_again_only_while_cheap(store_path, monkeypatch):
    """filler.json's pending: counted at the head counted last (kept: brought forward); after a
    write, the last figure less what the batch filled, until RECOUNT_S have passed."""
    from types import SimpleNamespace

    from kyb_cli.core.index import vectors

    for i in range(3):
        put(store_path, f"k{i}", f"Key {i}", f"text {i}", T0 + i)
    found = [(SimpleNamespace(name="m"), FP, None)]
    counted = []
    real = vectors.pending
    monkeypatch.setattr(vectors, "pending", lambda *a: counted.append(a) or real(*a))
    c = index_conn(store_path)
    assert vectors._status_pending(c, found, "m", 0) == {"m": 3}
    add_vectors(c, vectors.next_batch(c, FP, 1), FP)
    assert vectors._status_pending(c, found, "m", 1) == {"m": 2} and len(counted) == 2  # same head: counted
    c.close()
    put(store_path, "k9", "Key 9", "text 9", T0 + 9)  # a write moves the head
    c = index_conn(store_path)
    add_vectors(c, vectors.next_batch(c, FP, 1), FP)
    assert vectors._status_pending(c, found, "m", 1) == {"m": 1} and len(counted) == 2  # carried, not counted
    monkeypatch.setattr(vectors, "RECOUNT_S", -1.0)
    assert vectors._status_pending(c, found, "m", 0) == {"m": 2} and len(counted) == 3  # due: counted
    c.close()
    monkeypatch.setattr(vectors, "RECOUNT_S", 300.0)
    put(store_path, "k10", "Key 10", "text 10", T0 + 10)
    c = index_conn(store_path)
    assert vectors._status_pending(c, found, "m", 0) == {"m": 2} and len(counted) == 3  # carried
    monkeypatch.setattr(vectors, "_file_id", lambda _c: ("swapped", 1))  # the history swap's new file
    assert vectors._status_pending(c, found, "m", 0) == {"m": 3} and len(counted) == 4  # counted again
    c.close()
