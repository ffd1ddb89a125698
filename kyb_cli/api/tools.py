"""Tools over a store: check (the linter), export, doctor, agent instruction files, the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def check_store(root: Path):
    from kyb_cli.core.tools.check import check_store as core

    return core(root)


def check_paths(paths):
    from kyb_cli.core.tools.check import check_paths as core

    return core(paths)


def enclosing_store(start: Path) -> Path | None:
    from kyb_cli.core.tools.check import enclosing_store as core

    return core(start)


def export_rows(store_path: Path, at: str | None = None):
    from kyb_cli.core.tools.export import export_rows as core

    return core(store_path, at)


def diagnose(store_path: Path, load_model: bool = True) -> dict:
    from kyb_cli.core.tools.doctor import diagnose as core

    return core(store_path, load_model)


def found_agents(*args: Any, **kwargs: Any):
    from kyb_cli.core.tools.agents import found_agents as core

    return core(*args, **kwargs)


def known_agents(*args: Any, **kwargs: Any):
    from kyb_cli.core.tools.agents import known_agents as core

    return core(*args, **kwargs)


def plan_install(*args: Any, **kwargs: Any):
    from kyb_cli.core.tools.agents import plan_install as core

    return core(*args, **kwargs)


def plan_uninstall(*args: Any, **kwargs: Any):
    from kyb_cli.core.tools.agents import plan_uninstall as core

    return core(*args, **kwargs)


def apply_agent_changes(changes) -> None:
    from kyb_cli.core.tools.agents import apply

    apply(changes)


def model_pull(*args: Any, **kwargs: Any) -> dict:
    from kyb_cli.core.embed.pull import pull

    return pull(*args, **kwargs)


def model_import(*args: Any, **kwargs: Any) -> dict:
    from kyb_cli.core.embed.pull import import_model

    return import_model(*args, **kwargs)


def model_status() -> dict:
    from kyb_cli.core.embed.pull import status

    return status()


def log(store_path: Path, *, since: str | None = None, until: str | None = None, agent: str = "",
        author: str = "", kind: str = "", key: str = "", limit: int = 50) -> list[dict[str, Any]]:
    """The store's activity, newest first (`kyb log`): every commit, kyb's, by hand or a merge.

    `since`/`until` take what `--as-of` takes (a date, a datetime, a revision)."""
    from kyb_cli.core.times.parse import END, START, parse_time
    from kyb_cli.core.tools.activity import log as core

    lo = parse_time(since, bound=START, store_path=store_path) if since else None
    hi = parse_time(until, bound=END, store_path=store_path) if until else None
    return core(store_path, since=lo, until=hi, agent=agent, author=author, kind=kind, key=key, limit=limit)
