"""The background filler: completes a staged index, then gives passages their vectors.

Started detached by a reader (staged.start_filler) as `python -m kyb_cli.core.index.filler STORE`;
it holds `.git/kyb/filler.lock` for as long as it works (a second one exits at once) and writes its
progress to `.git/kyb/filler.json`. Its work, in order:

1. history: when the index is a snapshot (`meta.history = pending`), build the full index into a
   side file without holding the index lock (readers keep answering from the snapshot and catching
   up), then, under the index lock, bring it up to what the snapshot reflects by then, carry over
   the vectors already embedded, and swap it in with one rename. Killed half way, the side file is
   thrown away and the next filler starts the history again (a few seconds at 10k keys).
2. vectors: passages without a vector under the current model, current versions first, then the
   rest newest first, a batch at a time (each batch committed, so a killed filler resumes where it
   stopped); see search/vectors.py, `fill_background`.
It exits when there is nothing left to do. Errors go to `.git/kyb/filler.log`.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable

from kyb_cli.core.canon import headfile
from kyb_cli.core.index import staged

SIDE_NAME = "index.sqlite.history"


def build_history(store_path: Path, gdir: Path,
                  progress: Callable[[int, int, str], None] | None = None) -> dict | None:
    """Build the full index beside the snapshot and swap it in (the caller holds the filler lock)."""
    from kyb_cli.core.canon import lock
    from kyb_cli.core.index import build, gitlog, schema
    from kyb_cli.core.index.fresh import _open_valid

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

    step(0, gitlog.count(store_path, head0))
    stats = build.build_file(store_path, side, head0, step, note=False)
    _fault("filler-before-swap")
    with lock.exclusive(gdir / "kyb" / "index.lock", timeout=max(lock.lock_timeout(), 60.0)):
        current = _open_valid(db)
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


def _fault(point: str) -> None:
    """TEST-ONLY: `KYB_FAULT=<point>` SIGKILLs the filler there (a filler killed half way)."""
    if os.environ.get("KYB_FAULT") == point:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def _carry_vectors(conn, old_db: Path) -> None:
    """Vectors embedded into the snapshot while the history was built: keep them (same text hashes)."""
    conn.execute("ATTACH DATABASE ? AS old", (str(old_db),))
    try:
        with conn:
            conn.execute("INSERT OR IGNORE INTO vectors SELECT * FROM old.vectors")
            conn.execute("INSERT OR REPLACE INTO meta(k, v) SELECT k, v FROM old.meta WHERE k = 'vec_fingerprint'")
    finally:
        conn.execute("DETACH DATABASE old")


def _catch_up(store_path: Path) -> None:
    """Bring the index to HEAD first, so commits written since the last read get vectors too."""
    from kyb_cli.core.index.fresh import fresh

    fresh(store_path).conn.close()


def run(store_path: Path, gdir: Path) -> None:
    """Do every piece of work there is, then return (the caller holds the filler lock)."""
    from kyb_cli.core.index import schema
    from kyb_cli.core.index.fresh import _open_valid

    db = schema.index_path(gdir)
    history_rounds = 0
    while True:
        if not db.exists():
            return  # no index: the next reader builds one (and starts us again)
        _catch_up(store_path)
        opened = _open_valid(db)
        if opened is None:
            return
        conn, meta = opened
        if not staged.history_complete(meta):
            conn.close()
            history_rounds += 1
            if history_rounds > 3:
                return  # HEAD keeps moving off the line we build: a later reader starts us again
            stats = build_history(store_path, gdir)
            if stats is not None:  # the log line the racing-start test counts
                sys.stderr.write(f"kyb filler: history built ({stats.get('commits', 0)} commits, "
                                 f"{stats['seconds']} s)\n")
                sys.stderr.flush()
            continue
        try:
            from kyb_cli.core.search.vectors import fill_background

            done = fill_background(conn, gdir)
        finally:
            conn.close()
        if not done:
            return


def main(argv: list[str]) -> int:
    store_path = Path(argv[0]).resolve()
    gdir = headfile.git_dir(store_path)
    fd = staged.try_lock(gdir)
    if fd is None:
        return 0  # another filler is at work
    try:
        try:
            os.nice(10)  # readers first: the filler is never what a query waits for on a busy machine
        except OSError:
            pass
        # Passages are embedded here, in this niced process, never through the warm helper: the
        # helper serves queries, which must not queue behind a batch of passages.
        os.environ["KYB_EMBED_HELPER"] = "0"
        stop = staged.stop_path(gdir)
        if stop.exists() and time.time() - stop.stat().st_mtime > 600:
            stop.unlink(missing_ok=True)  # left by a killed `kyb index --embed`
        run(store_path, gdir)
        staged.write_status(gdir, stage="idle", done=0, total=0)
    except Exception as exc:  # noqa: BLE001 - the log is the only place a detached process can speak
        sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} kyb filler: "
                         f"{type(exc).__name__}: {exc}\n")
        staged.write_status(gdir, stage="failed", error=f"{type(exc).__name__}: {exc}"[:300])
        return 1
    finally:
        Path(gdir / "kyb" / SIDE_NAME).unlink(missing_ok=True)
        staged.release(fd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
