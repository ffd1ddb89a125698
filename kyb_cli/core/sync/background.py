"""Automatic sync after writes (`sync.auto = true` in config.toml): one detached background sync.

The porcelain (kyb_cli/api) calls `after_write` once a write committed; it never blocks the answer
and never raises. One background sync runs at a time per store (`.git/kyb/sync.lock`); a request
arriving meanwhile makes the running one go again (`sync.again`). Outcomes go to `.git/kyb/sync.log`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from kyb_cli.core.canon.attribution import Attribution
from kyb_cli.core.canon.lock import try_lock
from kyb_cli.core.canon.repo import Store
from kyb_cli.core.config.file import load_config
from kyb_cli.core.errors import KybError
from kyb_cli.core.sync.flow import sync
from kyb_cli.core.sync.remote import remote_url

LOG_NAME = "sync.log"
LOG_LIMIT = 512 * 1024


def log_path(store: Store) -> Path:
    return store.kyb_dir / LOG_NAME


def _log(store: Store, entry: dict[str, Any]) -> None:
    path = log_path(store)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_LIMIT:
            os.replace(path, path.with_suffix(".log.1"))
        entry = {"at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "pid": os.getpid(), **entry}
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(entry, ensure_ascii=False) + "\n")
    except OSError:
        pass


def auto_enabled() -> bool:
    section = load_config().get("sync")
    return isinstance(section, dict) and section.get("auto") is True


def after_write(store: Store) -> None:
    """With `sync.auto = true`, start a detached background sync; never raises, never waits for it."""
    try:
        if remote_url(store) is None or not auto_enabled():
            return
        if _background_running(store):
            return
        import sys

        log = open(log_path(store), "a", encoding="utf-8")
        try:
            subprocess.Popen(
                [sys.executable, "-m", "kyb_cli", "sync", "--background", "--store", str(store.path)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True, close_fds=True, cwd=str(store.path),
            )
        finally:
            log.close()
    except Exception as exc:  # noqa: BLE001 - the write already succeeded; a failed start is only logged
        _log(store, {"ok": False, "error": f"could not start background sync: {exc}"})


def _background_running(store: Store) -> bool:
    """True when a background sync holds the sync lock and has been asked to go again (no new process)."""
    lock_path = store.kyb_dir / "sync.lock"
    fd = try_lock(lock_path)
    if fd is not None:
        os.close(fd)
        return False
    (store.kyb_dir / "sync.again").touch()
    fd = try_lock(lock_path)  # it may have finished before seeing our request: then start one
    if fd is not None:
        os.close(fd)
        return False
    return True


def background_sync(store: Store, attribution: Attribution | None = None) -> None:
    """One background sync at a time per store; a request arriving meanwhile makes the running one go again."""
    again = store.kyb_dir / "sync.again"
    store.kyb_dir.mkdir(parents=True, exist_ok=True)
    while True:
        fd = try_lock(store.kyb_dir / "sync.lock")
        if fd is None:
            again.touch()
            return
        try:
            again.unlink(missing_ok=True)
            try:
                result = sync(store, attribution=attribution)
                _log(store, {"ok": True, "result": result})
            except KybError as exc:
                _log(store, {"ok": False, "exit": exc.exit_code, "error": exc.message})
            except Exception as exc:  # noqa: BLE001 - a background process has nobody else to tell
                _log(store, {"ok": False, "error": f"{type(exc).__name__}: {exc}"})
        finally:
            os.close(fd)
        if not again.exists():
            return
