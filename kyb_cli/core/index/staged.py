"""The staged index: whether history is in yet, the background filler's lock and progress, waiting.

A new index on a big store is built in two stages (snapshot.py, then the background filler,
filler.py, which start_filler runs as FILLER_MODULE: a module of this room, never one above). This
module is what every reader consults about it, cheaply (no subprocess unless a filler must start):

- `history_complete(meta)`   the index's own word (`meta.history`);
- `filler_running(gdir)`     the filler holds `.git/kyb/filler.lock` (flock) while it works: a
                             lock that is free means no filler, so one never runs twice, and one
                             killed half way leaves it free for the next reader to start again;
- `status(gdir)`             its progress, `.git/kyb/filler.json` (stage, done, total, pid);
- `history.wait_for_history` what a historical question does before the history is in, unless the
                             caller asked not to wait (`--no-wait`): it follows the filler's progress,
                             or does the work itself when no filler is running.

Whether a call waits, and whether it answered from an incomplete index, is per call (index/call.py).
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from contextlib import contextmanager
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (~5 ms of every `kyb query`)
if TYPE_CHECKING:
    from typing import Callable, Iterator

from kyb_cli.core.index.schema import history_complete  # noqa: F401 - here since staging made it; read on every query

STAGE_ENV = "KYB_STAGE_AT"
DEFAULT_STAGE_AT = 2000  # commits: from here a full build takes longer than a snapshot (~0.3 s)
BACKGROUND_ENV = "KYB_BACKGROUND"
FILLER_MODULE = "kyb_cli.core.index.filler"  # `python -m` entry point of the detached filler


def stage_at() -> int:
    """Commits from which a missing index is built in stages (KYB_STAGE_AT; 0 = always)."""
    from kyb_cli.core.settings import env_int

    return env_int(STAGE_ENV, DEFAULT_STAGE_AT, minimum=0)


def background_enabled() -> bool:
    """KYB_BACKGROUND=off: never start a filler (a waiting read then does the work itself)."""
    from kyb_cli.core.settings import env_off

    return not env_off(BACKGROUND_ENV)


def kyb_dir(gdir: Path) -> Path:
    """The index's directory (`.git/kyb`, or the user's cache for a read-only store: schema.index_dir)."""
    from kyb_cli.core.index.schema import index_dir

    return index_dir(gdir)


def lock_path(gdir: Path) -> Path:
    return kyb_dir(gdir) / "filler.lock"


def status_path(gdir: Path) -> Path:
    return kyb_dir(gdir) / "filler.json"


def try_lock(gdir: Path) -> int | None:
    """The filler lock's fd when this process got it, else None (held by a running filler)."""
    import fcntl

    path = lock_path(gdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return None
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def release(fd: int) -> None:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def filler_running(gdir: Path) -> bool:
    if not lock_path(gdir).exists():
        return False
    fd = try_lock(gdir)
    if fd is None:
        return True
    release(fd)
    return False


def status(gdir: Path) -> dict:
    try:
        return json.loads(status_path(gdir).read_text())
    except (OSError, ValueError):
        return {}


def write_status(gdir: Path, **fields) -> None:
    path = status_path(gdir)
    tmp = path.with_name(f"{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps({"pid": os.getpid(), "updated_at": int(time.time()), **fields}))
    os.replace(tmp, path)


def stop_path(gdir: Path) -> Path:
    return kyb_dir(gdir) / "filler.stop"


def stop_requested(gdir: Path) -> bool:
    return stop_path(gdir).exists()


@contextmanager
def filler_paused(store_path: Path, timeout: float = 60.0) -> Iterator[None]:
    """Hold the filler lock for a foreground job (`kyb index --embed`): a running filler is asked to
    stop after its current batch, and none starts until the job is done."""
    from kyb_cli.core.canon import headfile

    gdir = headfile.git_dir(Path(store_path))
    kyb_dir(gdir).mkdir(parents=True, exist_ok=True)
    stop = stop_path(gdir)
    stop.touch()
    fd = None
    try:
        deadline = time.monotonic() + timeout
        while fd is None:
            fd = try_lock(gdir)
            if fd is None:
                if time.monotonic() > deadline:
                    break  # the filler did not stop: go on anyway, the work is idempotent
                time.sleep(0.05)
        stop.unlink(missing_ok=True)
        yield
    finally:
        stop.unlink(missing_ok=True)
        if fd is not None:
            release(fd)


def start_filler(store_path: Path, gdir: Path) -> bool:
    """Start the detached filler unless one runs (or KYB_BACKGROUND=off); True when started.

    Two readers may both start one; the second finds the lock taken and exits at once.
    """
    if not background_enabled() or filler_running(gdir):
        return False
    import subprocess

    if _waiting(str(gdir)):
        return False  # this process started one a moment ago: it waits for the answer to go out
    log = kyb_dir(gdir) / "filler.log"
    try:
        with open(log, "ab") as err:
            proc = subprocess.Popen([sys.executable, "-c", _AFTER, str(os.getpid()), str(AFTER_CAP),
                                     str(store_path)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                    start_new_session=True, close_fds=True, cwd=str(store_path))
    except OSError:
        return False
    _launched[str(gdir)] = (proc, time.monotonic())
    return True


AFTER_CAP = 1.0  # seconds a filler waits for the process that started it (a long-lived door lives on)
_AFTER = "import sys; from kyb_cli.core.index.staged import run_after; sys.exit(run_after(sys.argv[1:]))"
_launched: dict = {}  # gdir -> (Popen, when) of the filler this process last started


def _waiting(key: str) -> bool:
    """Whether the filler this process started for `key` is still alive and within its wait (it takes
    the lock only once it runs: a long-lived door's next read must not start a second one meanwhile)."""
    proc, when = _launched.get(key, (None, 0.0))
    if proc is None or proc.poll() is not None:  # poll() also reaps an ended one
        _launched.pop(key, None)
        return False
    return time.monotonic() - when < AFTER_CAP + 1.0


def run_after(argv: list[str]) -> int:
    """The filler's process (argv: the starter's pid, the cap, the store): it waits until the process
    that started it has ended (its answer is out) or the cap has passed, then runs the filler as
    `python -m FILLER_MODULE STORE` would. Started
    before the answer it competed for the 2 cores with the query's own end (issue 39)."""
    import runpy

    wait_for_exit(int(argv[0]), float(argv[1]))
    sys.argv = [FILLER_MODULE, *argv[2:]]
    runpy.run_module(FILLER_MODULE, run_name="__main__", alter_sys=True)  # exits with the filler's code
    return 0


def wait_for_exit(pid: int, limit: float) -> None:
    """Until process `pid` has ended (a zombie counts) or `limit` seconds have passed."""
    deadline = time.monotonic() + limit
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        import select

        try:
            select.select([fd], [], [], limit)
        finally:
            os.close(fd)
        return
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        except OSError:
            pass
        time.sleep(0.02)


def after_write(store_path: Path) -> None:
    """After a commit: with a model and an index, start the filler so the new version gets its
    vector soon (it catches the index up first). Never raises, never waits."""
    try:
        if not background_enabled():
            return
        from kyb_cli.core.canon import headfile
        from kyb_cli.core.embed import locate_model
        from kyb_cli.core.index import schema

        if isinstance(locate_model(), str):
            return  # no model: nothing to embed
        gdir = headfile.git_dir(Path(store_path))
        if schema.index_path(gdir).exists():
            start_filler(Path(store_path), gdir)
    except Exception:  # noqa: BLE001 - the write has succeeded; this is only a head start
        return


def after_clone(store_path: Path) -> None:
    """After `kyb init --clone`: start the filler, which builds the index (snapshot, then history)
    before anyone asks. Never raises, never waits."""
    try:
        from kyb_cli.core.canon import headfile

        gdir = headfile.git_dir(Path(store_path))
        if headfile.head_sha(gdir) is not None:
            start_filler(Path(store_path), gdir)
    except Exception:  # noqa: BLE001 - the clone has succeeded; this is only a head start
        return
