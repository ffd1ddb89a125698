"""The history stage of a staged index: build the full index beside HEAD's snapshot and swap it in.

Run by the background filler (index/filler.py) or, when no filler runs, by a reader that must
wait for the history (wait_for_history, below); the caller holds `.git/kyb/filler.lock`. The full
index is built into a side file without holding the index lock (readers keep answering from the
snapshot and catching up), then, under the index lock, brought up to what the snapshot reflects by
then, given the vectors embedded meanwhile, and swapped in with one rename. Killed half way, the
side file is thrown away and the next filler reads the history again (a few seconds at 10k keys).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Callable

from kyb_cli.core.canon import faults, headfile
from kyb_cli.core.index import schema, staged

SIDE_NAME = "index.sqlite.history"


def build_history(store_path: Path, gdir: Path,
                  progress: Callable[[int, int, str], None] | None = None) -> dict | None:
    """Build the full index beside the snapshot and swap it in (the caller holds the filler lock)."""
    from kyb_cli.core.canon import lock
    from kyb_cli.core.index import build, gitlog

    db = schema.index_path(gdir)
    side = db.with_name(SIDE_NAME)
    head0 = headfile.head_sha(gdir) or gitlog.head(store_path)
    if head0 is None:
        return None
    started = time.time()

    def step(done: int, total: int | None) -> None:
        staged.write_status(gdir, stage="history", done=done, total=total or done, head=head0,
                            started_at=int(started))
        if progress is not None:
            progress(done, total or done, "history")

    step(0, None)  # the total once build_file has walked the history (a `git rev-list --count` was one more walk)
    stats = build.build_file(store_path, side, head0, step, note=False)
    faults.step("filler-before-swap")
    with lock.exclusive(db.parent / "index.lock", timeout=max(lock.lock_timeout(), 60.0)):
        current = schema.open_valid(db)
        conn = schema.connect(side)
        try:
            if current is not None:
                cconn, meta = current
                try:
                    if staged.history_complete(meta):
                        return None  # completed meanwhile (kyb reindex): ours is not needed
                    chead = meta.get("head") or None
                    if chead and chead != head0:
                        work = build.catch_up(conn, store_path, head0, chead)
                        if work is None:
                            return None  # HEAD moved off our line: the next round starts again
                    _carry_vectors(conn, db)
                finally:
                    cconn.close()
            with conn:
                conn.execute("INSERT OR REPLACE INTO meta(k, v) VALUES('history', 'complete')")
        finally:
            conn.close()
        Path(f"{db}-journal").unlink(missing_ok=True)
        os.replace(side, db)
    stats["seconds"] = round(time.time() - started, 3)
    staged.write_status(gdir, stage="history_done", done=stats.get("commits", 0),
                        total=stats.get("commits", 0), head=head0, seconds=stats["seconds"])
    return stats


def _carry_vectors(conn, old_db: Path) -> None:
    """Vectors embedded into the snapshot while the history was built: keep them (same text hashes)."""
    conn.execute("ATTACH DATABASE ? AS old", (str(old_db),))
    try:
        with conn:
            conn.execute("INSERT OR IGNORE INTO vectors SELECT * FROM old.vectors")
            conn.execute("INSERT OR REPLACE INTO meta(k, v) SELECT k, v FROM old.meta WHERE k LIKE 'vec_fingerprint%'")
    finally:
        conn.execute("DETACH DATABASE old")


def wait_for_history(store_path: Path, gdir: Path, progress: Callable[[int, int, str], None] | None = None,
                     *, missing: bool = False) -> None:
    """Return once the index's history is complete: follow the filler, or build it here.
    `missing`: there is no index yet, and the full one is built (or followed) without a snapshot."""
    db = schema.index_path(gdir)
    shown = False
    try:
        while True:
            opened = schema.open_valid(db)
            if opened is None and not missing:
                return  # no index at all: the caller's fresh() builds one
            if opened is not None:
                conn, meta = opened
                conn.close()
                if staged.history_complete(meta):
                    return
            shown = True
            _wait_step(store_path, gdir, progress)
    finally:
        if shown and progress is not None:
            progress(0, 0, "done")


def _wait_step(store_path: Path, gdir: Path, progress) -> None:
    """One round of waiting: build the history here when no filler holds the lock, else follow it."""
    fd = staged.try_lock(gdir)
    if fd is not None:  # nobody is building it: do it here, with our own progress
        try:
            build_history(store_path, gdir, progress)
        finally:
            staged.release(fd)
        return
    st = staged.status(gdir)
    if progress is not None:
        history = st.get("stage") == "history"
        progress(int(st.get("done", 0)) if history else 0, int(st.get("total", 0)) if history else 0, "history")
    time.sleep(0.1)
