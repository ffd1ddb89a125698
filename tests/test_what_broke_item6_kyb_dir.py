"""Issue 37: the store's own directory `.git/kyb` (index, locks, journal).

- linked-kyb-dir-refused (item 6): a `.git/kyb` that is a symbolic link is refused (exit 4, the path
  and the fix, stdout empty) by reads, writes and sync alike, before anything is written through it.
- dead-rebuild-temp-files-cleared (item 4): a rebuild killed mid-way leaves `index.sqlite.tmp-<pid>`
  and its journal; the next ordinary query (the index already fresh) removes those of dead pids and
  never a live process's.
"""

from __future__ import annotations

import os
import shutil

import pytest

from test_faults_index import dead_pid, index_file, indexed  # noqa: F401 (fixture)


@pytest.mark.parametrize("args", [("query", "checkout"), ("get", "k1"), ("add", "--key", "k7", "--title", "T"),
                                  ("sync",), ("remote", "/elsewhere.git"), ("reindex",)])
def test_linked_kyb_dir_refused(kyb, indexed, tmp_path, args):
    kyb_dir = indexed / ".git" / "kyb"
    outside = tmp_path / "outside-kyb"
    outside.mkdir()
    shutil.rmtree(kyb_dir)
    kyb_dir.symlink_to(outside, target_is_directory=True)
    head = (indexed / ".git" / "refs" / "heads" / "main").read_bytes()
    res = kyb(*args, input="body")
    assert (res.code, res.stdout) == (4, ""), (res.code, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(kyb_dir) in lines[0] and "symbolic link" in lines[0] and "rm " in lines[0], lines
    assert list(outside.iterdir()) == [], "nothing is written through the link"
    assert (indexed / ".git" / "refs" / "heads" / "main").read_bytes() == head
    kyb_dir.unlink()  # the fix the message gives
    assert kyb("query", "checkout").code == 0


def test_dead_rebuild_temp_files_cleared(kyb, indexed):
    kyb_dir = indexed / ".git" / "kyb"
    dead, alive = dead_pid(), os.getpid()
    stale = [kyb_dir / f"index.sqlite.tmp-{dead}", kyb_dir / f"index.sqlite.tmp-{dead}-journal",
             kyb_dir / f"index.sqlite.snap-{dead}"]
    live = [kyb_dir / f"index.sqlite.tmp-{alive}", kyb_dir / f"index.sqlite.tmp-{alive}-journal"]
    for path in stale + live:
        path.write_bytes(b"x" * 4096)
    res = kyb("query", "checkout")  # no write in between: the index is fresh
    assert res.code == 0, res.stderr
    assert [p for p in stale if p.exists()] == []
    assert all(p.exists() for p in live)
    assert index_file(indexed).is_file()
