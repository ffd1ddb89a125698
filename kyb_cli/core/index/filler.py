"""The background filler: completes a staged index, then gives passages their vectors.

Started detached by a reader or a write (staged.start_filler runs this module,
`python -m kyb_cli.core.index.filler STORE`). It lives in the index room, as everything it drives
does (history.py, vectors.py, which asks the embed room below for the vectors), so the index starts
no module of a room above it. It holds `.git/kyb/filler.lock` for as long as it works (a second one exits at once),
writes its progress to `.git/kyb/filler.json` and its errors to `.git/kyb/filler.log`. Its work:

1. history: when the index is a snapshot (`meta.history = pending`), index/history.py builds the
   full index and swaps it in;
2. vectors: passages without a vector under the current model, current versions first, then the
   rest newest first, a batch at a time (each batch committed, so a killed filler resumes where it
   stopped); see index/vectors.fill_background. Embedding runs in this process, niced (the history
   stage is not: someone may be waiting for it), never through the warm helper, which serves queries.
It exits when there is nothing left to do.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from kyb_cli.core.canon import headfile
from kyb_cli.core.index import schema, staged
from kyb_cli.core.index.history import SIDE_NAME, build_history


def _catch_up(store_path: Path) -> None:
    """Bring the index to HEAD first, so commits written since the last read get vectors too."""
    from kyb_cli.core.index.fresh import fresh

    fresh(store_path).conn.close()


_NICED = False


def _nice_once() -> None:
    """Vectors are minutes of work nobody waits for: from here on, readers first. The history stage
    before it runs at normal priority, since a question about the past may be waiting for it (a
    niced build took 22 s instead of ~7 under load 8); niceness cannot be lowered again, so this
    happens once, after the history."""
    global _NICED
    if not _NICED:
        _NICED = True
        try:
            os.nice(10)
        except OSError:
            pass
        _nice_autogroup()


AUTOGROUP = "/proc/self/autogroup"  # Linux with CONFIG_SCHED_AUTOGROUP


def _nice_autogroup() -> None:
    """With the kernel's autogroups on (most desktop Linux), a new session is a group of its own and
    the CPU is shared between groups first: niceness counted only inside ours, so the detached filler
    (a session of its own) took as much CPU as the `kyb add` beside it. Its group is niced too, only
    when this process leads its session (the group is then the filler's alone, never the caller's)."""
    try:
        if os.getsid(0) != os.getpid():
            return
        with open(AUTOGROUP, "w") as f:
            f.write("10")
    except OSError:
        pass


def run(store_path: Path, gdir: Path, *, nice: bool = False) -> None:
    """Do every piece of work there is, then return (the caller holds the filler lock).

    `nice`: lower this process's priority before the vectors (the detached filler; not a test)."""
    from kyb_cli.core.index import schema
    from kyb_cli.core.index.schema import open_valid

    db = schema.index_path(gdir)
    history_rounds = 0
    while True:
        _catch_up(store_path)  # builds the index when there is none (a fresh clone: HEAD's snapshot)
        opened = open_valid(db)
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
        if nice:
            _nice_once()
        try:
            from kyb_cli.core.index.vectors import fill_background

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
        # Passages are embedded here, in this process (niced once the history is in: see run), never
        # through the warm helper: the helper serves queries, which must not queue behind passages.
        os.environ["KYB_EMBED_HELPER"] = "0"
        stop = staged.stop_path(gdir)
        if stop.exists() and time.time() - stop.stat().st_mtime > 600:
            stop.unlink(missing_ok=True)  # left by a killed `kyb index --embed`
        run(store_path, gdir, nice=True)
        staged.write_status(gdir, stage="idle", done=0, total=0)
    except Exception as exc:  # noqa: BLE001 - the log is the only place a detached process can speak
        sys.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} kyb filler: "
                         f"{type(exc).__name__}: {exc}\n")
        staged.write_status(gdir, stage="failed", error=f"{type(exc).__name__}: {exc}"[:300])
        return 1
    finally:
        schema.index_path(gdir).with_name(SIDE_NAME).unlink(missing_ok=True)
        staged.release(fd)
    return 0




if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
