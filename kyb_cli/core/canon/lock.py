"""THE flock helper: the store's writer lock (bounded wait) and non-blocking tries (background sync).

`flock` on a file inside `.git/kyb/` serializes writers across processes (agents in parallel). A
process that dies holding it releases it with its file descriptors, so a lock is never left stale.
"""

from __future__ import annotations

import errno
import os
import time

from kyb_cli.core.errors import LockTimeout

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`

DEFAULT_TIMEOUT = 10.0


def lock_timeout() -> float:
    """`KYB_LOCK_TIMEOUT` seconds, else 10 (a bad value is a usage error, see core/settings.py)."""
    from kyb_cli.core.settings import env_float

    return env_float("KYB_LOCK_TIMEOUT", DEFAULT_TIMEOUT)


def try_lock(path: Path) -> int | None:
    """The fd holding an exclusive lock on `path` now, or None when someone else holds it (no wait).

    The caller closes the fd to release it."""
    import fcntl  # here, not above: every `kyb query` imports this module and never locks (~0.2 ms)

    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError as exc:
        os.close(fd)
        if exc.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        return None


class exclusive:  # noqa: N801 - used as `with exclusive(path):`, like the function it was
    """Hold an exclusive lock on `path`, waiting at most `timeout` seconds, else LockTimeout. A class,
    not `@contextmanager`: every `kyb query` imports this module and contextlib was ~0.5 ms of its
    floor (issue 38)."""

    __slots__ = ("path", "timeout", "fd")

    def __init__(self, path: Path, timeout: float | None = None) -> None:
        self.path, self.timeout = path, timeout

    def __enter__(self) -> None:
        import fcntl  # as in try_lock: a query never locks

        path = self.path
        timeout = lock_timeout() if self.timeout is None else self.timeout
        path.parent.mkdir(parents=True, exist_ok=True)
        self.fd = fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + timeout
            delay = 0.005
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES):
                        raise
                    if time.monotonic() >= deadline:
                        holder = _holder(fd)
                        raise LockTimeout(
                            f"the store is locked by another writer{holder} for more than {timeout:g} s; "
                            "nothing was written — try again, or raise KYB_LOCK_TIMEOUT",
                            path=str(path),
                        ) from None
                    time.sleep(delay)
                    delay = min(delay * 2, 0.05)
        except BaseException:
            os.close(fd)
            raise
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # who holds it, for the timeout message
        except OSError:
            pass  # a full disk: the lock holds all the same

    def __exit__(self, *exc) -> None:
        import fcntl  # loaded by __enter__: a dict lookup

        try:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        finally:
            os.close(self.fd)


def _holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


def pid_alive(pid: int) -> bool:
    """True when process `pid` exists on this machine (so its temp files and locks are not leftovers).

    Our own pid is alive; a pid the kernel cannot name (0, negative, too large) is not a process."""
    if pid == os.getpid():
        return True
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OverflowError:
        return False
    except PermissionError:  # it exists, owned by someone else
        return True
    return True
