"""Where kyb keeps things of the user's: config, data (the default store, models), cache.

platformdirs is imported only when asked, so a query against an explicit store does not pay for it.
On Linux it honours XDG_CONFIG_HOME / XDG_DATA_HOME / XDG_CACHE_HOME, which is how tests isolate.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from kyb_cli.core.known import made_path

APP = "kyb"


def _xdg(var: str, fallback: str) -> Path | None:
    """On Linux, the XDG rule platformdirs applies, without importing it (every query asks where
    the model and the vector cache are)."""
    if not sys.platform.startswith("linux"):
        return None
    value = os.environ.get(var, "").strip()
    return made_path(os.path.join(value or os.path.expanduser(fallback), APP))  # a door asks every answer


def config_dir() -> Path:
    fast = _xdg("XDG_CONFIG_HOME", "~/.config")
    if fast is not None:
        return fast
    import platformdirs

    return Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    fast = _xdg("XDG_DATA_HOME", "~/.local/share")
    if fast is not None:
        return fast
    import platformdirs

    return Path(platformdirs.user_data_dir(APP))


def cache_dir() -> Path:
    fast = _xdg("XDG_CACHE_HOME", "~/.cache")
    if fast is not None:
        return fast
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP))


def default_store_path() -> Path:
    return data_dir() / "store"
