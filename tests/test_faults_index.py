"""The index heals itself: a path that is not a usable file is moved aside and rebuilt, temp files of
dead processes are removed, and readers racing a rebuild or a deleted index never see an internal
error (the index is a cache of Git; losing it costs a rebuild, never an answer)."""

from __future__ import annotations

from kyb_cli.core.records.keys import path_of_key

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest


def index_file(store: Path) -> Path:
    return store / ".git" / "kyb" / "index.sqlite"


@pytest.fixture
def indexed(kyb, store_path):
    for i in range(3):
        assert kyb("add", "--key", f"k{i}", "--title", f"checkout {i}", input=f"checkout body {i}").code == 0
    assert kyb("query", "checkout").code == 0
    assert index_file(store_path).is_file()
    return store_path


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("shape", ["directory", "symlink-to-directory"])
def test_index_path_that_is_not_a_file_is_moved_aside_and_rebuilt(kyb, indexed, shape, tmp_path):
    db = index_file(indexed)
    db.unlink()
    if shape == "directory":
        db.mkdir()
        (db / "keep.txt").write_text("someone's file")
    else:
        target = tmp_path / "elsewhere"
        target.mkdir()
        db.symlink_to(target, target_is_directory=True)
    for args in (("query", "checkout"), ("export",), ("get", "k1"), ("tags",)):
        res = kyb(*args)
        assert res.code == 0, (args, res.stderr)
        assert "internal error" not in res.stderr
    assert db.is_file() and not db.is_symlink()
    aside = [p for p in db.parent.iterdir() if p.name.startswith("index.sqlite.broken-")]
    assert len(aside) == 1
    if shape == "directory":
        assert (aside[0] / "keep.txt").read_text() == "someone's file"  # moved, never deleted
    assert kyb("query", "checkout").json["count"] == 3


def test_temp_files_of_dead_processes_are_removed(kyb, indexed):
    kyb_dir = indexed / ".git" / "kyb"
    dead, alive = dead_pid(), os.getpid()
    bucket = (indexed / path_of_key("k9")).parent  # the directory the write below touches
    bucket.mkdir(parents=True, exist_ok=True)
    stale = [kyb_dir / f"index.sqlite.tmp-{dead}", kyb_dir / f"index.sqlite.tmp-{dead}-journal",
             bucket / f".k1.md.kyb-{dead}.tmp"]
    live = [kyb_dir / f"index.sqlite.tmp-{alive}", bucket / f".k2.md.kyb-{alive}.tmp"]
    for path in stale + live:
        path.write_bytes(b"x" * 4096)
    assert kyb("add", "--key", "k9", "--title", "T", input="new").code == 0  # a write, then a read
    assert kyb("query", "checkout").code == 0
    assert [p for p in stale if p.exists()] == []
    assert all(p.exists() for p in live)  # a running process's temp file is its own business


@pytest.mark.slow
def test_index_deleted_while_queries_run_never_surfaces_an_internal_error(kyb, indexed):
    db = index_file(indexed)
    stop = threading.Event()

    def deleter():
        while not stop.is_set():
            for path in (db, Path(f"{db}-journal")):
                try:
                    path.unlink()
                except (FileNotFoundError, IsADirectoryError):
                    pass
            time.sleep(0.005)

    thread = threading.Thread(target=deleter, daemon=True)
    thread.start()
    try:
        results = [kyb("query", "checkout") for _ in range(20)]
        results += [kyb("get", "k1") for _ in range(5)]
    finally:
        stop.set()
        thread.join()
    bad = [r.stderr for r in results if r.code != 0 or "internal error" in r.stderr]
    assert bad == []


@pytest.mark.slow
def test_rebuilds_racing_readers_never_surface_an_internal_error(kyb, indexed):
    """Processes: rebuilds and readers race as separate processes, as users' commands do."""
    env = {**kyb.env, "KYB_STORE": str(indexed)}
    procs = []
    for i in range(12):
        args = ["reindex"] if i % 3 == 0 else ["query", "checkout"]
        procs.append(subprocess.Popen([sys.executable, "-m", "kyb_cli", *args], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert [(code, err) for code, err in outs if code != 0 or "internal error" in err] == []
