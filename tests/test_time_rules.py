"""The three rules about time that the product stands on, each end to end through the CLI."""

from __future__ import annotations

import os
import subprocess
import time
from kyb_cli.core.records.keys import path_of_key


def test_retracted_is_not_archived(kyb):
    """Wrong knowledge leaves current answers; finished work stays readable with how it ended."""
    kyb("add", "--key", "db-host", "--title", "Database host", input="primary on host-a")
    kyb("rm", "db-host", "--reason", "it was host-b all along")
    kyb("incident", "--key", "inc-2026-11-01-db-down", "--title", "Database down", "--service", "db",
        "--severity", "high", input="primary on host-a went down")
    kyb("resolve", "inc-2026-11-01-db-down", "--resolution", "failed over to host-b")

    hits = kyb("query", "primary", "--no-semantic").json["hits"]
    assert [(h["key"], h["state"]) for h in hits] == [("inc-2026-11-01-db-down", "archived")]

    archived = kyb("get", "inc-2026-11-01-db-down")
    assert archived.code == 0 and archived.json["state"] == "archived"
    assert archived.json["resolution"] == "failed over to host-b"

    retracted = kyb("get", "db-host")
    assert (retracted.code, retracted.stdout) == (1, "")
    assert "retracted" in retracted.stderr and "it was host-b all along" in retracted.stderr

    states = {row["key"]: row["state"] for row in map(__import__("json").loads, kyb("export").stdout.splitlines())}
    assert states == {"db-host": "retracted", "inc-2026-11-01-db-down": "archived"}


def test_write_time_is_commit_time(kyb, store_path):
    """No stored `updated_at`: the version's time is its commit's, even for a commit made with plain git."""
    kyb("add", "--key", "port", "--title", "Port", input="service-api listens on 8080")
    record = store_path / path_of_key("port")
    assert "updated_at" not in record.read_text()
    record.write_text(record.read_text().replace("8080", "9090"))
    env = dict(os.environ, GIT_AUTHOR_DATE="2030-01-02T03:04:05+00:00",
               GIT_COMMITTER_DATE="2030-01-02T03:04:05+00:00",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
    subprocess.run(["git", "-C", str(store_path), "commit", "-qam", "hand edit"], check=True, env=env)

    got = kyb("get", "port").json
    assert got["committed_at"] == "2030-01-02T03:04:05+00:00" and "9090" in got["body"]
    before = kyb("query", "9090", "--no-semantic", "--as-of", "2030-01-02T03:04:04Z").json
    at = kyb("query", "9090", "--no-semantic", "--as-of", "2030-01-02T03:04:05Z").json
    assert before["count"] == 0 and at["count"] == 1


def test_slice_first_then_match(kyb):
    """--as-of picks each key's version at T first, then matches: a replaced word is not served as current."""
    kyb("add", "--key", "svc", "--title", "Service", input="listens on 8080")
    first = kyb("history", "svc").json["versions"][0]["sha"]
    time.sleep(1.1)  # commit time has one-second resolution; same-second versions cannot be sliced apart
    kyb("add", "--key", "svc", "--title", "Service", input="listens on 9090")
    head = kyb("history", "svc").json["versions"][0]["sha"]
    assert kyb("query", "8080", "--no-semantic", "--as-of", first).json["count"] == 1
    assert kyb("query", "8080", "--no-semantic", "--as-of", head).json["count"] == 0
