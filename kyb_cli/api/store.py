"""Which store a call works on, opening it, and THE "create the default store on first use" rule."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from pathlib import Path  # pathlib only for annotations: importing it (urllib.parse, ipaddress) was ~4 ms of a `kyb query`


def locate(explicit: str | os.PathLike[str] | None = None, *, cwd: Path | None = None):
    """Which store a call works on: `--store PATH` > `KYB_STORE` > the nearest `.kyb.toml` (from `cwd`)
    > the default store. Returns a StoreLocation (`path`, `source`, `is_default`); nothing is created.
    Raises StoreError (exit 4: a `.kyb.toml` that is not TOML or names no store)."""
    from kyb_cli.core.config.locate import locate as core_locate

    return core_locate(explicit, cwd=cwd)


def _ensure_default(location) -> None:
    """The default store is created on first use; any other missing store is an error of its reader."""
    if location.is_default and not os.path.exists(os.path.join(location.where, ".git")):
        from kyb_cli.core.canon.repo import open_store as core_open

        core_open(location.path, create=True)


def open_store(explicit: str | os.PathLike[str] | None = None):
    """The Store this call works on (pygit2; `explicit` as `--store`); the default store is created on
    first use. Raises StoreError (exit 4: not a store, corrupt)."""
    from kyb_cli.core.canon.repo import Store

    location = locate(explicit)
    _ensure_default(location)
    return Store(location.path)


def store_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The path of the store this call works on, for readers (no pygit2 unless the default store
    must be created first). Raises StoreError (exit 4) as `locate` and `open_store` do."""
    from kyb_cli.core.known import made_path

    return made_path(_where(explicit))


def _where(explicit: str | os.PathLike[str] | None = None) -> str:
    """`store_path` as a string: the one-shot query path builds no Path (issue 38)."""
    location = locate(explicit)
    _ensure_default(location)
    return location.where


def init_store(path: Path):
    """`kyb init PATH`: create a store (a Git repository on branch main with one empty commit) or open
    the one there. Returns the Store. Raises StoreError (exit 4: PATH is not empty and not a store, or
    cannot be written)."""
    from pathlib import Path

    from kyb_cli.core.canon.repo import init_store as core_init

    return core_init(Path(path))


def git_dir(store_path: Path) -> Path:
    """The store's Git directory (StoreError when `store_path` is not a store)."""
    from kyb_cli.core.canon.headfile import git_dir as core_git_dir

    return core_git_dir(store_path)


def audit_label(value: str) -> str:
    """A caller's label as an audit line may keep it: the label, or a placeholder when it looks like
    a secret (the scanner commits use). Raises nothing."""
    from kyb_cli.core.canon.attribution import audit_label as kept

    return kept(value)


def attribution(transport: str = "cli", *, environ: dict[str, str] | None = None):
    """Who is writing, for the commit trailers: an Attribution (agent, session, workspace, transport)
    detected from `environ` (default: this process's environment). Raises nothing."""
    from kyb_cli.core.canon.attribution import detect

    return detect(transport, environ=environ)
