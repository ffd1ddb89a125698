"""Import every module a request may need before the server accepts a connection.

The porcelain and the core import lazily (a CLI call pays only for what it uses); in a threaded
server the first concurrent requests could otherwise meet a module another thread is still
importing ("Error executing tool add" / 500, issue 24, failure 8). Importing them all up front, once,
costs a fraction of a second at start and removes the race.
"""

from __future__ import annotations


def preload(packages: tuple[str, ...] = ("kyb_cli.api", "kyb_cli.core")) -> list[str]:
    """Import each module under `packages`; the names that could not be imported (an optional
    dependency missing) are returned, not raised: those features report their own errors."""
    import importlib
    import pkgutil

    skipped: list[str] = []
    for name in packages:
        try:
            package = importlib.import_module(name)
        except ImportError:
            skipped.append(name)
            continue
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            if info.name.endswith("__main__"):
                continue
            try:
                importlib.import_module(info.name)
            except Exception:  # noqa: BLE001 - an optional dependency; its feature says so itself
                skipped.append(info.name)
    return skipped
